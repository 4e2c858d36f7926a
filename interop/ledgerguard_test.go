package interop

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guardLedger is a ledger as crucible's build skill writes it, with the
// four phases' statuses.
func guardLedger(id string, status ...string) string {
	s := "# Build Gate Ledger\nRun: 2026-04-13T14:00:00\n"
	if id != "" {
		s += "PipelineID: " + id + "\n"
	}
	s += "Goal: Test goal\nMode: feature\n"
	for i, name := range []string{"Design", "Plan", "Execute", "Completion"} {
		s += fmt.Sprintf("\n## Phase %d: %s\nStatus: %s\n", i+1, name, status[i])
	}
	return s
}

// Payloads in Claude Code's shape, and in the older one (tool, input).
func writePayload(path, content string) string {
	return payload(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write",
		"tool_input": map[string]any{"file_path": path, "content": content}})
}

func editPayload(path, old, new string) string {
	return payload(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Edit",
		"tool_input": map[string]any{"file_path": path, "old_string": old, "new_string": new, "replace_all": false}})
}

func legacyPayload(tool, path string, input map[string]any) string {
	input["file_path"] = path
	return payload(map[string]any{"tool": tool, "input": input})
}

func payload(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// marker is a verdict marker in quality-gate/, as crucible's quality gate
// writes it.
type marker struct{ run, pipeline, verdict, phase string }

// TestGuardLedgerWrite is crucible's own suite for its gate-ledger-guard
// hook (hooks/tests/test-gate-ledger-guard.sh in raddue/crucible, 26
// cases), case by case, through ParseFileWrite and GuardLedgerWrite; then
// what the guard does beyond it. The ledger lives where crucible keeps it,
// ~/.claude/projects/<hash>/memory/build-gate-ledger.md, its markers in
// quality-gate/ beside it.
func TestGuardLedgerWrite(t *testing.T) {
	const (
		ledgerName = "build-gate-ledger.md"
		blocked    = true
	)
	inProgress := func(id string) string {
		return guardLedger(id, "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED", "NOT_STARTED")
	}
	passOne := func(id string) string { return guardLedger(id, "PASS", "NOT_STARTED", "NOT_STARTED", "NOT_STARTED") }
	tests := []struct {
		name     string
		existing string   // the ledger on disk; "" for none
		markers  []marker // in quality-gate/
		qgDir    bool     // quality-gate/ exists (it does when markers are given)
		payload  func(ledger string) string
		blocked  bool
		msg      string // in the reason, when blocked
	}{
		// Crucible's cases, numbered as its suite numbers them.
		{name: "01 a write of another file", payload: func(string) string { return writePayload("/some/other/file.md", "hello world") }},
		{name: "02 a ledger write with no PASS",
			payload: func(l string) string { return writePayload(l, inProgress("build-test-001")) }},
		{name: "03 a PASS with its verdict marker", existing: inProgress("build-test-002"),
			markers: []marker{{"run-001", "build-test-002", "PASS", "design"}},
			payload: func(l string) string { return writePayload(l, passOne("build-test-002")) }},
		{name: "04 a PASS with no verdict marker", existing: inProgress("build-test-003"), qgDir: true,
			payload: func(l string) string { return writePayload(l, passOne("build-test-003")) },
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict: no marker in "},
		{name: "05 a PASS whose marker names another PipelineID", existing: inProgress("build-test-004"),
			markers: []marker{{"run-002", "build-WRONG-id", "PASS", "design"}},
			payload: func(l string) string { return writePayload(l, passOne("build-test-004")) },
			blocked: blocked, msg: "PipelineID: build-test-004"},
		// Crucible's guard lets this write through when jq is missing, as
		// it cannot read the payload without it. Ours has no such
		// dependency, so the same write is judged, and blocked.
		{name: "06 a PASS with no marker (crucible: jq missing)",
			payload: func(l string) string { return writePayload(l, passOne("build-test-005")) },
			blocked: blocked, msg: "no gate verdict"},
		{name: "07 a PASS with no quality-gate directory", existing: inProgress("build-test-006"),
			payload: func(l string) string { return writePayload(l, passOne("build-test-006")) },
			blocked: blocked, msg: "no gate verdict"},
		{name: "08 a payload that is not JSON", payload: func(string) string { return "this is not json at all {{{" }},
		{name: "09 Phase 3 COMPLETE", existing: guardLedger("build-test-007", "PASS", "PASS", "IN_PROGRESS", "NOT_STARTED"),
			payload: func(l string) string {
				return writePayload(l, guardLedger("build-test-007", "PASS", "PASS", "COMPLETE", "NOT_STARTED"))
			}},
		{name: "10 a PASS whose marker is another phase's", existing: guardLedger("build-test-008", "PASS", "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED"),
			markers: []marker{{"run-003", "build-test-008", "PASS", "design"}},
			payload: func(l string) string {
				return writePayload(l, guardLedger("build-test-008", "PASS", "PASS", "NOT_STARTED", "NOT_STARTED"))
			},
			blocked: blocked, msg: "Phase 2 PASS with no gate verdict: no marker in .* says Verdict: PASS, Phase: plan, PipelineID: build-test-008"},
		{name: "11 Phase 3 PASS, even with a marker", existing: guardLedger("build-test-009", "PASS", "PASS", "IN_PROGRESS", "NOT_STARTED"),
			markers: []marker{{"run-004", "build-test-009", "PASS", "execute"}},
			payload: func(l string) string {
				return writePayload(l, guardLedger("build-test-009", "PASS", "PASS", "PASS", "NOT_STARTED"))
			},
			blocked: blocked, msg: "Phase 3 PASS: Phase 3 ends COMPLETE, not PASS"},
		{name: "12 a first run: no ledger, no quality-gate directory",
			payload: func(l string) string { return writePayload(l, passOne("build-test-010")) },
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "13 INFERRED to PASS with no marker", existing: guardLedger("build-test-011", "INFERRED", "NOT_STARTED", "NOT_STARTED", "NOT_STARTED"), qgDir: true,
			payload: func(l string) string { return writePayload(l, passOne("build-test-011")) },
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "14 an Edit that writes a PASS", existing: inProgress("build-test-012"), qgDir: true,
			payload: func(l string) string { return editPayload(l, "Status: IN_PROGRESS", "Status: PASS") },
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "15 a PASS with a trailing space", existing: inProgress("build-test-013"), qgDir: true,
			payload: func(l string) string {
				return writePayload(l, strings.Replace(passOne("build-test-013"), "Status: PASS\n", "Status: PASS \n", 1))
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "16 a PASS with no PipelineID", qgDir: true,
			payload: func(l string) string { return writePayload(l, passOne("")) },
			blocked: blocked, msg: "a PASS in a ledger with no PipelineID line"},
		{name: "17 a PASS kept when the PipelineID changes", existing: passOne("build-OLD-pipeline"),
			markers: []marker{{"run-005", "build-OLD-pipeline", "PASS", "design"}},
			payload: func(l string) string { return writePayload(l, passOne("build-NEW-pipeline")) },
			blocked: blocked, msg: "PipelineID: build-NEW-pipeline"},
		{name: "18 a malformed phase header", existing: inProgress("build-test-018"), qgDir: true,
			payload: func(l string) string {
				return writePayload(l, strings.Replace(guardLedger("build-test-018", "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED", "PASS"),
					"## Phase 4: Completion", "## Phase 4:Completion", 1))
			},
			blocked: blocked, msg: "Phase 4 PASS with no gate verdict"},
		{name: "19 an indented status", existing: inProgress("build-test-019"), qgDir: true,
			payload: func(l string) string {
				return writePayload(l, strings.Replace(passOne("build-test-019"), "Status: PASS", "   \tStatus: PASS", 1))
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "20 a marker whose verdict is not PASS", existing: inProgress("build-test-020"),
			markers: []marker{{"run-020", "build-test-020", "FAIL", "design"}},
			payload: func(l string) string { return writePayload(l, passOne("build-test-020")) },
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "21 the legacy payload shape: Write", existing: inProgress("build-test-021"), qgDir: true,
			payload: func(l string) string {
				return legacyPayload("Write", l, map[string]any{"content": passOne("build-test-021")})
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "22 the legacy payload shape: Edit", existing: inProgress("build-test-022"), qgDir: true,
			payload: func(l string) string {
				return legacyPayload("Edit", l, map[string]any{"old_string": "Status: IN_PROGRESS", "new_string": "Status: PASS"})
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		// A line-by-line simulation of the edit finds no line equal to the
		// old text when the file's is indented: Claude Code replaces the
		// text inside the line all the same.
		{name: "23 an Edit whose old text is inside an indented line",
			existing: strings.Replace(inProgress("build-test-023"), "Status: IN_PROGRESS", "  Status: IN_PROGRESS", 1), qgDir: true,
			payload: func(l string) string { return editPayload(l, "Status: IN_PROGRESS", "Status: PASS") },
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		// awk -v reads backslash escapes in the old text, so the
		// simulation matched nothing; the text is literal.
		{name: "24 an Edit whose old text holds a backslash",
			existing: strings.Replace(inProgress("build-test-024"), "Goal: Test goal", `Goal: fix C:\new\table`, 1), qgDir: true,
			payload: func(l string) string {
				return editPayload(l, "Goal: fix C:\\new\\table\nMode: feature\n\n## Phase 1: Design\nStatus: IN_PROGRESS",
					"Goal: fix C:\\new\\table\nMode: feature\n\n## Phase 1: Design\nStatus: PASS")
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		// An old text that already says PASS (Phase 1's) carried a new one
		// (Phase 2's) past a guard that let any edit whose old text had a
		// PASS through.
		{name: "25 an Edit whose old text spans phases", existing: guardLedger("build-test-025", "PASS", "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED"),
			markers: []marker{{"run-025", "build-test-025", "PASS", "design"}},
			payload: func(l string) string {
				return editPayload(l, "Status: PASS\n\n## Phase 2: Plan\nStatus: IN_PROGRESS", "Status: PASS\n\n## Phase 2: Plan\nStatus: PASS")
			},
			blocked: blocked, msg: "Phase 2 PASS with no gate verdict"},
		{name: "26 a double-spaced phase header", existing: guardLedger("build-test-026", "PASS", "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED"),
			markers: []marker{{"run-026", "build-test-026", "PASS", "design"}},
			payload: func(l string) string {
				return writePayload(l, strings.Replace(guardLedger("build-test-026", "PASS", "PASS", "NOT_STARTED", "NOT_STARTED"),
					"## Phase 2: Plan", "##  Phase  2:  Plan", 1))
			},
			blocked: blocked, msg: "Phase 2 PASS with no gate verdict"},

		// Beyond crucible's suite.
		{name: "an Edit that writes a PASS with its marker", existing: inProgress("build-x1"),
			markers: []marker{{"r", "build-x1", "PASS", "design"}},
			payload: func(l string) string { return editPayload(l, "Status: IN_PROGRESS", "Status: PASS") }},
		{name: "an Edit elsewhere in a ledger that has its PASS already", existing: passOne("build-x2"),
			payload: func(l string) string { return editPayload(l, "Goal: Test goal", "Goal: Other goal") }},
		{name: "a second PASS line in a phase that passed", existing: guardLedger("build-x3", "PASS", "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED"),
			markers: []marker{{"r", "build-x3", "PASS", "design"}},
			payload: func(l string) string {
				return editPayload(l, "## Phase 2: Plan\nStatus: IN_PROGRESS", "## Phase Two: Plan\nStatus: PASS")
			},
			blocked: blocked, msg: "outside the four phase blocks"},
		{name: "a PASS dressed up", existing: inProgress("build-x4"), qgDir: true,
			payload: func(l string) string {
				return writePayload(l, strings.Replace(inProgress("build-x4"), "Status: IN_PROGRESS", "- **status:** pass (verified)", 1))
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "a PASS in a phase that does not exist", existing: inProgress("build-x5"), qgDir: true,
			payload: func(l string) string {
				return writePayload(l, inProgress("build-x5")+"\n## Phase 5: More\nStatus: PASS\n")
			},
			blocked: blocked, msg: "outside the four phase blocks"},
		{name: "a ledger named in another case", existing: inProgress("build-x6"), qgDir: true,
			payload: func(l string) string {
				return writePayload(filepath.Join(filepath.Dir(l), "Build-Gate-Ledger.MD"), passOne("build-x6"))
			},
			blocked: blocked, msg: "Phase 1 PASS with no gate verdict"},
		{name: "an Edit whose old text is not in the ledger", existing: inProgress("build-x7"), qgDir: true,
			payload: func(l string) string { return editPayload(l, "Status: SOMETHING", "Status: PASS") },
			blocked: blocked, msg: "whose old text the guard cannot find"},
		{name: "an Edit of text not in the ledger, with no PASS", existing: inProgress("build-x8"),
			payload: func(l string) string { return editPayload(l, "Status: SOMETHING", "Status: FAIL") }},
		{name: "replace_all: every phase PASS", existing: guardLedger("build-x9", "IN_PROGRESS", "IN_PROGRESS", "NOT_STARTED", "NOT_STARTED"),
			markers: []marker{{"r", "build-x9", "PASS", "design"}},
			payload: func(l string) string {
				return payload(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Edit",
					"tool_input": map[string]any{"file_path": l, "old_string": "IN_PROGRESS", "new_string": "PASS", "replace_all": true}})
			},
			blocked: blocked, msg: "Phase 2 PASS with no gate verdict"},
		{name: "a relative path, from the payload's cwd", existing: inProgress("build-x10"),
			markers: []marker{{"r", "build-x10", "PASS", "design"}},
			payload: func(l string) string {
				return payload(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": filepath.Dir(l),
					"tool_input": map[string]any{"file_path": "build-gate-ledger.md", "content": passOne("build-x10")}})
			}},
		{name: "a path under ~", existing: inProgress("build-x11"),
			markers: []marker{{"r", "build-x11", "PASS", "design"}},
			payload: func(string) string {
				return writePayload("~/.claude/projects/abc123test/memory/build-gate-ledger.md", passOne("build-x11"))
			}},
		{name: "a PostToolUse of a Write is not judged: the file is written",
			payload: func(l string) string {
				return payload(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Write",
					"tool_input": map[string]any{"file_path": l, "content": passOne("build-x12")}})
			}},
		{name: "another tool", payload: func(l string) string {
			return payload(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "cat " + l}})
		}},
		{name: "no file_path", payload: func(string) string {
			return payload(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": map[string]any{"content": "Status: PASS"}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			memory := filepath.Join(home, ".claude", "projects", "abc123test", "memory")
			qg := filepath.Join(memory, MarkerDir)
			if err := os.MkdirAll(memory, 0o755); err != nil {
				t.Fatal(err)
			}
			l := filepath.Join(memory, ledgerName)
			if tt.existing != "" {
				writeFile(t, l, tt.existing)
			}
			if tt.qgDir || tt.markers != nil {
				if err := os.Mkdir(qg, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range tt.markers {
				writeFile(t, filepath.Join(qg, "gate-verdict-"+m.run+".md"), fmt.Sprintf(
					"Verdict: %s\nPhase: %s\nPipelineID: %s\nRounds: 3\nFinalScore: 95\nTimestamp: 2026-04-13T14:30:00\nRunID: %s\n",
					m.verdict, m.phase, m.pipeline, m.run))
			}
			var err error
			if w, ok := ParseFileWrite([]byte(tt.payload(l))); ok {
				err = GuardLedgerWrite(w, home)
			}
			var ge *GuardError
			switch {
			case !tt.blocked && err != nil:
				t.Fatalf("blocked: %v", err)
			case tt.blocked && !errors.As(err, &ge):
				t.Fatalf("not blocked (%v)", err)
			case tt.blocked && !matches(t, tt.msg, ge.Msg):
				t.Fatalf("reason %q, want it to hold %q", ge.Msg, tt.msg)
			}
			// The guard writes nothing.
			if b, _ := os.ReadFile(l); string(b) != tt.existing {
				t.Fatalf("the ledger changed: %q", b)
			}
		})
	}
}

func matches(t *testing.T, pattern, s string) bool {
	t.Helper()
	ok, err := regexp.MatchString(pattern, s)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParseFileWrite reads each payload shape the guard takes.
func TestParseFileWrite(t *testing.T) {
	tests := []struct {
		payload string
		want    FileWrite
		ok      bool
	}{
		{`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/m/build-gate-ledger.md","content":"x"},"tool_use_id":"t"}`,
			FileWrite{Tool: "Write", Path: "/m/build-gate-ledger.md", Cwd: "/w", Content: "x"}, true},
		{`{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"f","old_string":"a","new_string":"b","replace_all":true}}`,
			FileWrite{Tool: "Edit", Path: "f", Old: "a", New: "b", ReplaceAll: true}, true},
		{`{"tool":"Write","input":{"file_path":"f","content":"x"}}`, FileWrite{Tool: "Write", Path: "f", Content: "x"}, true},
		{`{"tool":"Edit","input":{"file_path":"f","old_string":"a","new_string":"b"}}`, FileWrite{Tool: "Edit", Path: "f", Old: "a", New: "b"}, true},
		{`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"f","content":7}}`, FileWrite{Tool: "Write", Path: "f"}, true},
		{`{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"f","content":"x"}}`, FileWrite{}, false},
		{`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"f"}}`, FileWrite{}, false},
		{`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":3}}`, FileWrite{}, false},
		{`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":""}}`, FileWrite{}, false},
		{`{"hook_event_name":"PreToolUse","tool_name":"Write"}`, FileWrite{}, false},
		{`[1]`, FileWrite{}, false},
		{`{`, FileWrite{}, false},
		{``, FileWrite{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseFileWrite([]byte(tt.payload))
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("ParseFileWrite(%s) = %+v, %v; want %+v, %v", tt.payload, got, ok, tt.want, tt.ok)
		}
	}
}
