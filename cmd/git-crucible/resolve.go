package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func resolveCommand() *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "settle conflicts found when two clones' pipeline histories were merged",
		ArgsUsage: " ",
		Description: "When `git crucible sync` merges a pipeline that two clones both wrote to, a gate that the\n" +
			"clones closed differently (say PASS on one, FAIL on the other), or an event that no longer\n" +
			"applies, is recorded as a conflict. `status` lists them; gate conflicts block `ledger check`\n" +
			"and the hooks. Look at both records, bring the gate to the status it should have (e.g. re-run\n" +
			"it), then record why the current state stands with this command. --phase settles that phase's\n" +
			"conflicts; without it, all of them. Exits 1 when there is nothing to resolve.",
		Flags: commonFlags(
			&cli.IntFlag{Name: "phase", Usage: "settle the conflicts of phase `N` (1-4) only"},
			&cli.StringFlag{Name: "reason", Usage: "why the current state stands (required)"},
		),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			if err := requireFlags(c, "reason"); err != nil {
				return err
			}
			phase := ledger.Phase(c.Int("phase"))
			if c.IsSet("phase") && !phase.Valid() {
				return usageErrorf("invalid phase %d (want 1-4)", c.Int("phase"))
			}
			reason := oneLine(c.String("reason"))
			return withPipeline(c, func(s *session, id string) error {
				var resolved int
				st, _, err := s.svc.Update(c.Context, id, func(st *pipeline.State, _ string) (*pipeline.Change, error) {
					// Exactly the conflicts on record now: one that arrives
					// later from another clone needs its own look.
					d := pipeline.ResolveData{Phase: phase, Conflicts: st.Resolvable(phase), Reason: reason}
					resolved = len(d.Conflicts)
					return &pipeline.Change{Drafts: []pipeline.Draft{{Type: pipeline.TypeResolve, Data: d}}}, nil
				})
				if err != nil {
					return &refused{Err: err}
				}
				if s.jsonOut() {
					return s.printJSON(map[string]any{"pipeline": id, "resolved": resolved, "conflicts": st.Conflicts})
				}
				fmt.Fprintf(s.out(), "Resolved %d conflict(s); %d left\n", resolved, len(st.Conflicts))
				return nil
			})
		},
	}
}
