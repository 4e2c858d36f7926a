package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/ledger"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the pipeline's goal, branch, phase and gate ledger",
		ArgsUsage: " ",
		Flags:     commonFlags(),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error {
				st, err := s.load()
				if err != nil {
					return err
				}
				blocked := st.Gates.Check()
				if s.jsonOut() {
					return s.printJSON(map[string]any{"state": st, "allowed": blocked == nil, "blocked": blockedJSON(blocked)})
				}
				printHeader(s, st)
				cur := st.Gates.Ledger.Entry(st.Phase)
				fmt.Fprintf(s.out(), "Phase:    %s — %s\n\n", phaseLabel(st.Phase), cur.Status)
				for _, p := range ledger.Phases {
					e := st.Gates.Ledger.Entry(p)
					note := e.Reason
					switch {
					case e.Status == ledger.Skipped && e.Acknowledged:
						note = "acknowledged: " + note
					case e.Status == ledger.Skipped:
						note = "NOT acknowledged: " + note
					case e.Tasks != "":
						note = e.Tasks
					case e.Artifact != "":
						note = e.Artifact
					}
					fmt.Fprintf(s.out(), "  %d %-10s %-11s %s\n", p, p.Name(), e.Status, note)
				}
				if blocked != nil {
					fmt.Fprintf(s.out(), "\n%s\n", blocked.Error())
				}
				return nil
			})
		},
	}
}
