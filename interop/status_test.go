package interop

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// stGolden is a status file in exactly the layout Render writes, after the
// Status File Format of crucible's build skill.
const stGolden = `# Pipeline Status
**Updated:** 2026-04-13T13:05:12Z
**Started:** 2026-04-13T11:53:40Z
**Skill:** build
**Phase:** 3 — Execute (Autonomous)
**Health:** YELLOW
**Suggested Action:** Code review looping on Task 2. Check recent events for recurring patterns.
**Elapsed:** 1h 12m

## Recent Events
- [13:05] Task 2 code review pass 3 dispatched
- [12:58] Task 2 code review pass 2: 2 Significant findings
- [12:47] Task 1 DONE (12m)
- [12:45] Checkpoint pre-wave-3 created
- [12:31] Task 2 dispatched to implementer (T2)

## Task Progress
| # | Task | Tier | Status | Duration |
|---|------|------|--------|----------|
| 1 | Auth middleware | T3 | DONE | 12m |
| 2 | Route handlers | T2 | IN REVIEW (code, pass 3) | 18m+ |
| 3 | Database layer | T1 | PENDING | — |

## Quality Gates
- Design: PASSED (2 rounds)
- Plan: PASSED (1 round)
- Task tiers: 1x T1, 1x T2, 1x T3
- Code: not yet reached

## Checkpoints
- Last checkpoint: pre-wave-3 (12:45:30)
- Total checkpoints: 7
- Shadow repo: healthy

## Wave Plan
Wave 3 of 4:
  - Task 2 (in review)

  - Task 3 (pending)

## Compression State
Goal: Add rate limiting to the public API.
Per API key, configurable in config.yaml.
Key Decisions:
- [DEC-1] Token bucket per API key: batch clients burst by design
- [DEC-2] Limits live in config.yaml: ops already edit it at deploy time
Active Constraints:
- No new runtime dependencies
- p99 latency of the middleware under 5 ms
Next Steps:
1. Finish the Task 2 code review
2. Dispatch Task 3 (Database layer)
3. Implementation gate, then Phase 4
`

var stGoldenValue = Status{
	Updated:         "2026-04-13T13:05:12Z",
	Started:         "2026-04-13T11:53:40Z",
	Skill:           "build",
	Phase:           "3 — Execute (Autonomous)",
	Health:          "YELLOW",
	SuggestedAction: "Code review looping on Task 2. Check recent events for recurring patterns.",
	Elapsed:         "1h 12m",
	RecentEvents: []StatusEvent{
		{"13:05", "Task 2 code review pass 3 dispatched"},
		{"12:58", "Task 2 code review pass 2: 2 Significant findings"},
		{"12:47", "Task 1 DONE (12m)"},
		{"12:45", "Checkpoint pre-wave-3 created"},
		{"12:31", "Task 2 dispatched to implementer (T2)"},
	},
	Tasks: []StatusTask{
		{"1", "Auth middleware", "T3", "DONE", "12m"},
		{"2", "Route handlers", "T2", "IN REVIEW (code, pass 3)", "18m+"},
		{"3", "Database layer", "T1", "PENDING", "—"},
	},
	QualityGates: []string{"Design: PASSED (2 rounds)", "Plan: PASSED (1 round)", "Task tiers: 1x T1, 1x T2, 1x T3", "Code: not yet reached"},
	Checkpoints:  []string{"Last checkpoint: pre-wave-3 (12:45:30)", "Total checkpoints: 7", "Shadow repo: healthy"},
	Compression: Compression{
		Goal: "Add rate limiting to the public API.\nPer API key, configurable in config.yaml.",
		KeyDecisions: []string{
			"[DEC-1] Token bucket per API key: batch clients burst by design",
			"[DEC-2] Limits live in config.yaml: ops already edit it at deploy time",
		},
		Constraints: []string{"No new runtime dependencies", "p99 latency of the middleware under 5 ms"},
		NextSteps:   []string{"Finish the Task 2 code review", "Dispatch Task 3 (Database layer)", "Implementation gate, then Phase 4"},
	},
	Extra: []StatusSection{{Title: "Wave Plan", Lines: []string{"Wave 3 of 4:", "  - Task 2 (in review)", "", "  - Task 3 (pending)"}}},
}

// stHead is a valid title and header (lines 1-7).
const stHead = "# Pipeline Status\n**Updated:** u\n**Started:** s\n**Skill:** build\n**Phase:** 1\n**Health:** GREEN\n**Elapsed:** 0m\n"

func stBase() Status {
	return Status{Updated: "u", Started: "s", Skill: "build", Phase: "1", Health: "GREEN", Elapsed: "0m"}
}

func stParse(t *testing.T, s string) Status {
	t.Helper()
	st, err := ParseStatus([]byte(s))
	if err != nil {
		t.Fatalf("ParseStatus: %v\ninput:\n%s", err, s)
	}
	return st
}

func TestStatusGolden(t *testing.T) {
	if got := string(stGoldenValue.Render()); got != stGolden {
		t.Errorf("Render:\n%s\nwant\n%s", got, stGolden)
	}
	if s := stParse(t, stGolden); !reflect.DeepEqual(s, stGoldenValue) {
		t.Errorf("ParseStatus:\n got %#v\nwant %#v", s, stGoldenValue)
	}
}

func TestParseStatusValid(t *testing.T) {
	with := func(mod func(s *Status)) Status {
		s := stBase()
		mod(&s)
		return s
	}
	tests := []struct {
		name string
		in   string
		want Status
	}{
		{"header only", stHead, stBase()},
		{"title only", "# Pipeline Status", Status{}},
		{"empty header values, sections empty",
			"# Pipeline Status\n**Updated:**\n**Health:**\n## Recent Events\n## Task Progress\n## Quality Gates\n## Checkpoints\n## Compression State\n",
			Status{}},
		{"header in another order, CRLF, byte order mark, blank lines",
			"\ufeff\r\n  # Pipeline Status  \r\n\r\n**Elapsed:**   3m \r\n**Health:** RED\r\n\r\n**Suggested Action:** Stop.\r\n**Skill:** debugging\r\n",
			Status{Elapsed: "3m", Health: "RED", SuggestedAction: "Stop.", Skill: "debugging"}},
		{"suggested action without health",
			"# Pipeline Status\n**Suggested Action:** look\n",
			Status{SuggestedAction: "look"}},
		{"empty suggested action with GREEN",
			stHead + "**Suggested Action:**\n",
			stBase()},
		{"recent events",
			stHead + "## Recent Events\n\n- [12:00] one\n-  [ 11:59 ]   two  \n- [11:58]\n- [12:45:30]three\n- [[x]] y\n",
			with(func(s *Status) {
				s.RecentEvents = []StatusEvent{{"12:00", "one"}, {"11:59", "two"}, {"11:58", ""}, {"12:45:30", "three"}, {"[x", "] y"}}
			})},
		{"task table",
			stHead + "## Task Progress\n\n| # | task | TIER | Status | Duration |\n| :-- | --- | :-: | ---: | - |\n\n" +
				"| 1 | a \\| b | T1 | DONE | 1m |\n|2|b|T2|PENDING||\n| 3 | c\\ | | | \\|\n| | | | | |\n| # | Task | Tier | Status | Duration |\n",
			with(func(s *Status) {
				s.Tasks = []StatusTask{{"1", "a | b", "T1", "DONE", "1m"}, {"2", "b", "T2", "PENDING", ""}, {"3", `c\`, "", "", "|"}, {}, {"#", "Task", "Tier", "Status", "Duration"}}
			})},
		{"task table without rows", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n|---|---|---|---|---|\n", stBase()},
		{"gates and checkpoints",
			stHead + "## Checkpoints\n- Total checkpoints: 0\n-\n## Quality Gates\n- Design: PASSED (2 rounds)\n  - Plan: - nested\n",
			with(func(s *Status) {
				s.QualityGates = []string{"Design: PASSED (2 rounds)", "Plan: - nested"}
				s.Checkpoints = []string{"Total checkpoints: 0", ""}
			})},
		{"extra sections in order, verbatim",
			stHead + "## Siege\n\n\n  | a | b |\n\nprose **bold:** x\n# hash\n- [12:00] looks like an event\n\n## Compression State\n## Siege\n### sub\n\t\n## Empty\n\n\n## recent events\nx\n",
			with(func(s *Status) {
				s.Extra = []StatusSection{
					{"Siege", []string{"  | a | b |", "", "prose **bold:** x", "# hash", "- [12:00] looks like an event"}},
					{"Siege", []string{"### sub"}},
					{"Empty", nil},
					{"recent events", []string{"x"}},
				}
			})},
		{"compression labels in another order",
			stHead + "## Compression State\nNext Steps:\n1. s\nActive Constraints:\n- c\nKey Decisions:\n- d\nGoal: g\n",
			with(func(s *Status) {
				s.Compression = Compression{Goal: "g", KeyDecisions: []string{"d"}, Constraints: []string{"c"}, NextSteps: []string{"s"}}
			})},
		{"ten key decisions",
			stHead + "## Compression State\nKey Decisions:\n" + strings.Repeat("- d\n", 10),
			with(func(s *Status) {
				s.Compression.KeyDecisions = strings.Split(strings.Repeat("d", 10), "")
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stParse(t, tt.in)
			if !reflect.DeepEqual(s, tt.want) {
				t.Errorf("ParseStatus:\n got %#v\nwant %#v", s, tt.want)
			}
			stRoundTrip(t, s)
		})
	}
}

func TestParseStatusCompression(t *testing.T) {
	in := stHead + "## Compression State\n\nGoal:\n\n   Build the thing.\n\n  - with a bullet\n  Goal-ish: text\n\nKey Decisions:\n- [DEC-1] a: b\n\n-\n" +
		"Next Steps:\n1. first\n 2.  second \n10.\n- bulleted\n1)\tparen is a bullet?\n"
	if _, err := ParseStatus([]byte(in)); err == nil || err.Error() != `line 26: want a numbered step "1. step", found "1)\tparen is a bullet?"` {
		t.Errorf("ParseStatus error = %v", err)
	}
	in = strings.TrimSuffix(in, "1)\tparen is a bullet?\n")
	s := stParse(t, in)
	want := stBase()
	want.Compression = Compression{
		Goal:         "Build the thing.\n\n  - with a bullet\n  Goal-ish: text",
		KeyDecisions: []string{"[DEC-1] a: b", ""},
		NextSteps:    []string{"first", "second", "", "bulleted"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("ParseStatus:\n got %#v\nwant %#v", s, want)
	}
	stRoundTrip(t, s)
}

// stRoundTrip checks ParseStatus(s.Render()) == s and that the second render
// is byte-identical.
func stRoundTrip(t *testing.T, s Status) {
	t.Helper()
	out := s.Render()
	s2, err := ParseStatus(out)
	if err != nil {
		t.Fatalf("ParseStatus(Render()): %v\n%s", err, out)
	}
	if !reflect.DeepEqual(s, s2) {
		t.Fatalf("round trip:\n got %#v\nwant %#v\nrendered:\n%s", s2, s, out)
	}
	if again := s2.Render(); string(again) != string(out) {
		t.Fatalf("second render differs:\n%s\nvs\n%s", again, out)
	}
}

func TestParseStatusErrors(t *testing.T) {
	const cs = stHead + "## Compression State\n" // lines 1-8
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty file", "", 0, `missing title "# Pipeline Status"`},
		{"blank lines only", "\n\r\n  \n", 0, `missing title "# Pipeline Status"`},
		{"no title", "**Updated:** u\n", 1, `want title "# Pipeline Status", found "**Updated:** u"`},
		{"other title", "\n# Phase Handoff: 1 → 2\n", 2, `want title "# Pipeline Status", found "# Phase Handoff: 1 → 2"`},
		{"title at level 2", "## Pipeline Status\n", 1, `want title "# Pipeline Status", found "## Pipeline Status"`},
		{"prose in header", "# Pipeline Status\n\nAll good.\n", 3, `want a "**Key:** value" header line, found "All good."`},
		{"key outside bold", "# Pipeline Status\n**Updated**: u\n", 2, `want a "**Key:** value" header line, found "**Updated**: u"`},
		{"unknown header field", "# Pipeline Status\n**Updated:** u\n**Branch:** main\n", 3, `unknown header field "**Branch:**"`},
		{"unknown header field twice", "# Pipeline Status\n**Branch:** main\n**Branch:** main\n", 2, `unknown header field "**Branch:**"`},
		{"lower-case header field", "# Pipeline Status\n**health:** GREEN\n", 2, `unknown header field "**health:**"`},
		{"duplicate header field", stHead + "**Skill:** debugging\n", 8, `duplicate "**Skill:**" line (first on line 4)`},
		{"invalid health", "# Pipeline Status\n**Health:** ORANGE\n", 2, `invalid health "ORANGE" (want GREEN, YELLOW or RED)`},
		{"lower-case health", "# Pipeline Status\n**Health:** green\n", 2, `invalid health "green" (want GREEN, YELLOW or RED)`},
		{"suggested action when GREEN", "# Pipeline Status\n**Suggested Action:** none\n**Health:** GREEN\n", 2, `"**Suggested Action:**" must be left out when Health is GREEN`},
		{"empty section title", stHead + "\n##\n", 9, `empty section title`},
		{"duplicate known section", stHead + "## Checkpoints\n## Recent Events\n##   Checkpoints\n", 10, `duplicate section "Checkpoints" (first on line 8)`},
		{"event without time", stHead + "## Recent Events\n- something happened\n", 9, `want an event "- [HH:MM] text", found "- something happened"`},
		{"event with empty time", stHead + "## Recent Events\n- [ ] x\n", 9, `want an event "- [HH:MM] text", found "- [ ] x"`},
		{"event time not closed", stHead + "## Recent Events\n- [12:00 x\n", 9, `want an event "- [HH:MM] text", found "- [12:00 x"`},
		{"event not a bullet", stHead + "## Recent Events\n(last 5 events, newest first)\n", 9, `want a "- " bullet in section "Recent Events", found "(last 5 events, newest first)"`},
		{"six events", stHead + "## Recent Events\n" + strings.Repeat("- [12:00] e\n", 5) + "\n- [11:00] sixth\n", 15, `more than 5 recent events`},
		{"no table header", stHead + "## Task Progress\n| 1 | a | T1 | DONE | 1m |\n", 9, `want the task table header "| # | Task | Tier | Status | Duration |", found "| 1 | a | T1 | DONE | 1m |"`},
		{"table header with four columns", stHead + "## Task Progress\n| # | Task | Tier | Status |\n", 9, `want the task table header "| # | Task | Tier | Status | Duration |", found "| # | Task | Tier | Status |"`},
		{"table header not a row", stHead + "## Task Progress\nNone yet.\n", 9, `want the task table header "| # | Task | Tier | Status | Duration |", found "None yet."`},
		{"no separator", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n| 1 | a | T1 | DONE | 1m |\n", 10, `want the table separator "|---|------|------|--------|----------|", found "| 1 | a | T1 | DONE | 1m |"`},
		{"separator with empty cell", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n|---||---|---|---|\n", 10, `want the table separator "|---|------|------|--------|----------|", found "|---||---|---|---|"`},
		{"header only", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n\n", 9, `task table has no separator row`},
		{"row not a row", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n|-|-|-|-|-|\n- 1 a\n", 11, `want a task row "| # | Task | Tier | Status | Duration |", found "- 1 a"`},
		{"row with six cells", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n|-|-|-|-|-|\n| 1 | a | T1 | DONE | 1m | x |\n", 11, `task row has 6 cells, want 5`},
		{"row with four cells", stHead + "## Task Progress\n| # | Task | Tier | Status | Duration |\n|-|-|-|-|-|\n| 1 | a | T1 | DONE |\n", 11, `task row has 4 cells, want 5`},
		{"gate not a bullet", stHead + "## Quality Gates\nDesign: PASSED\n", 9, `want a "- " bullet in section "Quality Gates", found "Design: PASSED"`},
		{"checkpoint star bullet", stHead + "## Checkpoints\n* Total: 1\n", 9, `want a "- " bullet in section "Checkpoints", found "* Total: 1"`},
		{"text before a label", cs + "\nThe state:\n", 10, `want "Goal:", "Key Decisions:", "Active Constraints:" or "Next Steps:" in section "Compression State", found "The state:"`},
		{"bold label", cs + "**Goal:** g\n", 9, `want "Goal:", "Key Decisions:", "Active Constraints:" or "Next Steps:" in section "Compression State", found "**Goal:** g"`},
		{"duplicate Goal", cs + "Goal: a\nb\nGoal: c\n", 11, `duplicate "Goal:" (first on line 9)`},
		{"duplicate label", cs + "Next Steps:\nKey Decisions:\nNext Steps:\n", 11, `duplicate "Next Steps:" (first on line 9)`},
		{"text after a label", cs + "Active Constraints: none\n", 9, `unexpected text "none" after "Active Constraints:"`},
		{"decision not a bullet", cs + "Key Decisions:\n1. d\n", 10, `want a "- " bullet after "Key Decisions:", found "1. d"`},
		{"constraint not a bullet", cs + "Active Constraints:\nnone\n", 10, `want a "- " bullet after "Active Constraints:", found "none"`},
		{"eleven decisions", cs + "Key Decisions:\n" + strings.Repeat("- d\n", 11), 20, `more than 10 key decisions`},
		{"step not numbered", cs + "Next Steps:\nfinish\n", 10, `want a numbered step "1. step", found "finish"`},
		{"step number glued", cs + "Next Steps:\n1.finish\n", 10, `want a numbered step "1. step", found "1.finish"`},
		{"CRLF line numbers", "# Pipeline Status\r\n\r\n**Health:** GREEN\r\n\r\n## Checkpoints\r\n\r\noops\r\n", 7, `want a "- " bullet in section "Checkpoints", found "oops"`},
		{"long line clipped", stHead + "## Checkpoints\n" + strings.Repeat("é", 40) + "\n", 9,
			`want a "- " bullet in section "Checkpoints", found "` + strings.Repeat("é", 28) + `..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseStatus([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseStatus succeeded: %#v", s)
			}
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want *StatusError", err, err)
			}
			if se.Line != tt.line || se.Msg != tt.msg {
				t.Errorf("error = line %d %q\n      want line %d %q", se.Line, se.Msg, tt.line, tt.msg)
			}
			if want := "line " + strconv.Itoa(tt.line) + ": " + tt.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if !reflect.DeepEqual(s, Status{}) {
				t.Errorf("status on error = %#v, want zero", s)
			}
		})
	}
}

func TestStatusRender(t *testing.T) {
	tests := []struct {
		name string
		s    Status
		want string
	}{
		{
			name: "zero value",
			s:    Status{},
			want: "# Pipeline Status\n**Updated:**\n**Started:**\n**Skill:**\n**Phase:**\n**Health:**\n**Elapsed:**\n\n" +
				"## Recent Events\n\n## Compression State\nGoal:\nKey Decisions:\nActive Constraints:\nNext Steps:\n",
		},
		{
			name: "GREEN drops the suggested action, lists are capped",
			s: Status{Health: "GREEN", SuggestedAction: "dropped",
				RecentEvents: []StatusEvent{{"6", "f"}, {"5", "e"}, {"4", "d"}, {"3", "c"}, {"2", "b"}, {"1", "a"}},
				Compression:  Compression{KeyDecisions: strings.Split("abcdefghijk", "")},
			},
			want: "# Pipeline Status\n**Updated:**\n**Started:**\n**Skill:**\n**Phase:**\n**Health:** GREEN\n**Elapsed:**\n\n" +
				"## Recent Events\n- [6] f\n- [5] e\n- [4] d\n- [3] c\n- [2] b\n\n" +
				"## Compression State\nGoal:\nKey Decisions:\n- a\n- b\n- c\n- d\n- e\n- f\n- g\n- h\n- i\n- j\nActive Constraints:\nNext Steps:\n",
		},
		{
			name: "RED with an empty suggested action, escaped cells, empty items",
			s: Status{Health: "RED", Elapsed: "2h",
				RecentEvents: []StatusEvent{{"09:00", ""}},
				Tasks:        []StatusTask{{"1", "a|b", `c\|d`, "", `e\`}},
				QualityGates: []string{""},
				Extra:        []StatusSection{{"Notes", nil}, {"More", []string{"", "x", ""}}},
				Compression:  Compression{Goal: "a\n\nb", Constraints: []string{""}, NextSteps: []string{"", "two"}},
			},
			want: "# Pipeline Status\n**Updated:**\n**Started:**\n**Skill:**\n**Phase:**\n**Health:** RED\n**Elapsed:** 2h\n\n" +
				"## Recent Events\n- [09:00]\n\n" +
				"## Task Progress\n| # | Task | Tier | Status | Duration |\n|---|------|------|--------|----------|\n" +
				"| 1 | a\\|b | c\\\\|d |  | e\\ |\n\n" +
				"## Quality Gates\n-\n\n" +
				"## Notes\n\n## More\n\nx\n\n\n" +
				"## Compression State\nGoal: a\n\nb\nKey Decisions:\nActive Constraints:\n-\nNext Steps:\n1.\n2. two\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.s.Render()); got != tt.want {
				t.Errorf("Render:\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestStatusRoundTripValues(t *testing.T) {
	for _, s := range []Status{
		stGoldenValue,
		{Health: "YELLOW", SuggestedAction: "Check the gate.", Phase: "2 — Plan",
			RecentEvents: []StatusEvent{{"[x", "] y"}, {"12:00", "[a] b"}},
			Tasks:        []StatusTask{{"#", "Task", "Tier", "Status", "Duration"}, {"---", "---", "---", "---", "---"}, {`\`, `|\|`, "a | b", "", ""}, {}},
			QualityGates: []string{"- nested", "**x:** y"},
			Checkpoints:  []string{"[12:00] not an event"},
			Extra:        []StatusSection{{"Recent events", []string{"- [12:00] kept"}}, {"X", []string{"  indented", "", "Goal: not a label here"}}},
			Compression: Compression{Goal: "Goal: twice\n- a bullet\n\n  1. a number", KeyDecisions: []string{"Next Steps: inside"},
				Constraints: []string{"1. x"}, NextSteps: []string{"2. nested", "- dash"}},
		},
	} {
		stRoundTrip(t, s)
	}
}

func TestStatusErrorString(t *testing.T) {
	err := error(&StatusError{Line: 0, Msg: `missing title "# Pipeline Status"`})
	if got, want := err.Error(), `line 0: missing title "# Pipeline Status"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(stGolden))
	f.Add([]byte(stHead))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStatus(data)
		if err != nil {
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want *StatusError", err, err)
			}
			if se.Line < 0 {
				t.Fatalf("negative line in %v", err)
			}
			if !reflect.DeepEqual(s, Status{}) {
				t.Fatalf("non-zero status with error %v: %#v", err, s)
			}
			return
		}
		out := s.Render()
		s2, err := ParseStatus(out)
		if err != nil {
			t.Fatalf("ParseStatus(Render()): %v\ninput %q\nrendered %q", err, data, out)
		}
		if !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip differs:\n got %#v\nwant %#v\ninput %q\nrendered %q", s2, s, data, out)
		}
		if again := s2.Render(); string(again) != string(out) {
			t.Fatalf("render not stable:\n%q\n%q", out, again)
		}
	})
}
