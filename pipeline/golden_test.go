package pipeline

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestEventsGolden pins the bytes of events whose payloads hold lists and
// embedded file lines (handoffs, imports), and what replaying them derives:
// events are stored forever, so a change of Go types must not change them.
func TestEventsGolden(t *testing.T) {
	st := started(t)
	var out bytes.Buffer
	var events []Event
	add := func(typ string, data any) {
		t.Helper()
		e := ev(t, st, typ, data)
		if _, err := st.Apply(e); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(line, '\n'))
		events = append(events, e)
	}
	add(LedgerType(ledger.Begin), LedgerData{Phase: ledger.Design})
	add(TypeVerdict, VerdictData{Phase: ledger.Design, Verdict: "PASS", PipelineID: "p1", Rounds: 2})
	add(LedgerType(ledger.PassGate), LedgerData{Phase: ledger.Design, Reason: "reviewed"})
	add(TypeHandoff, HandoffData{From: ledger.Design, To: ledger.Plan, Path: HandoffPath(ledger.Design),
		Inputs:      []HandoffInput{{Name: "Design doc", Value: "docs/design.md"}},
		Decisions:   []HandoffDecision{{ID: "DEC-1", Text: "use git", Reason: "it is there"}, {Text: "no id"}},
		Constraints: []string{"no new deps"},
		Shed:        []HandoffShed{{What: "old notes", Where: "archive/"}, {What: "nothing"}}})
	add(TypeImportFiles, ImportFilesData{Dir: "/scratch", Files: map[string]string{"manifest.jsonl": "ab", "build-gate-ledger.md": "cd"},
		ManifestLines: 3, ManifestDigest: "ef"})
	add(TypeImportDispatch, ImportDispatchData{Line: `{"seq":7,"file":"7-planner.md","role":"planner","phase":2,"task":3,"status":"dispatched","input_chars":120,"model_tier":"opus","unknown":true}`, Prompt: "dispatch/0000/7-planner.md"})
	add(TypeImportDispatch, ImportDispatchData{Line: `{"seq":7,"file":"7-planner.md","role":"planner","phase":"2","task":null,"status":"completed","duration_s":61,"summary":"ok","output_chars":900,"tool_calls":4,"timestamp":"2026-11-22T09:00:00Z"}`})
	add(TypeImportDispatch, ImportDispatchData{Line: `{"seq":8,"file":"8-x.md","role":"reviewer","phase":"3","status":"dispatched","replay_of":7,"replay_session":"s","mutation":"m","template":"review"}`})
	add(TypeImportHandoff, HandoffData{From: ledger.Plan, To: ledger.Execute, Path: HandoffPath(ledger.Plan),
		Decisions: []HandoffDecision{{ID: "DEC-2", Text: "split", Reason: "size"}}, Shed: []HandoffShed{{What: "a", Where: "b"}}})
	add(TypeImportVerdict, ImportVerdictData{Name: "gate-verdict-2.md", Path: ImportPath("gate-verdict-2.md"), Phase: ledger.Plan, Rounds: 1})
	// The build engine's: a dispatch at a point of the walk, settled on resume, retried; a step's end.
	task := 2
	add(TypeDispatchStart, DispatchStart{Seq: 9, Role: "implementer", Phase: ledger.Execute, Task: &task, Template: "implementer",
		InputChars: 5, Prompt: DispatchPath(9, "implementer", false), Step: "implement", TaskID: "2"})
	add(TypeDispatchFinish, DispatchFinish{Seq: 9, Status: "error", Summary: "interrupted: the engine stopped while it ran", Recovered: "interrupted"})
	retry := 9
	add(TypeDispatchStart, DispatchStart{Seq: 10, Role: "red-team", Phase: ledger.Execute, Template: "red-team",
		TemplateSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Step: "review", TaskID: "t-2", Round: 3, RetryOf: &retry,
		RetryReason: "dispatch 9 ended error: interrupted: the engine stopped while it ran"})
	add(TypeDispatchFinish, DispatchFinish{Seq: 10, Status: "failed", Summary: "the agent exited with status 2", Failure: "exit", Recovered: "adopted"})
	add(TypeStep, StepData{Phase: ledger.Execute, Step: "review", Task: "t-2", Round: 3, Status: StepEscalated, Result: "STAGNATION"})
	// An escalation, with the gate's suggestion: health's action.
	add(TypeDecision, DecisionData{Type: "escalation", Choice: "quality gate STAGNATION at round 3", Reason: "no progress",
		Alternatives: "another fix round", Suggestion: "Review the findings that keep coming back with the user."})

	// The task DAG's: a run, a level's tasks dispatched in worktrees, committed, the level, one failed.
	add(TypeDAGRun, DAGRunData{Status: "in-progress", Manifest: "dispatch/x/dispatch.yaml", Branch: "main", Backup: "crucible/backup/x", MaxParallel: 2, Tasks: 3})
	add(TypeDAGTask, DAGTaskData{Task: "1a", Status: "dispatched", Level: 1, Worktree: ".git/crucible/worktrees/1"})
	add(TypeDAGTask, DAGTaskData{Task: "1b", Status: "dispatched", Level: 1, Worktree: ".git/crucible/worktrees/2"})
	add(TypeDAGTask, DAGTaskData{Task: "1b", Status: "failed", Level: 1, Reason: "no output.yaml"})
	add(TypeDAGLevel, DAGLevelData{Level: 1, Boundary: "1111111111111111111111111111111111111111", Head: "2222222222222222222222222222222222222222"})
	add(TypeDAGTask, DAGTaskData{Task: "1a", Status: "committed", Level: 1, Commit: "2222222222222222222222222222222222222222"})
	// Claude Code's hook's: a subagent of dispatch 9 sent to run in the
	// background and settled detached; another, started from its end,
	// whose finish says what ran it and what it cost.
	parent, uses := 9, 1
	add(TypeDispatchStart, DispatchStart{Seq: 11, Role: "general-purpose", Phase: ledger.Execute, Template: "general-purpose",
		InputChars: 6, Prompt: DispatchPath(11, "general-purpose", false), ToolUseID: "toolu_1", Background: true, ParentSeq: &parent})
	add(TypeDispatchFinish, DispatchFinish{Seq: 11, Status: "error", Summary: "detached: the session ended before this background agent's end was reported",
		Failure: "detached"})
	add(TypeDispatchStart, DispatchStart{Seq: 12, Role: "Explore", Phase: ledger.Execute, Template: "Explore", ToolUseID: "toolu_2", Reconstructed: true})
	add(TypeDispatchFinish, DispatchFinish{Seq: 12, Status: "completed", OutputChars: 5, Output: DispatchPath(12, "Explore", true),
		Summary: "found", ToolCalls: &uses, AgentType: "Explore", Usage: &Usage{Client: "claude-code", SessionID: "s1",
			Model: "claude-opus-4-8[1m]", InputTokens: 100, OutputTokens: 20, CacheReadTokens: 5, ToolUses: 1, DurationMS: 43}})
	// Format 1, as chains written before format 2 hold it: verify renders
	// their commits so, byte for byte.
	st.Format = 1
	out.WriteString("-- state.json --\n")
	out.Write(st.Encode())
	st.Format = StateFormat
	out.WriteString("-- state.json (format 2) --\n")
	out.Write(st.Encode())
	var enc stateEncoder
	files := changedTaskFiles(nil, st)
	slices.SortFunc(files, func(a, b fileID) int { return strings.Compare(a.name(), b.name()) })
	for _, file := range files {
		out.WriteString("-- " + TasksDir + "/" + file.name() + " --\n")
		out.Write(enc.render(taskFileIn(st, file)))
	}
	manifest, err := ManifestOf(events)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(manifest, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString("-- manifest --\n")
	out.Write(append(b, '\n'))

	golden := filepath.Join("testdata", "events.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("events or their replay changed:\n--- got\n%s\n--- want\n%s", out.Bytes(), want)
	}
}
