package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func metricsCommand() *cli.Command {
	return &cli.Command{
		Name:      "metrics",
		Usage:     "print the run summary (crucible's \"Pipeline Complete\" block)",
		ArgsUsage: " ",
		Description: "Dispatches by role and model tier, active work time (overlapping dispatches merged, not\n" +
			"summed), wall clock from the first dispatch to the last finish, quality-gate rounds per gate,\n" +
			"and estimated tokens (characters / 4). Any gate that was neither passed nor skipped with an\n" +
			"acknowledgement is flagged as MISSING.",
		Flags: commonFlags(),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error {
				st, err := s.load(c.Context)
				if err != nil {
					return err
				}
				r := summarize(st)
				if s.jsonOut() {
					return s.printJSON(r)
				}
				writeSummary(s.out(), r)
				return nil
			})
		},
	}
}

// runSummary is what metrics reports.
type runSummary struct {
	Pipeline     string            `json:"pipeline"`
	Dispatches   int               `json:"dispatches"`
	ByRole       map[string]int    `json:"by_role"`
	ByTier       map[string]int    `json:"by_tier"`
	ActiveS      int               `json:"active_s"`
	WallClockS   int               `json:"wall_clock_s"`
	GateRounds   map[string]int    `json:"gate_rounds"` // design, plan, impl
	InputChars   int               `json:"input_chars"`
	OutputChars  int               `json:"output_chars"`
	InputTokens  int               `json:"est_input_tokens"`
	OutputTokens int               `json:"est_output_tokens"`
	Gates        map[string]string `json:"gates"` // design, plan, impl: PASS, USER_SKIP or MISSING
}

// gateNames are the three quality gates in crucible's words.
var gateNames = []struct {
	name  string
	phase ledger.Phase
}{{"design", ledger.Design}, {"plan", ledger.Plan}, {"impl", ledger.Completion}}

func summarize(st *pipeline.State) runSummary {
	m := st.View.Metrics
	r := runSummary{Pipeline: st.ID, ByRole: orEmpty(m.ByRole), ByTier: orEmpty(m.ByTier), ActiveS: m.ActiveS(),
		InputChars: m.InputChars, OutputChars: m.OutputChars, InputTokens: m.InputChars / 4, OutputTokens: m.OutputChars / 4,
		GateRounds: map[string]int{}, Gates: map[string]string{}}
	for _, n := range m.ByRole {
		r.Dispatches += n
	}
	if m.FirstStart != "" && m.LastFinish != "" {
		r.WallClockS = pipeline.Seconds(m.FirstStart, m.LastFinish)
	}
	for _, g := range gateNames {
		r.GateRounds[g.name] = m.GateRounds[fmt.Sprint(int(g.phase))]
		e := st.Gates.Ledger.Entry(g.phase)
		switch {
		case e.Status == ledger.Pass:
			r.Gates[g.name] = "PASS"
		case e.Status == ledger.Skipped && e.Acknowledged:
			r.Gates[g.name] = "USER_SKIP"
		default:
			r.Gates[g.name] = "MISSING"
		}
	}
	return r
}

func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// writeSummary prints the build seed's "Pipeline Complete" block.
func writeSummary(w io.Writer, r runSummary) {
	fmt.Fprintln(w, "-- Pipeline Complete ----------------------------------------")
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
	fmt.Fprintf(w, "Subagents dispatched: %d", r.Dispatches)
	if len(parts) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "\nActive work time: %s\nWall clock time: %s\n", hm(r.ActiveS), hm(r.WallClockS))
	total := r.GateRounds["design"] + r.GateRounds["plan"] + r.GateRounds["impl"]
	fmt.Fprintf(w, "Quality gate rounds: %d (design: %d, plan: %d, impl: %d)\n", total,
		r.GateRounds["design"], r.GateRounds["plan"], r.GateRounds["impl"])
	fmt.Fprintf(w, "Est. input tokens: ~%s (%s chars)\n", thousands(r.InputTokens), thousands(r.InputChars))
	fmt.Fprintf(w, "Est. output tokens: ~%s (%s chars)\n", thousands(r.OutputTokens), thousands(r.OutputChars))
	fmt.Fprintln(w, "Token estimate note: Based on dispatch file sizes (chars/4). Actual consumption may vary +/-30%.")
	var missing []string
	for _, g := range gateNames {
		if r.Gates[g.name] == "MISSING" {
			missing = append(missing, g.name)
		}
	}
	fmt.Fprintf(w, "Gates: design %s, plan %s, impl %s\n", r.Gates["design"], r.Gates["plan"], r.Gates["impl"])
	if len(missing) > 0 {
		fmt.Fprintf(w, "WARNING: gate(s) neither passed nor skipped with acknowledgement: %s\n", strings.Join(missing, ", "))
	}
	fmt.Fprintln(w, "-------------------------------------------------------------")
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
