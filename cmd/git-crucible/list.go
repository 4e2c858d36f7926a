package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/pipeline"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list pipelines (* marks the one active on the current branch)",
		ArgsUsage: " ",
		Description: "Lists the pipelines: id, status, phase and its gate, branch and goal. Archived pipelines\n" +
			"('git crucible replay --archive') are left out unless --archived is given; their status reads\n" +
			"'archived'.",
		Flags: commonFlags(
			&cli.BoolFlag{Name: "archived", Usage: "list the archived pipelines too"},
		),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error {
				ids, err := s.svc.Store.List(c.Context)
				if err != nil {
					return err
				}
				active, _ := s.svc.Resolve(c.Context, "") // "" when none is, or HEAD is detached
				type row struct {
					*pipeline.State
					Active   bool `json:"active"`
					Archived bool `json:"archived,omitempty"`
				}
				rows := make([]row, 0, len(ids))
				for _, id := range ids {
					st, _, err := s.svc.Load(c.Context, id)
					if err != nil {
						return err
					}
					rows = append(rows, row{State: st, Active: id == active})
				}
				if c.Bool("archived") {
					archived, err := s.svc.Store.ListArchived(c.Context)
					if err != nil {
						return err
					}
					for _, id := range archived {
						st, err := s.svc.LoadArchived(c.Context, id)
						if err != nil {
							return err
						}
						rows = append(rows, row{State: st, Archived: true})
					}
				}
				if s.jsonOut() {
					return s.printJSON(rows)
				}
				for _, r := range rows {
					mark := " "
					if r.Active {
						mark = "*"
					}
					condition := r.Condition()
					if r.Archived {
						condition = "archived"
					}
					fmt.Fprintf(s.out(), "%s %-30s %-9s phase %d %-11s %-16s %s\n", mark, r.ID, condition, r.Phase,
						r.Gates.Ledger.Entry(r.Phase).Status, r.Branch, oneLine(r.Goal))
				}
				return nil
			})
		},
	}
}
