package interop

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/git-crucible/git-crucible/pipeline"
)

// RenderSummary is the build skill's "Pipeline Complete" block of r. When
// some dispatches' clients reported their usage (r.Cost), the estimates by
// size are of the other dispatches only, and two lines follow them: the
// tokens reported, and what the dispatches cost.
func RenderSummary(r pipeline.Summary) []byte {
	var w bytes.Buffer
	fmt.Fprintln(&w, "-- Pipeline Complete ----------------------------------------")
	tiers := make([]string, 0, len(r.ByTier))
	for t := range r.ByTier {
		tiers = append(tiers, t)
	}
	sort.Slice(tiers, func(i, j int) bool {
		if r.ByTier[tiers[i]] != r.ByTier[tiers[j]] {
			return r.ByTier[tiers[i]] > r.ByTier[tiers[j]]
		}
		return tiers[i] < tiers[j]
	})
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		parts[i] = fmt.Sprintf("%d %s", r.ByTier[t], strings.ToUpper(t[:1])+t[1:])
	}
	fmt.Fprintf(&w, "Subagents dispatched: %d", r.Dispatches)
	if len(parts) > 0 {
		fmt.Fprintf(&w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&w, "\nActive work time: %s\nWall clock time: %s\n", hm(r.ActiveS), hm(r.WallClockS))
	total := r.GateRounds["design"] + r.GateRounds["plan"] + r.GateRounds["impl"]
	fmt.Fprintf(&w, "Quality gate rounds: %d (design: %d, plan: %d, impl: %d)\n", total,
		r.GateRounds["design"], r.GateRounds["plan"], r.GateRounds["impl"])
	if c := r.Cost; c != nil && c.Reported > 0 {
		// Some clients reported what they used: the estimates are of the
		// other dispatches only, and the reported tokens and price follow.
		fmt.Fprintf(&w, "Est. input tokens: ~%s (%s chars)\n", thousands(c.EstInputTokens), thousands(c.EstInputChars))
		fmt.Fprintf(&w, "Est. output tokens: ~%s (%s chars)\n", thousands(c.EstOutputTokens), thousands(c.EstOutputChars))
		if c.Estimated == 0 {
			fmt.Fprintln(&w, "Token estimate note: None needed: every dispatch's client reported its usage.")
		} else {
			fmt.Fprintf(&w, "Token estimate note: Based on dispatch file sizes (chars/4), for the %d of %d dispatches whose agent reported no usage. Actual consumption may vary +/-30%%.\n",
				c.Estimated, c.Dispatches)
		}
		reported := c.CostLine
		reported.Estimated = 0 // Tokens() without the estimate, said above
		fmt.Fprintf(&w, "Reported tokens: %s, for %d of %d dispatches\n", strings.TrimSuffix(reported.Tokens(), " reported"), c.Reported, c.Dispatches)
		fmt.Fprintf(&w, "Cost: %s\n", c.Summary())
	} else {
		fmt.Fprintf(&w, "Est. input tokens: ~%s (%s chars)\n", thousands(r.InputTokens), thousands(r.InputChars))
		fmt.Fprintf(&w, "Est. output tokens: ~%s (%s chars)\n", thousands(r.OutputTokens), thousands(r.OutputChars))
		fmt.Fprintln(&w, "Token estimate note: Based on dispatch file sizes (chars/4). Actual consumption may vary +/-30%.")
	}
	var missing []string
	for _, g := range pipeline.QualityGates {
		if pipeline.GateNeedsAttention(r.Gates[g.Name]) {
			missing = append(missing, g.Name)
		}
	}
	fmt.Fprintf(&w, "Gates: design %s, plan %s, impl %s\n", r.Gates["design"], r.Gates["plan"], r.Gates["impl"])
	if len(missing) > 0 {
		fmt.Fprintf(&w, "WARNING: gate(s) neither passed, skipped with acknowledgement nor under way: %s\n", strings.Join(missing, ", "))
	}
	fmt.Fprintln(&w, "-------------------------------------------------------------")
	return w.Bytes()
}

// hm formats seconds as "2h 47m" (minutes rounded down).
func hm(s int) string {
	if s >= 3600 {
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dm", s/60)
}

// thousands writes n with comma separators: 128,400.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
