package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/pipeline"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show a pipeline's events, newest first",
		ArgsUsage: " ",
		Flags: commonFlags(&cli.IntFlag{Name: "max-count", Aliases: []string{"n"}, Value: 0,
			Usage: "show at most `N` events"}),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			limit := c.Int("max-count")
			if limit < 0 {
				return usageErrorf("--max-count cannot be negative")
			}
			return withPipeline(c, func(s *session, id string) error {
				type entry struct {
					pipeline.Event
					Commit string `json:"commit"`
				}
				var out []entry
				err := s.svc.Store.EventLog(c.Context, id, func(commit string, blob []byte) (bool, error) {
					events, err := pipeline.DecodeEvents(blob)
					if err != nil {
						return false, fmt.Errorf("commit %s: %w", commit, err)
					}
					for i := len(events) - 1; i >= 0; i-- {
						if limit > 0 && len(out) == limit {
							return false, nil
						}
						out = append(out, entry{Event: events[i], Commit: commit})
					}
					return true, nil
				})
				if err != nil {
					return err
				}
				if s.jsonOut() {
					return s.printJSON(out)
				}
				for _, e := range out {
					fmt.Fprintf(s.out(), "%4d %s %s %s  [%s]\n", e.Seq, e.Time, e.Commit[:12], pipeline.Describe(e.Event), e.Writer)
				}
				return nil
			})
		},
	}
}
