package pipeline

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// evBy makes a sealed event following st, written by writer: what one
// clone appends on its side of a divergence.
func evBy(t *testing.T, st *State, writer, typ string, data any) Event {
	t.Helper()
	e := ev(t, st, typ, data)
	e.Writer = writer
	if err := e.seal(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(e); err != nil {
		t.Fatal(err)
	}
	return e
}

// diverge starts a pipeline, begins Phase 1, then lets two clones append
// on copies of that state. It returns the shared state and each side's
// events.
func diverge(t *testing.T, ours, theirs func(t *testing.T, st *State) []Event) (base *State, a, b []Event) {
	t.Helper()
	st := &State{}
	evBy(t, st, "w-base", TypeStart, StartData{ID: "p1", Goal: "g", Mode: "feature", Branch: "main"})
	evBy(t, st, "w-base", LedgerType(ledger.Begin), LedgerData{Phase: ledger.Design})
	left, right := *st, *st
	return st, ours(t, &left), theirs(t, &right)
}

func TestMergedIsTheSameFromEitherSide(t *testing.T) {
	base, a, b := diverge(t,
		func(t *testing.T, st *State) []Event {
			return []Event{evBy(t, st, "w-a", TypeDecision, DecisionData{Type: "scope", Choice: "small"}),
				evBy(t, st, "w-a", TypeDecision, DecisionData{Type: "tests", Choice: "table"})}
		},
		func(t *testing.T, st *State) []Event {
			return []Event{evBy(t, st, "w-b", TypeCheckpoint, CheckpointData{ID: "abc", Reason: "pre-design-gate"})}
		})
	one, err := Merged(base, Side{Events: a}, Side{Events: b})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Merged(base, Side{Events: slices.Concat(b, a)}, Side{Events: a}) // from the other side, duplicates included
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Encode(), other.Encode()) {
		t.Fatalf("merge depends on order:\n%s\n%s", one.Encode(), other.Encode())
	}
	if one.Seq != 5 || one.Lamport != 5 || len(one.Conflicts) != 0 || one.Counters[TypeDecision] != 2 || one.Counters[TypeCheckpoint] != 1 {
		t.Fatalf("merged state: seq %d lamport %d conflicts %v counters %v", one.Seq, one.Lamport, one.Conflicts, one.Counters)
	}
	// The next local event follows the merge.
	next := ev(t, one, TypeDecision, DecisionData{Type: "x", Choice: "y"})
	if _, err := one.Apply(next); err != nil {
		t.Fatal(err)
	}
}

func TestMergedConflictingVerdicts(t *testing.T) {
	verdict := func(writer, v string) func(t *testing.T, st *State) []Event {
		return func(t *testing.T, st *State) []Event {
			return []Event{evBy(t, st, writer, TypeVerdict, VerdictData{Phase: ledger.Design, Verdict: v, PipelineID: "p1"})}
		}
	}
	base, a, b := diverge(t, verdict("w-a", "PASS"), verdict("w-b", "FAIL"))
	st, err := Merged(base, Side{Events: a}, Side{Events: b})
	if err != nil {
		t.Fatal(err)
	}
	swapped, err := Merged(base, Side{Events: b}, Side{Events: a})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(st.Encode(), swapped.Encode()) {
		t.Fatalf("merge depends on the side:\n%s\n%s", st.Encode(), swapped.Encode())
	}
	gate := slices.DeleteFunc(slices.Clone(st.Conflicts), func(c Conflict) bool { return !c.Blocks() })
	want := Conflict{Phase: ledger.Design, Type: "gate", Event: a[0].ID + " " + b[0].ID,
		Message: "one clone recorded PASS (writer w-a), another FAIL (writer w-b)"}
	if len(st.Conflicts) != 1 || len(gate) != 1 || gate[0] != want {
		t.Fatalf("conflicts: %+v", st.Conflicts)
	}
	msg := (&ConflictError{Pipeline: "p1", Conflicts: gate}).Error()
	if msg != "PHASE GATE BLOCKED: pipeline p1 has conflicting gate records from two clones.\n  Phase 1 gate: one clone recorded PASS (writer w-a), another FAIL (writer w-b)" {
		t.Fatalf("message: %q", msg)
	}
	// Resolving needs a reason, then clears the phase's conflicts.
	if _, err := st.Apply(ev(t, st, TypeResolve, ResolveData{Phase: ledger.Design})); err == nil {
		t.Fatal("a resolve without a reason was accepted")
	}
	if _, err := st.Apply(ev(t, st, TypeResolve, ResolveData{Phase: ledger.Plan, Reason: "r"})); err == nil || err.Error() != "there is no conflict to resolve in Phase 2" {
		t.Fatalf("resolve of a phase without conflicts: %v", err)
	}
	if _, err := st.Apply(ev(t, st, TypeResolve, ResolveData{Phase: ledger.Design, Reason: "the re-run passed"})); err != nil {
		t.Fatal(err)
	}
	if len(st.Conflicts) != 0 {
		t.Fatalf("conflicts left: %v", st.Conflicts)
	}
	b2, _ := json.Marshal(st)
	if bytes.Contains(b2, []byte(`"conflicts"`)) {
		t.Fatal("an empty conflict list is still written to state.json")
	}
}

func TestMergedAgreeingAndRefusedEvents(t *testing.T) {
	// Both clones passed the same verdict: no conflict. One clone abandoned
	// the pipeline while the other went on: what cannot apply is listed.
	pass := func(writer string) func(t *testing.T, st *State) []Event {
		return func(t *testing.T, st *State) []Event {
			return []Event{evBy(t, st, writer, TypeVerdict, VerdictData{Phase: ledger.Design, Verdict: "PASS", PipelineID: "p1"})}
		}
	}
	base, a, b := diverge(t, pass("w-a"), pass("w-b"))
	st, err := Merged(base, Side{Events: a}, Side{Events: b})
	if err != nil || len(st.Conflicts) != 0 {
		t.Fatalf("agreeing verdicts: %v %+v", err, st.Conflicts)
	}
	base, a, b = diverge(t, func(t *testing.T, st *State) []Event {
		return []Event{evBy(t, st, "w-a", TypeAbandon, AbandonData{Reason: "r"})}
	}, func(t *testing.T, st *State) []Event {
		st.Lamport += 5 // written later
		return []Event{evBy(t, st, "w-b", TypeDecision, DecisionData{Type: "t", Choice: "c"})}
	})
	st, err = Merged(base, Side{Events: a}, Side{Events: b})
	if err != nil || st.Status != StatusAbandoned || len(st.Conflicts) != 1 || st.Conflicts[0].Event != b[0].ID ||
		st.Conflicts[0].Blocks() || st.Conflicts[0].Message != ErrAbandoned.Error() {
		t.Fatalf("abandoned on one side: %v %+v", err, st.Conflicts)
	}
	if _, err := Merged(&State{}, Side{Events: a}, Side{Events: b}); err == nil || err.Error() != "the merge base has no pipeline.start" {
		t.Fatalf("merge without a start: %v", err)
	}
}

// TestMergedKeepsOpenConflicts: a conflict one side found after the base
// and has not resolved survives a merge with a side that never saw it; one
// that a side resolved since the base does not come back; a resolve whose
// conflict is already gone is no conflict.
func TestMergedKeepsOpenConflicts(t *testing.T) {
	open := Conflict{Phase: ledger.Design, Type: "gate", Event: "e1 e2", Message: "one clone recorded PASS (writer w-a), another FAIL (writer w-b)"}
	decision := func(writer string) func(t *testing.T, st *State) []Event {
		return func(t *testing.T, st *State) []Event {
			return []Event{evBy(t, st, writer, TypeDecision, DecisionData{Type: "t", Choice: writer})}
		}
	}
	// Side b merged a conflict of its own after the base: it stays.
	base, a, b := diverge(t, decision("w-a"), decision("w-b"))
	bState := *base
	bState.Conflicts = []Conflict{open}
	st, err := Merged(base, Side{Events: a}, Side{State: &bState, Events: b})
	if err != nil || len(st.Conflicts) != 1 || st.Conflicts[0] != open {
		t.Fatalf("a side's open conflict was dropped: %v %+v", err, st.Conflicts)
	}
	// The base had it; side a resolved it, side b did not: it is resolved.
	withConflict := *base
	withConflict.Conflicts = []Conflict{open}
	left, right := withConflict, withConflict
	resolve := evBy(t, &left, "w-a", TypeResolve, ResolveData{Phase: ledger.Design, Reason: "re-ran"})
	other := evBy(t, &right, "w-b", TypeDecision, DecisionData{Type: "t", Choice: "c"})
	st, err = Merged(&withConflict, Side{State: &left, Events: []Event{resolve}}, Side{State: &right, Events: []Event{other}})
	if err != nil || len(st.Conflicts) != 0 {
		t.Fatalf("a resolved conflict came back: %v %+v", err, st.Conflicts)
	}
	// The same resolve arriving again, with nothing left to resolve.
	st, err = Merged(st, Side{Events: []Event{resolve}}, Side{})
	if err != nil || len(st.Conflicts) != 0 {
		t.Fatalf("a spent resolve became a conflict: %v %+v", err, st.Conflicts)
	}
}

// TestResolveSettlesWhatItNamed: a resolve settles the conflicts it names,
// not one that reaches the state later; and a conflict a side resolved does
// not come back through the other side, which still carries it.
func TestResolveSettlesWhatItNamed(t *testing.T) {
	seen := Conflict{Phase: ledger.Design, Type: "gate", Event: "e1 e2", Message: "seen"}
	later := Conflict{Phase: ledger.Design, Type: "gate", Event: "e3 e4", Message: "arrived later"}
	st := started(t)
	st.Conflicts = []Conflict{seen}
	keys := st.Resolvable(ledger.Design)
	resolve := ev(t, st, TypeResolve, ResolveData{Phase: ledger.Design, Conflicts: keys, Reason: "looked at e1 e2"})
	st.Conflicts = []Conflict{seen, later}
	if _, err := st.Apply(resolve); err != nil {
		t.Fatal(err)
	}
	if len(st.Conflicts) != 1 || st.Conflicts[0] != later {
		t.Fatalf("the resolve swept away what it never saw: %+v", st.Conflicts)
	}

	// Criss-cross: both sides merged the same conflict; a resolved it, b did not.
	base := started(t)
	a, b := *base, *base
	a.Conflicts, b.Conflicts = []Conflict{seen}, []Conflict{seen}
	r := evBy(t, &a, "w-a", TypeResolve, ResolveData{Conflicts: []string{seen.Key()}, Reason: "re-ran"})
	d := evBy(t, &b, "w-b", TypeDecision, DecisionData{Type: "t", Choice: "c"})
	merged, err := Merged(base, Side{State: &a, Events: []Event{r}}, Side{State: &b, Events: []Event{d}})
	if err != nil || len(merged.Conflicts) != 0 {
		t.Fatalf("a resolved conflict came back: %v %+v", err, merged.Conflicts)
	}
}

// TestMergedReplayIsNoGateConflict: a clone replays from Phase 1 while
// the other, not knowing, goes on with the run the replay replaces (begins
// Phase 2, closes a gate differently): its records go with that run — the
// merged state is the replay's, with no conflict, from either side. A gate
// closed differently by two clones that did not replay stays a conflict.
func TestMergedReplayIsNoGateConflict(t *testing.T) {
	st := &State{}
	evBy(t, st, "w-base", TypeStart, StartData{ID: "p1", Goal: "g", Mode: "feature", Branch: "main"})
	evBy(t, st, "w-base", LedgerType(ledger.Begin), LedgerData{Phase: ledger.Design})
	evBy(t, st, "w-base", TypeVerdict, VerdictData{Phase: ledger.Design, Verdict: "PASS", PipelineID: "p1", Rounds: 1})
	base := *st
	replayer, other := *st, *st
	a := []Event{
		evBy(t, &replayer, "w-a", TypeReplay, ReplayData{Session: "replay-1", From: ledger.Design}),
		evBy(t, &replayer, "w-a", LedgerType(ledger.Begin), LedgerData{Phase: ledger.Design}),
		evBy(t, &replayer, "w-a", TypeVerdict, VerdictData{Phase: ledger.Design, Verdict: "FAIL", PipelineID: "p1", Rounds: 3}),
		evBy(t, &replayer, "w-a", LedgerType(ledger.FailPhase), LedgerData{Phase: ledger.Design, Reason: "the swapped template"}),
	}
	b := []Event{
		evBy(t, &other, "w-b", LedgerType(ledger.PassGate), LedgerData{Phase: ledger.Design, Reason: "ok"}),
		evBy(t, &other, "w-b", LedgerType(ledger.Begin), LedgerData{Phase: ledger.Plan}),
	}
	for _, sides := range [][2]Side{{{State: &replayer, Events: a}, {State: &other, Events: b}}, {{State: &other, Events: b}, {State: &replayer, Events: a}}} {
		m, err := Merged(&base, sides[0], sides[1])
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Conflicts) != 0 {
			t.Fatalf("conflicts: %v", m.Conflicts)
		}
		if got := m.Gates.Ledger.Entry(ledger.Design).Status; got != ledger.Fail {
			t.Fatalf("Phase 1 is %s, not the replay's FAIL", got)
		}
	}
	// Without the replay, the two closings conflict.
	m, err := Merged(&base, Side{State: &replayer, Events: a[2:]}, Side{State: &other, Events: b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Conflicts) == 0 {
		t.Fatal("a gate closed differently by two clones is no conflict")
	}
}
