package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/pipeline"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "replay pipeline chains and report anything illegal or broken",
		ArgsUsage: "[<pipeline>]",
		Description: "Replays each chain from its root: every event must be a legal transition from the state\n" +
			"before it (a PASS needs its verdict, a start its gate), every commit must have the expected\n" +
			"structure and a known format, and the state.json and ledger.md it carries must be what its\n" +
			"events produce. Exits 0 only when everything checked is sound.",
		Flags: commonFlags(&cli.BoolFlag{Name: "all", Usage: "verify every pipeline"}),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 1); err != nil {
				return err
			}
			if c.NArg() == 1 {
				if c.String("pipeline") != "" || c.Bool("all") {
					return usageErrorf("name the pipeline once, or use --all")
				}
				if err := c.Set("pipeline", c.Args().First()); err != nil {
					return err
				}
			}
			if c.Bool("all") && c.String("pipeline") != "" {
				return usageErrorf("--all and --pipeline cannot be used together")
			}
			return withRepo(c, func(s *session) error {
				var ids []string
				if c.Bool("all") {
					all, err := s.svc.Store.List()
					if err != nil {
						return err
					}
					ids = all
				} else {
					id, err := s.pipelineID()
					if err != nil {
						return err
					}
					ids = []string{id}
				}
				problems := []pipeline.Problem{}
				for _, id := range ids {
					found, err := s.svc.Verify(id)
					if err != nil {
						problems = append(problems, pipeline.Problem{Pipeline: id, Message: err.Error()})
						continue
					}
					problems = append(problems, found...)
					if len(found) == 0 && !s.jsonOut() {
						fmt.Fprintf(s.out(), "ok %s\n", id)
					}
				}
				if s.jsonOut() {
					if err := s.printJSON(map[string]any{"pipelines": ids, "ok": len(problems) == 0, "problems": problems}); err != nil {
						return err
					}
				} else {
					for _, p := range problems {
						fmt.Fprintf(s.out(), "problem %s\n", p)
					}
				}
				if len(problems) > 0 {
					if !s.jsonOut() {
						fmt.Fprintf(s.err(), "error: %d problem(s) in %d pipeline(s)\n", len(problems), len(ids))
					}
					return &silentExit{code: exitRefused}
				}
				return nil
			})
		},
	}
}
