package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/pipeline"
)

func decideCommand() *cli.Command {
	return &cli.Command{
		Name:      "decide",
		Usage:     "record a decision-journal entry",
		ArgsUsage: " ",
		Description: "Records crucible's journal line 'DECISION: <type> | choice=<what> | reason=<why> |\n" +
			"alternatives=<rejected>' as an event. Types the build skill uses: reviewer-model, review-tier,\n" +
			"gate-round, escalation (turns health RED), task-grouping, cleanup-removal. Decisions accumulate in\n" +
			"the status's compression state (past ten, the oldest fold into one line).",
		Flags: commonFlags(
			&cli.StringFlag{Name: "type", Usage: "decision `TYPE`"},
			&cli.StringFlag{Name: "choice", Usage: "what was chosen"},
			&cli.StringFlag{Name: "reason", Usage: "why"},
			&cli.StringFlag{Name: "alternatives", Usage: "what was rejected"},
		),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			if err := requireFlags(c, "type", "choice"); err != nil {
				return err
			}
			d := pipeline.DecisionData{Type: oneLine(c.String("type")), Choice: oneLine(c.String("choice")),
				Reason: oneLine(c.String("reason")), Alternatives: oneLine(c.String("alternatives"))}
			return withPipeline(c, func(s *session, id string) error {
				st, _, err := s.svc.Record(c.Context, id, pipeline.Draft{Type: pipeline.TypeDecision, Data: d})
				if err != nil {
					return ruleError(err, s.explicitPipeline(id))
				}
				j := st.View.Journal
				if s.jsonOut() {
					return s.printJSON(map[string]any{"pipeline": id, "decision": j.Decisions[len(j.Decisions)-1], "health": st.View.Health})
				}
				fmt.Fprintf(s.out(), "Recorded DEC-%d: %s: %s\n", j.Total, d.Type, d.Choice)
				return nil
			})
		},
	}
}
