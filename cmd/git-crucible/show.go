package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one pipeline: header, state and ledger",
		ArgsUsage: "[<pipeline>]",
		Flags:     commonFlags(),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 1); err != nil {
				return err
			}
			if c.NArg() == 1 {
				if c.String("pipeline") != "" {
					return usageErrorf("name the pipeline once: as an argument or with --pipeline")
				}
				if err := c.Set("pipeline", c.Args().First()); err != nil {
					return err
				}
			}
			return withPipeline(c, func(s *session, id string) error {
				st, head, err := s.svc.Load(c.Context, id)
				if err != nil {
					return err
				}
				if s.jsonOut() {
					return s.printJSON(map[string]any{"commit": head.Commit, "state": st})
				}
				writeHeader(s.out(), s, st)
				fmt.Fprintf(s.out(), "Commit:   %s\nEvents:   %d\n\n", head.Commit, st.Seq)
				_, err = s.out().Write(ledger.Render(&st.Gates.Ledger))
				return err
			})
		},
	}
}

func writeHeader(w io.Writer, s *session, st *pipeline.State) {
	fmt.Fprintf(w, "Pipeline: %s (%s)\nGoal:     %s\nMode:     %s\nBranch:   %s\n", st.ID, st.Condition(), oneLine(st.Goal), st.Mode, st.Branch)
	switch {
	case st.Baseline == "":
	case s.svc.EmptyBaseline(st):
		fmt.Fprintf(w, "Baseline: %s (the empty tree: the branch had no commits)\n", st.Baseline)
	default:
		fmt.Fprintf(w, "Baseline: %s\n", st.Baseline)
	}
	fmt.Fprintf(w, "Started:  %s\nUpdated:  %s\n", st.Created, st.Updated)
}
