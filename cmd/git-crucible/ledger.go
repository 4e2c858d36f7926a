package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func ledgerCommand() *cli.Command {
	return &cli.Command{
		Name:  "ledger",
		Usage: "show the gate ledger, or move a phase through it",
		Description: "Without a subcommand, prints the ledger in crucible's build-gate-ledger.md format.\n\n" +
			"Rules (crucible's gate ledger): Phase 1 always starts; Phase N starts only when Phase N-1 is PASS\n" +
			"(COMPLETE for Phase 3) or SKIPPED and acknowledged, and no earlier skip is unacknowledged. PASS\n" +
			"needs a PASS verdict recorded by 'git crucible gate verdict' since the phase began. A skip needs\n" +
			"a reason, then a separate acknowledgement typed as --confirm \"SKIP GATE\".",
		Flags: commonFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("unknown ledger subcommand %q (see: git crucible help ledger)", c.Args().First())
			}
			return withRepo(c, func(s *session) error {
				st, err := s.load(c.Context)
				if err != nil {
					return err
				}
				if s.jsonOut() {
					return s.printJSON(ledgerJSON(st))
				}
				_, err = s.out().Write(ledger.Render(&st.Gates.Ledger))
				return err
			})
		},
		Subcommands: []*cli.Command{
			transition(ledger.Begin, "start (or re-work) a phase; refused while its gate is blocked", nil),
			transition(ledger.PassGate, "mark a phase PASS; needs a PASS verdict recorded since it began",
				[]cli.Flag{&cli.StringFlag{Name: "artifact", Usage: "`PATH` of the artifact the gate passed"}}),
			transition(ledger.FailPhase, "mark an IN_PROGRESS phase FAIL",
				[]cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why it failed"}}),
			transition(ledger.CompletePhase, "mark Phase 3 COMPLETE once every task is done",
				[]cli.Flag{&cli.StringFlag{Name: "tasks", Usage: "tasks done, as `N/M` (N must equal M)"}}),
			transition(ledger.Skip, "mark a phase SKIPPED; the skip still needs a separate 'ack'",
				[]cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why the gate is skipped (recorded)"}}),
			transition(ledger.Ack, `acknowledge a skipped gate: --confirm "SKIP GATE", nothing else`,
				[]cli.Flag{&cli.StringFlag{Name: "confirm", Usage: `the exact text "SKIP GATE"`}}),
			checkCommand(),
		},
	}
}

// ledgerJSON is the ledger as --json prints it.
func ledgerJSON(st *pipeline.State) map[string]any {
	check := st.Gates.Check()
	return map[string]any{"pipeline": st.ID, "phase": st.Phase, "status": st.Status,
		"ledger": st.Gates.Ledger, "allowed": check == nil, "blocked": blockedJSON(check)}
}

func blockedJSON(b *ledger.Blocked) any {
	if b == nil {
		return nil
	}
	return map[string]any{"phase": b.Phase, "gate": b.Gate, "status": b.Status,
		"acknowledged": b.Acknowledged, "message": b.Error()}
}

// required lists the options an action cannot go without.
var required = lazy.Value[map[ledger.Kind][]string]{New: func() map[ledger.Kind][]string {
	return map[ledger.Kind][]string{
		ledger.CompletePhase: {"tasks"}, ledger.Skip: {"reason"}, ledger.Ack: {"confirm"},
	}
}}

// transition is a ledger subcommand that records one action on a phase.
func transition(kind ledger.Kind, usage string, flags []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      string(kind),
		Usage:     usage,
		ArgsUsage: "<phase>",
		Flags:     commonFlags(flags...),
		Action: func(c *cli.Context) error {
			p, err := phaseArg(c, 0)
			if err != nil {
				return err
			}
			if err := wantArgs(c, 1); err != nil {
				return err
			}
			if err := requireFlags(c, required.Get()[kind]...); err != nil {
				return err
			}
			// The ledger is one line per field: a pasted multi-line reason becomes one line.
			data := pipeline.LedgerData{Phase: p, Reason: oneLine(c.String("reason")),
				Artifact: strings.TrimSpace(c.String("artifact")), Confirm: c.String("confirm")}
			if kind == ledger.CompletePhase {
				if data.Done, data.Total, err = parseTasks(c.String("tasks")); err != nil {
					return err
				}
			}
			return withPipeline(c, func(s *session, id string) error {
				st, warnings, err := s.svc.Record(c.Context, id, pipeline.Draft{Type: pipeline.LedgerType(kind), Data: data})
				if err != nil {
					return ruleError(err, s.explicitPipeline(id))
				}
				s.notices(warnings)
				if warnings == nil {
					warnings = []string{}
				}
				e := st.Gates.Ledger.Entry(p)
				if s.jsonOut() {
					return s.printJSON(map[string]any{"pipeline": id, "phase": p, "status": e.Status,
						"acknowledged": e.Acknowledged, "warnings": warnings, "seq": st.Seq})
				}
				state := string(e.Status)
				if e.Status == ledger.Skipped {
					state += map[bool]string{true: " (acknowledged)", false: " (not acknowledged)"}[e.Acknowledged]
				}
				fmt.Fprintf(s.out(), "%s: %s\n", phaseLabel(p), state)
				if e.Status == ledger.Skipped && !e.Acknowledged {
					fmt.Fprintf(s.err(), "Gate skip requested. Type %q to confirm. This will be logged:\n  %s\n", ledger.SkipConfirmation,
						command(ledger.Action{Kind: ledger.Ack, Phase: p}, s.explicitPipeline(id)))
				}
				return nil
			})
		},
	}
}

func parseTasks(v string) (done, total int, err error) {
	d, t, ok := strings.Cut(v, "/")
	done, err1 := strconv.Atoi(strings.TrimSpace(d))
	total, err2 := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), " complete")))
	if !ok || err1 != nil || err2 != nil || done < 0 || total < 0 {
		return 0, 0, usageErrorf("--tasks wants N/M, for example 5/5; got %q", v)
	}
	return done, total, nil
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "exit 0 if a phase may start (default: if work in the current phase is allowed), else 1",
		ArgsUsage: "[<phase>]",
		Description: "For scripts and hooks. With <phase>: may that phase start now? Without: is the current phase\n" +
			"(the furthest one started) allowed to go on — not FAIL, INFERRED or an unacknowledged skip, and\n" +
			"started legally? When blocked, prints crucible's PHASE GATE BLOCKED message and the commands\n" +
			"that unblock it, and exits 1.",
		Flags: commonFlags(&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing when allowed"}),
		Action: func(c *cli.Context) error {
			var phase ledger.Phase
			if c.NArg() > 0 {
				p, err := phaseArg(c, 0)
				if err != nil {
					return err
				}
				phase = p
			}
			if err := wantArgs(c, 1); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error { return checkLedger(c.Context, s, phase, c.Bool("quiet")) })
		},
	}
}

// checkLedger answers `ledger check`: may phase start (0: may the current
// phase go on)? A blocked answer is an error carrying the unblocking hints.
func checkLedger(ctx context.Context, s *session, phase ledger.Phase, quiet bool) error {
	id, err := s.pipelineID(ctx)
	if err != nil {
		return err
	}
	g, err := s.svc.LoadGates(ctx, id)
	if err != nil {
		return err
	}
	l := &g.Ledger
	phase, refusal := g.Check(id, phase)
	if s.jsonOut() {
		var blocked any
		var b *ledger.Blocked
		var c *pipeline.ConflictError
		switch {
		case errors.As(refusal, &b):
			blocked = blockedJSON(b)
		case errors.As(refusal, &c):
			blocked = map[string]any{"conflicts": c.Conflicts, "message": c.Error()}
		}
		if err := s.printJSON(map[string]any{"pipeline": id, "phase": phase, "allowed": refusal == nil, "blocked": blocked}); err != nil {
			return err
		}
		if refusal != nil {
			return &silentExit{Code: exitRefused}
		}
		return nil
	}
	if refusal != nil {
		return ruleError(refusal, s.explicitPipeline(id))
	}
	if !quiet {
		fmt.Fprintf(s.out(), "%s is allowed (%s)\n", phaseLabel(phase), l.Entry(phase).Status)
	}
	return nil
}
