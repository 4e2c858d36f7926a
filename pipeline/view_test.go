package pipeline

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// evAt is ev with a chosen time.
func evAt(t *testing.T, st *State, at, typ string, data any) Event {
	t.Helper()
	b, _ := json.Marshal(data)
	e := Event{Seq: st.Seq + 1, Lamport: st.Lamport + 1, Time: at, Writer: "w-1", Type: typ, Data: b}
	if err := e.seal(); err != nil {
		t.Fatal(err)
	}
	return e
}

func apply(t *testing.T, st *State, at, typ string, data any) {
	t.Helper()
	if _, err := st.Apply(evAt(t, st, at, typ, data)); err != nil {
		t.Fatalf("%s %+v: %v", typ, data, err)
	}
}

func intp(n int) *int { return &n }

func TestHealthMachine(t *testing.T) {
	st := started(t)
	at := "2026-11-22T10:00:00Z"
	step := func(typ string, data any, want string) {
		t.Helper()
		apply(t, st, at, typ, data)
		if st.View.Health.Level != want {
			t.Fatalf("after %s %+v: health %s (%s), want %s", typ, data, st.View.Health.Level, st.View.Health.Reason, want)
		}
	}
	if st.View.Health.Level != Green {
		t.Fatalf("a new pipeline is %s", st.View.Health.Level)
	}
	step(LedgerType(ledger.Begin), LedgerData{Phase: 1}, Green)
	step(TypeVerdict, VerdictData{Phase: 1, Verdict: "FAIL", PipelineID: "p1", Rounds: 4}, Green)
	step(TypeVerdict, VerdictData{Phase: 1, Verdict: "FAIL", PipelineID: "p1", Rounds: 5}, Yellow)
	step(TypeVerdict, VerdictData{Phase: 1, Verdict: "PASS", PipelineID: "p1", Rounds: 6}, Yellow) // never improves within a phase
	step(LedgerType(ledger.PassGate), LedgerData{Phase: 1}, Green)                                 // but the phase's end settles it
	step(LedgerType(ledger.Begin), LedgerData{Phase: 2}, Green)
	step(LedgerType(ledger.FailPhase), LedgerData{Phase: 2}, Red)
	if got := st.View.Health.Reason; got != "Phase 2 failed: (no reason given)" {
		t.Fatalf("reason %q", got)
	}
	step(LedgerType(ledger.Begin), LedgerData{Phase: 2}, Green) // a failed phase redone starts afresh
	step(TypeVerdict, VerdictData{Phase: 2, Verdict: "STAGNATION", PipelineID: "p1"}, Red)
	step(TypeVerdict, VerdictData{Phase: 2, Verdict: "PASS", PipelineID: "p1", Rounds: 1}, Red)
	step(LedgerType(ledger.PassGate), LedgerData{Phase: 2}, Green)
	step(LedgerType(ledger.Begin), LedgerData{Phase: 3}, Green)
	for i := 1; i <= 3; i++ {
		want := Green
		if i == 3 {
			want = Yellow
		}
		step(TypeDispatchStart, DispatchStart{Seq: i, Role: "reviewer", Phase: 3, Task: intp(1), Template: "reviewer"}, want)
	}
	if got := st.View.Health.Reason; got != "review loop round 3 on task 1" {
		t.Fatalf("reason %q", got)
	}
	step(TypeDecision, DecisionData{Type: "escalation", Choice: "ask about the schema"}, Red)
	if st.View.Health.Action == "" {
		t.Fatal("RED without a suggested action")
	}
}

// TestEscalationSuggestion: an escalation carrying its suggestion (a
// gate's) makes it health's action; an old one without keeps the fixed one.
func TestEscalationSuggestion(t *testing.T) {
	for _, c := range []struct {
		name       string
		suggestion string
		action     string
	}{
		{"the gate's", "Review the findings that keep coming back with the user.", "Review the findings that keep coming back with the user."},
		{"none (an old event)", "", "Wait for the user's decision on the escalation."},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := started(t)
			at := "2026-11-22T10:00:00Z"
			apply(t, st, at, LedgerType(ledger.Begin), LedgerData{Phase: 1})
			apply(t, st, at, TypeDecision, DecisionData{Type: "escalation", Choice: "quality gate STAGNATION at round 2",
				Reason: "no progress", Suggestion: c.suggestion})
			apply(t, st, at, LedgerType(ledger.FailPhase), LedgerData{Phase: 1, Reason: "no progress"})
			want := Health{Level: Red, Phase: 1, Reason: "escalation pending: quality gate STAGNATION at round 2", Action: c.action}
			if st.View.Health != want {
				t.Fatalf("health %+v\nwant %+v", st.View.Health, want)
			}
		})
	}
}

// TestCostCapHealth: a stop at the cost cap is an escalation (RED, its
// suggestion the action); a budget decision going on past it ends that
// RED, and no other.
func TestCostCapHealth(t *testing.T) {
	at := "2026-11-22T10:00:00Z"
	stop := DecisionData{Type: "escalation", Choice: CostCapReached + " before design-gate", Reason: "the cost reached the cap",
		Suggestion: "Raise the cap to go on: git crucible build --resume --max-cost 0.80"}
	goOn := DecisionData{Type: DecisionBudget, Choice: "going on under a cost cap of $0.80 (--max-cost)"}
	for _, c := range []struct {
		name    string
		before  []DecisionData
		stopped bool // StoppedAtCostCap before the budget decision
		want    Health
	}{
		{"stopped at the cap, then going on", []DecisionData{stop}, true, Health{Level: Green, Phase: 1}},
		{"a budget decision alone changes nothing", nil, false, Health{Level: Green, Phase: 1}},
		{"another escalation stays", []DecisionData{{Type: "escalation", Choice: "ask about the schema", Suggestion: "Ask."}}, false,
			Health{Level: Red, Phase: 1, Reason: "escalation pending: ask about the schema", Action: "Ask."}},
		{"another escalation first stays", []DecisionData{{Type: "escalation", Choice: "ask about the schema", Suggestion: "Ask."}, stop}, false,
			Health{Level: Red, Phase: 1, Reason: "escalation pending: ask about the schema", Action: "Ask."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := started(t)
			apply(t, st, at, LedgerType(ledger.Begin), LedgerData{Phase: 1})
			for _, d := range c.before {
				apply(t, st, at, TypeDecision, d)
			}
			if got := StoppedAtCostCap(st); got != c.stopped {
				t.Fatalf("stopped at the cost cap: %v, want %v (health %+v)", got, c.stopped, st.View.Health)
			}
			if c.stopped && st.View.Health.Action != stop.Suggestion {
				t.Fatalf("action %q, want the hint", st.View.Health.Action)
			}
			apply(t, st, at, TypeDecision, goOn)
			if st.View.Health != c.want {
				t.Fatalf("health %+v\nwant %+v", st.View.Health, c.want)
			}
		})
	}
}

func TestRetryTurnsYellow(t *testing.T) {
	st := started(t)
	at := "2026-11-22T10:00:00Z"
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 1, Role: "implementer", Phase: 3, Task: intp(2), Template: "impl"})
	apply(t, st, at, TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "failed"})
	if st.View.Health.Level != Green {
		t.Fatal("a failure alone is not a retry")
	}
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 2, Role: "implementer", Phase: 3, Task: intp(2), Template: "impl"})
	if st.View.Health.Level != Yellow || st.View.Health.Reason != "retry in progress: implementer on task 2 after a failure" {
		t.Fatalf("health %+v", st.View.Health)
	}
	if got := st.View.Tasks; len(got) != 1 || got[0].Seq != 2 || got[0].Status != "dispatched" {
		t.Fatalf("tasks %+v", got)
	}
}

// TestTaskTitle: a task's row shows the title its engine dispatches
// carry; a later dispatch without one (a hook's) keeps it.
func TestTaskTitle(t *testing.T) {
	st := started(t)
	at := "2026-11-22T10:00:00Z"
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 1, Role: "implementer", Phase: 3, Task: intp(1), Template: "impl", TaskTitle: "Take the name"})
	apply(t, st, at, TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "completed"})
	apply(t, st, at, TypeDispatchStart, DispatchStart{Seq: 2, Role: "reviewer", Phase: 3, Task: intp(1), Template: "review"})
	want := TaskProgress{Task: 1, Title: "Take the name", Role: "reviewer", Status: "dispatched", Seq: 2, Started: at}
	if got := st.View.Tasks; len(got) != 1 || got[0] != want {
		t.Fatalf("tasks %+v\nwant %+v", got, want)
	}
}

// TestActiveTime: overlapping dispatches count once; gaps do not count;
// the result does not depend on the order they finish in.
func TestActiveTime(t *testing.T) {
	st := started(t)
	ts := func(min int) string { return fmt.Sprintf("2026-11-22T10:%02d:00Z", min) }
	apply(t, st, ts(0), TypeDispatchStart, DispatchStart{Seq: 1, Role: "a", Phase: 1, Template: "a"})
	apply(t, st, ts(5), TypeDispatchStart, DispatchStart{Seq: 2, Role: "b", Phase: 1, Template: "b"})
	apply(t, st, ts(8), TypeDispatchFinish, DispatchFinish{Seq: 2, Status: "completed", DurationS: 180})
	apply(t, st, ts(10), TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "completed", DurationS: 600})
	apply(t, st, ts(20), TypeDispatchStart, DispatchStart{Seq: 3, Role: "c", Phase: 1, Template: "c"})
	apply(t, st, ts(25), TypeDispatchFinish, DispatchFinish{Seq: 3, Status: "completed", DurationS: 300})
	m := st.View.Metrics
	if got := m.ActiveS(); got != 15*60 {
		t.Fatalf("active %d s, want %d (0-10 and 20-25 merged, not summed)", got, 15*60)
	}
	if len(m.Open) > 1 {
		t.Fatalf("intervals nobody can overlap stayed open: %v", m.Open)
	}
	if m.FirstStart != ts(0) || m.LastFinish != ts(25) || m.ByRole["a"] != 1 {
		t.Fatalf("metrics %+v", m)
	}
}

func TestJournalFolds(t *testing.T) {
	st := started(t)
	for i := 1; i <= 13; i++ {
		apply(t, st, "2026-11-22T10:00:00Z", TypeDecision, DecisionData{Type: "gate-round", Choice: fmt.Sprint("choice ", i)})
	}
	j := st.View.Journal
	if len(j.Decisions) != 10 || j.Total != 13 {
		t.Fatalf("%d decisions kept of %d", len(j.Decisions), j.Total)
	}
	if got := j.Decisions[0].ID(); got != "DEC-1..DEC-4" {
		t.Fatalf("folded entry %s", got)
	}
	if got := j.Decisions[9].ID(); got != "DEC-13" {
		t.Fatalf("newest %s", got)
	}
	if len(st.View.Recent) != 5 || st.View.Recent[0].Text != "decision gate-round: choice 13" {
		t.Fatalf("recent %+v", st.View.Recent)
	}
}
