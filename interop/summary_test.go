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

// TestRenderSummaryCost: once some clients reported usage, the estimates
// are of the others, and the reported tokens and the cost follow them;
// with nothing reported the block is crucible's as it was.
func TestRenderSummaryCost(t *testing.T) {
	base := pipeline.Summary{Dispatches: 3, InputChars: 4000, InputTokens: 1000, OutputChars: 400, OutputTokens: 100,
		Gates: map[string]string{"design": pipeline.GateRunning, "plan": pipeline.GateNotReached, "impl": pipeline.GateNotReached}}
	head := `-- Pipeline Complete ----------------------------------------
Subagents dispatched: 3
Active work time: 0m
Wall clock time: 0m
Quality gate rounds: 0 (design: 0, plan: 0, impl: 0)
`
	tail := `Gates: design IN_PROGRESS, plan NOT_REACHED, impl NOT_REACHED
-------------------------------------------------------------
`
	cost := 0.0421
	cases := []struct {
		name string
		cost *pipeline.Cost
		want string
	}{
		{"none reported", &pipeline.Cost{CostLine: pipeline.CostLine{Dispatches: 3, Estimated: 3, EstInputChars: 4000, EstInputTokens: 1000}}, `Est. input tokens: ~1,000 (4,000 chars)
Est. output tokens: ~100 (400 chars)
Token estimate note: Based on dispatch file sizes (chars/4). Actual consumption may vary +/-30%.
`},
		{"some reported", &pipeline.Cost{CostLine: pipeline.CostLine{Dispatches: 3, Reported: 2, Priced: 1, CostUSD: cost, InputTokens: 2100,
			OutputTokens: 390, CacheReadTokens: 5000, Estimated: 1, EstInputChars: 1221, EstOutputChars: 49, EstInputTokens: 305, EstOutputTokens: 12},
			Clients: map[string]pipeline.ClientCost{"claude": {Dispatches: 1, Priced: 1, CostUSD: cost}, "codex": {Dispatches: 1}}}, `Est. input tokens: ~305 (1,221 chars)
Est. output tokens: ~12 (49 chars)
Token estimate note: Based on dispatch file sizes (chars/4), for the 1 of 3 dispatches whose agent reported no usage. Actual consumption may vary +/-30%.
Reported tokens: 2,100 in (+5,000 cache read), 390 out, for 2 of 3 dispatches
Cost: $0.04 (claude, 1 of 3 dispatches; codex gave tokens but no price for 1; 1 estimated by size)
`},
		{"all reported", &pipeline.Cost{CostLine: pipeline.CostLine{Dispatches: 3, Reported: 3, Priced: 3, CostUSD: 1.5, InputTokens: 30, OutputTokens: 3},
			Clients: map[string]pipeline.ClientCost{"claude": {Dispatches: 3, Priced: 3, CostUSD: 1.5}}}, `Est. input tokens: ~0 (0 chars)
Est. output tokens: ~0 (0 chars)
Token estimate note: None needed: every dispatch's client reported its usage.
Reported tokens: 30 in, 3 out, for 3 of 3 dispatches
Cost: $1.50 (claude, 3 of 3 dispatches)
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.Cost = tc.cost
			if got, want := string(RenderSummary(r)), head+tc.want+tail; got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
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
