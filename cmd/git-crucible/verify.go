package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/pipeline"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "replay pipeline chains, or audit a range of commits, and report anything illegal or broken",
		ArgsUsage: "[<pipeline>]",
		Description: "Replays each chain from its root: every event must be a legal transition from the state\n" +
			"before it (a PASS needs its verdict, a start its gate), every commit must have the expected\n" +
			"structure and a known format, and the state.json and ledger.md it carries must be what its\n" +
			"events produce.\n\n" +
			"With --range A..B or --branch B it audits commits instead, as CI should: every commit in the\n" +
			"range that carries Crucible-* trailers or a provenance note must name pipelines that are\n" +
			"present and sound, and must have been made while its phase was allowed (judged from the\n" +
			"pipeline's state at the ledger head its note records). Commits made with --no-verify are\n" +
			"listed as warnings. --rules push also applies what pre-push does (no pipeline FAIL, INFERRED,\n" +
			"in conflict or with an unacknowledged skip); --rules protected adds Phase 4 PASS.\n\n" +
			"Exits 0 only when everything checked is sound, 1 otherwise.",
		Flags: commonFlags(&cli.BoolFlag{Name: "all", Usage: "verify every pipeline"},
			&cli.StringFlag{Name: "range", Usage: "audit the commits of `A..B` (any rev-list range)"},
			&cli.StringFlag{Name: "branch", Usage: "audit every commit of branch `B`"},
			&cli.StringFlag{Name: "rules", Usage: "with --range/--branch: `commits` (default), push or protected"}),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 1); err != nil {
				return err
			}
			if c.IsSet("range") || c.IsSet("branch") {
				return auditRange(c)
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
					all, err := s.svc.Store.List(c.Context)
					if err != nil {
						return err
					}
					ids = all
				} else {
					id, err := s.pipelineID(c.Context)
					if err != nil {
						return err
					}
					ids = []string{id}
				}
				problems := []pipeline.Problem{}
				for _, id := range ids {
					found, err := s.svc.Verify(c.Context, id)
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
					return &silentExit{Code: exitRefused}
				}
				return nil
			})
		},
	}
}

// auditRange is verify --range/--branch: a per-commit report.
func auditRange(c *cli.Context) error {
	if c.NArg() > 0 || c.Bool("all") || c.String("pipeline") != "" || c.IsSet("range") == c.IsSet("branch") {
		return usageErrorf("use --range or --branch alone")
	}
	rules, err := enforce.RulesNamed(c.String("rules"))
	if err != nil {
		return usageErrorf("--rules must be commits, push or protected")
	}
	rev := c.String("range")
	if c.IsSet("branch") {
		rev = c.String("branch")
	}
	if rev == "" || strings.HasPrefix(rev, "-") {
		return usageErrorf("invalid range %q", rev)
	}
	return withRepo(c, func(s *session) error {
		report, err := enforce.NewAuditor(s.svc).Audit(c.Context, []string{rev}, rules)
		if err != nil {
			return err
		}
		if s.jsonOut() {
			if err := s.printJSON(report); err != nil {
				return err
			}
		} else {
			for _, f := range report.Findings {
				fmt.Fprintf(s.out(), "  %s\n", f)
			}
			fmt.Fprintf(s.out(), "%d commit(s) checked, %d made in pipelines (%s), %d error(s)\n", report.Commits, report.Crucible,
				strings.Join(report.Pipelines, ", "), report.Errors())
		}
		if report.Errors() > 0 {
			return &silentExit{Code: exitRefused}
		}
		return nil
	})
}
