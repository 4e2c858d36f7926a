package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/pipeline"
)

func metricsCommand() *cli.Command {
	return &cli.Command{
		Name:      "metrics",
		Usage:     "print the run summary (crucible's \"Pipeline Complete\" block)",
		ArgsUsage: " ",
		Description: "Dispatches by role and model tier, active work time (overlapping dispatches merged, not\n" +
			"summed), wall clock from the first dispatch to the last finish, quality-gate rounds per gate,\n" +
			"estimated tokens (characters / 4; an imported dispatch's are its dispatch file's and output's\n" +
			"when its manifest line gives no input_chars or output_chars), and where each quality gate\n" +
			"stands, as 'status' says it: PASS, USER_SKIP (skipped and acknowledged), SKIPPED (not\n" +
			"acknowledged), IN_PROGRESS, FAIL, INFERRED, NOT_REACHED, or MISSING (a later phase began\n" +
			"without it). A WARNING names every gate that is neither passed, skipped with acknowledgement\n" +
			"nor under way. An imported run's wall clock is its own span, from its start to the last time\n" +
			"its files record: until it does something here, 'status' gives that as its Elapsed time.\n\n" +
			"When agents' clients reported what their dispatches used (claude: tokens and a price; codex:\n" +
			"tokens only), the estimates are of the other dispatches only, and the block adds the reported\n" +
			"tokens and the cost, which says how much of it is known: \"Cost: $0.42 (claude, 12 of 14\n" +
			"dispatches; 2 estimated by size)\". A price is never estimated: a client that gave tokens but no\n" +
			"price is named as such. Then the cost by phase, by role and by task follows the block.\n" +
			"--json adds \"cost\": the totals (dispatches, reported, priced, cost_usd, input_tokens, output_tokens,\n" +
			"cache_read_tokens, cache_creation_tokens, estimated, est_input_chars, est_output_chars,\n" +
			"est_input_tokens, est_output_tokens), \"clients\", \"by_phase\", \"by_role\" and \"by_task\"; the\n" +
			"top-level est_input_tokens and est_output_tokens stay crucible's estimates of every dispatch.",
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
				r := pipeline.Summarize(st)
				cost, err := s.svc.Cost(c.Context, st.ID)
				if err != nil {
					return err
				}
				r.Cost = &cost
				if s.jsonOut() {
					return s.printJSON(r)
				}
				if _, err = s.out().Write(interop.RenderSummary(r)); err != nil {
					return err
				}
				if cost.Reported > 0 {
					writeCostTable(s.out(), &cost)
				}
				return nil
			})
		},
	}
}
