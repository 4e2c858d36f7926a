package pipeline

import (
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

func TestGateStates(t *testing.T) {
	cases := []struct {
		e     ledger.Entry
		later bool // a later phase has begun
		want  string
	}{
		{ledger.Entry{Status: ledger.Pass}, false, GatePassed},
		{ledger.Entry{Status: ledger.Pass, Acknowledged: true}, true, GatePassed},
		{ledger.Entry{Status: ledger.Skipped, Acknowledged: true}, false, GateSkipped},
		{ledger.Entry{Status: ledger.Skipped, Acknowledged: true}, true, GateSkipped},
		{ledger.Entry{Status: ledger.Skipped}, false, GateUnacked},
		{ledger.Entry{Status: ledger.Skipped}, true, GateUnacked},
		{ledger.Entry{Status: ledger.Fail}, false, GateFailed},
		{ledger.Entry{Status: ledger.InProgress}, false, GateRunning},
		{ledger.Entry{Status: ledger.InProgress}, true, GateRunning},
		{ledger.Entry{Status: ledger.Inferred}, false, GateInferred},
		{ledger.Entry{Status: ledger.NotStarted}, false, GateNotReached},
		{ledger.Entry{Status: ledger.NotStarted}, true, GateMissing},
		{ledger.Entry{Status: ledger.Complete}, false, GateMissing},
	}
	for _, c := range cases {
		st := started(t)
		*st.Gates.Ledger.Entry(ledger.Plan) = c.e
		if c.later {
			st.Gates.Ledger.Entry(ledger.Execute).Status = ledger.InProgress
		}
		st.View.Metrics.GateRounds = map[string]int{"2": 3}
		got := GateStates(st)
		want := []GateState{{"design", ledger.Design, GateNotReached, 0}, {"plan", ledger.Plan, c.want, 3}, {"impl", ledger.Completion, GateNotReached, 0}}
		if c.later || c.e.Status != ledger.NotStarted {
			want[0].State = GateMissing // Design, still NOT_STARTED, was passed by
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v later=%v:\n got %+v\nwant %+v", c.e, c.later, got, want)
		}
	}
}

func TestGateNeedsAttention(t *testing.T) {
	for s, want := range map[string]bool{GatePassed: false, GateSkipped: false, GateRunning: false, GateNotReached: false,
		GateUnacked: true, GateFailed: true, GateInferred: true, GateMissing: true} {
		if got := GateNeedsAttention(s); got != want {
			t.Errorf("GateNeedsAttention(%s) = %v", s, got)
		}
	}
}

func TestSummarize(t *testing.T) {
	st := started(t)
	st.View.Metrics = Metrics{ByRole: map[string]int{"planner": 2, "reviewer": 1}, InputChars: 4003, OutputChars: 11,
		FirstStart: "2026-11-22T10:00:00Z", LastFinish: "2026-11-22T11:01:30Z", GateRounds: map[string]int{"1": 2, "3": 5, "4": 1}}
	st.Gates.Ledger.Entry(ledger.Design).Status = ledger.Pass
	*st.Gates.Ledger.Entry(ledger.Plan) = ledger.Entry{Status: ledger.Skipped, Acknowledged: true}
	r := Summarize(st)
	if r.Pipeline != "p1" || r.Dispatches != 3 || r.WallClockS != 3690 || r.InputTokens != 1000 || r.OutputTokens != 2 ||
		r.ByTier == nil || len(r.ByTier) != 0 {
		t.Fatalf("summary %+v", r)
	}
	if r.GateRounds["design"] != 2 || r.GateRounds["plan"] != 0 || r.GateRounds["impl"] != 1 {
		t.Fatalf("rounds %v", r.GateRounds)
	}
	if r.Gates["design"] != GatePassed || r.Gates["plan"] != GateSkipped || r.Gates["impl"] != GateNotReached {
		t.Fatalf("gates %v", r.Gates)
	}
}

// TestElapsed: a pipeline's elapsed time runs from its start to now; an
// imported run's is its own span, as metrics' wall clock, until it does
// something here.
func TestElapsed(t *testing.T) {
	native := &State{Created: "2026-04-13T14:00:00Z"}
	native.View.Metrics = Metrics{FirstStart: "2026-04-13T14:05:00Z", LastFinish: "2026-04-13T14:20:00Z"}
	if got := Elapsed(native, "2026-04-13T16:00:00Z"); got != 7200 {
		t.Errorf("native: Elapsed = %d, want 7200", got)
	}
	imported := *native
	imported.Seq, imported.Import.Seq = 3, 3
	if got, want := Elapsed(&imported, "2026-11-28T12:00:00Z"), Summarize(&imported).WallClockS; got != 900 || got != want {
		t.Errorf("imported: Elapsed = %d, want 900, the wall clock (%d)", got, want)
	}
	goneOn := imported
	goneOn.Seq = 4
	if got := Elapsed(&goneOn, "2026-04-13T16:00:00Z"); got != 7200 {
		t.Errorf("imported, gone on here: Elapsed = %d, want 7200", got)
	}
	imported.View.Metrics.LastFinish = ""
	if got := Elapsed(&imported, "2026-11-28T12:00:00Z"); got != 0 {
		t.Errorf("imported, no time recorded: Elapsed = %d, want 0", got)
	}
}
