package interop

import (
	"testing"

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
WARNING: gate(s) neither passed nor skipped with acknowledgement: plan, impl
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
