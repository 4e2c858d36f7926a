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
			"estimated tokens (characters / 4), and where each quality gate stands, as 'status' says it:\n" +
			"PASS, USER_SKIP (skipped and acknowledged), SKIPPED (not acknowledged), IN_PROGRESS, FAIL,\n" +
			"INFERRED, NOT_REACHED, or MISSING (a later phase began without it). A WARNING names every gate\n" +
			"that is neither passed, skipped with acknowledgement nor under way.",
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
				if s.jsonOut() {
					return s.printJSON(r)
				}
				_, err = s.out().Write(interop.RenderSummary(r))
				return err
			})
		},
	}
}
