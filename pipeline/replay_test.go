package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// chain applies each (type, data) to a started state and returns the events.
func chain(t *testing.T, st *State, steps ...any) []Event {
	t.Helper()
	var out []Event
	for i := 0; i < len(steps); i += 2 {
		e := ev(t, st, steps[i].(string), steps[i+1])
		if _, err := st.Apply(e); err != nil {
			t.Fatalf("event %d (%s): %v", i/2, steps[i], err)
		}
		out = append(out, e)
	}
	return out
}

// describeAll is each event's one-line summary.
func describeAll(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, Describe(e))
	}
	return out
}

// TestLive: a replay from Phase 2 hides the steps, dispatches (start and
// finish) and handoffs of Phases 2 and later recorded before it, keeps
// Phase 1's and everything after it; a second replay from Phase 3 hides
// only Phase 3's of the first replay's run. The ledger reopens with each.
func TestLive(t *testing.T) {
	st := started(t)
	begin := func(p ledger.Phase) []any { return []any{LedgerType(ledger.Begin), LedgerData{Phase: p}} }
	pass := func(p ledger.Phase) []any {
		return []any{TypeVerdict, VerdictData{Phase: p, Verdict: "PASS", PipelineID: "p1"}, LedgerType(ledger.PassGate), LedgerData{Phase: p}}
	}
	dispatch := func(seq int, p ledger.Phase, role string) []any {
		return []any{TypeDispatchStart, DispatchStart{Seq: seq, Role: role, Phase: p, Template: role},
			TypeDispatchFinish, DispatchFinish{Seq: seq, Status: "completed"},
			TypeStep, StepData{Phase: p, Step: role, Status: StepDone}}
	}
	var steps []any
	steps = append(steps, begin(1)...)
	steps = append(steps, dispatch(1, 1, "design")...)
	steps = append(steps, pass(1)...)
	steps = append(steps, TypeHandoff, HandoffData{From: 1, To: 2, Path: HandoffPath(1)})
	steps = append(steps, begin(2)...)
	steps = append(steps, dispatch(2, 2, "plan")...)
	steps = append(steps, pass(2)...)
	steps = append(steps, TypeHandoff, HandoffData{From: 2, To: 3, Path: HandoffPath(2)})
	steps = append(steps, begin(3)...)
	steps = append(steps, dispatch(3, 3, "implement")...)
	events := chain(t, st, steps...)
	if live, replaced, err := Live(events); err != nil || len(live) != len(events) || replaced != nil {
		t.Fatalf("Live of a chain never replayed: %d of %d events, replaced %v, %v", len(live), len(events), replaced, err)
	}

	events = append(events, chain(t, st, TypeReplay, ReplayData{Session: "r1", From: 2})...)
	if e := st.Gates.Ledger.Entry(ledger.Plan); e.Status != ledger.NotStarted || st.Gates.Ledger.Entry(ledger.Design).Status != ledger.Pass {
		t.Fatalf("after the replay from Phase 2 the ledger has Phase 1 %s, Phase 2 %s", st.Gates.Ledger.Entry(ledger.Design).Status, e.Status)
	}
	steps = append(begin(2), dispatch(4, 2, "plan")...)
	steps = append(steps, pass(2)...)
	steps = append(steps, TypeHandoff, HandoffData{From: 2, To: 3, Path: HandoffPath(2)})
	steps = append(steps, begin(3)...)
	steps = append(steps, dispatch(5, 3, "implement")...)
	steps = append(steps, TypeReplay, ReplayData{Session: "r2", From: 3})
	steps = append(steps, begin(3)...)
	steps = append(steps, dispatch(6, 3, "implement")...)
	events = append(events, chain(t, st, steps...)...)

	live, replaced, err := Live(events)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"begin phase 1", "dispatch 1: design", "dispatch 1 completed", "step design done",
		"verdict PASS for phase 1", "pass phase 1", "handoff 1 → 2",
		"begin phase 2", "verdict PASS for phase 2", "pass phase 2", "begin phase 3",
		"replay r1 from Phase 2",
		"begin phase 2", "dispatch 4: plan", "dispatch 4 completed", "step plan done",
		"verdict PASS for phase 2", "pass phase 2", "handoff 2 → 3", "begin phase 3",
		"replay r2 from Phase 3",
		"begin phase 3", "dispatch 6: implement", "dispatch 6 completed", "step implement done"}
	if got := describeAll(live); !slices.Equal(got, want) {
		t.Errorf("Live:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var seqs []string
	for _, d := range replaced {
		seqs = append(seqs, fmt.Sprint(d.Seq))
	}
	if got := strings.Join(seqs, " "); got != "2 3 5" {
		t.Errorf("replaced dispatches %s, want 2 3 5", got)
	}
}

// TestReplayRefused: a replay needs a valid phase and session, no dispatch
// in flight, and the gate before its phase passed.
func TestReplayRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup []any
		data  ReplayData
		want  string
	}{
		{"phase", nil, ReplayData{Session: "r1", From: 5}, "replay: invalid phase 5"},
		{"session", nil, ReplayData{Session: "../x", From: 1}, `invalid replay session "../x"`},
		{"state", nil, ReplayData{Session: "r1", From: 1, State: "x.md"}, `state kept at "x.md"`},
		{"in flight", []any{TypeDispatchStart, DispatchStart{Seq: 1, Role: "design", Phase: 1, Template: "design"}},
			ReplayData{Session: "r1", From: 1}, "while a dispatch is in flight"},
		{"gate", []any{LedgerType(ledger.Begin), LedgerData{Phase: 1}}, ReplayData{Session: "r1", From: 2},
			"Cannot start Phase 2 — Phase 1 gate has not passed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := started(t)
			chain(t, st, tc.setup...)
			before := *st
			_, err := st.Apply(ev(t, st, TypeReplay, tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if st.Seq != before.Seq || st.Gates != before.Gates {
				t.Error("a refused replay changed the state")
			}
		})
	}
}
