package interop

import (
	"strconv"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func TestRenderSummary(t *testing.T) {
	r := pipeline.Summary{Dispatches: 6, ByTier: map[string]int{"sonnet": 2, "opus": 2, "haiku": 3}, ActiveS: 10_020, WallClockS: 59,
		GateRounds: map[string]int{"design": 2, "impl": 1}, InputChars: 1_234_567, InputTokens: 308_641, OutputChars: 999, OutputTokens: 249,
		Gates: map[string]string{"design": pipeline.GatePassed, "plan": pipeline.GateMissing, "impl": pipeline.GateMissing}}
	want := `-- Pipeline Complete ----------------------------------------
Subagents dispatched: 6 (3 Haiku, 2 Opus, 2 Sonnet)
Active work time: 2h 47m
Wall clock time: 0m
Quality gate rounds: 3 (design: 2, plan: 0, impl: 1)
Est. input tokens: ~308,641 (1,234,567 chars)
Est. output tokens: ~249 (999 chars)
Token estimate note: Based on dispatch file sizes (chars/4). Actual consumption may vary +/-30%.
Gates: design PASS, plan MISSING, impl MISSING
WARNING: gate(s) neither passed, skipped with acknowledgement nor under way: plan, impl
-------------------------------------------------------------
`
	if got := string(RenderSummary(r)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	r = pipeline.Summary{Gates: map[string]string{"design": pipeline.GatePassed, "plan": pipeline.GateSkipped, "impl": pipeline.GatePassed}}
	want = `-- Pipeline Complete ----------------------------------------
Subagents dispatched: 0
Active work time: 0m
Wall clock time: 0m
Quality gate rounds: 0 (design: 0, plan: 0, impl: 0)
Est. input tokens: ~0 (0 chars)
Est. output tokens: ~0 (0 chars)
Token estimate note: Based on dispatch file sizes (chars/4). Actual consumption may vary +/-30%.
Gates: design PASS, plan USER_SKIP, impl PASS
-------------------------------------------------------------
`
	if got := string(RenderSummary(r)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestGateStatesAgree renders metrics and the status file from one state
// for every quality gate in every ledger status, before and after a later
// phase began: both must say the same.
func TestGateStatesAgree(t *testing.T) {
	rows := []struct {
		status ledger.Status
		ack    bool
		later  bool   // a later phase has begun
		state  string // what metrics says
		line   string // what the status file says
	}{
		{ledger.NotStarted, false, false, "NOT_REACHED", "not yet reached"},
		{ledger.NotStarted, false, true, "MISSING", "MISSING"},
		{ledger.InProgress, false, false, "IN_PROGRESS", "IN_PROGRESS"},
		{ledger.InProgress, false, true, "IN_PROGRESS", "IN_PROGRESS"},
		{ledger.Pass, false, false, "PASS", "PASSED (2 rounds)"},
		{ledger.Pass, false, true, "PASS", "PASSED (2 rounds)"},
		{ledger.Complete, false, false, "MISSING", "MISSING"},
		{ledger.Complete, false, true, "MISSING", "MISSING"},
		{ledger.Fail, false, false, "FAIL", "FAIL"},
		{ledger.Fail, false, true, "FAIL", "FAIL"},
		{ledger.Skipped, false, false, "SKIPPED", "SKIPPED (not acknowledged)"},
		{ledger.Skipped, false, true, "SKIPPED", "SKIPPED (not acknowledged)"},
		{ledger.Skipped, true, false, "USER_SKIP", "SKIPPED (acknowledged)"},
		{ledger.Skipped, true, true, "USER_SKIP", "SKIPPED (acknowledged)"},
		{ledger.Inferred, false, false, "INFERRED", "INFERRED"},
		{ledger.Inferred, false, true, "INFERRED", "INFERRED"},
	}
	gates := []struct {
		name, title string
		phase       ledger.Phase
	}{{"design", "Design", ledger.Design}, {"plan", "Plan", ledger.Plan}, {"impl", "Code", ledger.Completion}}
	for i, g := range gates {
		for _, r := range rows {
			if r.later && g.phase == ledger.Completion {
				continue // no phase comes after Completion
			}
			st := &pipeline.State{Gates: ledger.New("p1", "", "goal", "feature")}
			// The phases before the gate passed; the one after began or not.
			for p := ledger.Design; p < g.phase; p++ {
				st.Gates.Ledger.Entry(p).Status = map[bool]ledger.Status{true: ledger.Pass, false: ledger.Complete}[p.HasQualityGate()]
			}
			*st.Gates.Ledger.Entry(g.phase) = ledger.Entry{Status: r.status, Acknowledged: r.ack}
			if r.later {
				st.Gates.Ledger.Entry(g.phase + 1).Status = ledger.InProgress
			}
			st.View.Metrics.GateRounds = map[string]int{strconv.Itoa(int(g.phase)): 2}

			sum := pipeline.Summarize(st)
			doc := StatusOf(st, "2026-11-22T10:00:00Z")
			if sum.Gates[g.name] != r.state {
				t.Errorf("%s %s ack=%v later=%v: metrics says %s, want %s", g.name, r.status, r.ack, r.later, sum.Gates[g.name], r.state)
			}
			if want := g.title + ": " + r.line; doc.QualityGates[i] != want {
				t.Errorf("%s %s ack=%v later=%v: status says %q, want %q", g.name, r.status, r.ack, r.later, doc.QualityGates[i], want)
			}
			text := string(RenderSummary(sum))
			warned := strings.Contains(text, "WARNING: gate(s) neither passed, skipped with acknowledgement nor under way: "+g.name+"\n")
			if want := pipeline.GateNeedsAttention(r.state); warned != want {
				t.Errorf("%s %s ack=%v later=%v: metrics warns %v, want %v:\n%s", g.name, r.status, r.ack, r.later, warned, want, text)
			}
		}
	}
}
