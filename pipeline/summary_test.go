package pipeline

import (
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

func TestGateOutcome(t *testing.T) {
	cases := []struct {
		e    ledger.Entry
		want string
	}{
		{ledger.Entry{Status: ledger.Pass}, GatePassed},
		{ledger.Entry{Status: ledger.Pass, Acknowledged: true}, GatePassed},
		{ledger.Entry{Status: ledger.Skipped, Acknowledged: true}, GateSkipped},
		{ledger.Entry{Status: ledger.Skipped}, GateMissing},
		{ledger.Entry{Status: ledger.Fail}, GateMissing},
		{ledger.Entry{Status: ledger.InProgress}, GateMissing},
		{ledger.Entry{Status: ledger.NotStarted}, GateMissing},
		{ledger.Entry{Status: ledger.Complete}, GateMissing},
	}
	for _, c := range cases {
		if got := GateOutcome(c.e); got != c.want {
			t.Errorf("%+v: %s, want %s", c.e, got, c.want)
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
	if r.Gates["design"] != GatePassed || r.Gates["plan"] != GateSkipped || r.Gates["impl"] != GateMissing {
		t.Fatalf("gates %v", r.Gates)
	}
}
