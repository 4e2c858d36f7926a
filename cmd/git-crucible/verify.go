package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
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
			"A sound chain prints 'ok <pipeline>', unless its ledger has a phase INFERRED (imported as PASS\n" +
			"without its verdict marker, or inferred): then 'unverified <pipeline>: ...' names it, as no gate\n" +
			"passed there (--json lists them as 'inferred').\n\n" +
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
				var unverified []inferredPhase
				for _, id := range ids {
					found, err := s.svc.Verify(c.Context, id)
					if err != nil {
						problems = append(problems, pipeline.Problem{Pipeline: id, Message: err.Error()})
						continue
					}
					problems = append(problems, found...)
					if len(found) > 0 {
						continue
					}
					// A sound chain whose ledger holds an INFERRED phase is
					// not verified: no gate passed there.
					st, _, err := s.svc.Load(c.Context, id)
					if err != nil {
						return err
					}
					inferred := inferredPhases(st)
					unverified = append(unverified, inferred...)
					if s.jsonOut() {
						continue
					}
					if len(inferred) == 0 {
						fmt.Fprintf(s.out(), "ok %s\n", id)
						continue
					}
					var what []string
					for _, p := range inferred {
						w := fmt.Sprintf("Phase %d (%s) INFERRED", p.Phase, p.Phase.Name())
						if p.Reason != "" {
							w += " (" + p.Reason + ")"
						}
						what = append(what, w)
					}
					fmt.Fprintf(s.out(), "unverified %s: sound, but %s: no gate passed there; it blocks until a fresh gate passes\n",
						id, strings.Join(what, ", "))
				}
				if s.jsonOut() {
					out := map[string]any{"pipelines": ids, "ok": len(problems) == 0, "problems": problems}
					if len(unverified) > 0 {
						out["inferred"] = unverified
					}
					if err := s.printJSON(out); err != nil {
						return err
					}
				} else {
					for _, p := range problems {
						fmt.Fprintf(s.out(), "problem %s\n", p)
					}
				}
				if len(problems) > 0 {
					if !s.jsonOut() {
						s.error("%d problem(s) in %d pipeline(s)", len(problems), len(ids))
					}
					return &silentExit{Code: exitRefused}
				}
				return nil
			})
		},
	}
}

// inferredPhase is a phase of a pipeline that is INFERRED, and why.
type inferredPhase struct {
	Pipeline string       `json:"pipeline"`
	Phase    ledger.Phase `json:"phase"`
	Reason   string       `json:"reason"`
}

func inferredPhases(st *pipeline.State) []inferredPhase {
	var out []inferredPhase
	for _, p := range ledger.Phases {
		if e := st.Gates.Ledger.Entry(p); e.Status == ledger.Inferred {
			out = append(out, inferredPhase{Pipeline: st.ID, Phase: p, Reason: e.Reason})
		}
	}
	return out
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
		report, err := enforce.NewAuditor(s.svc).Audit(c.Context, gitext.RevSet{Include: []string{rev}}, rules)
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
