package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func handoffCommand() *cli.Command {
	return &cli.Command{
		Name:  "handoff",
		Usage: "write or show a phase handoff document",
		Description: "A handoff carries what the next phase needs across a phase boundary (crucible's\n" +
			"handoff-N-to-M.md). A handoff out of phase N is accepted only once the ledger has phase N PASS\n" +
			"(COMPLETE for phase 3). The goal is the pipeline's, verbatim. It is kept in the pipeline's tree\n" +
			"(handoffs/N-to-M.md), and its constraints and inputs become the status's compression state.",
		Subcommands: []*cli.Command{
			{
				Name:      "write",
				Usage:     "record the handoff from phase <from> to <to>, from flags or a crucible-format file",
				ArgsUsage: "<from> <to>",
				Flags: commonFlags(
					&cli.StringSliceFlag{Name: "input", Usage: "an input for the next phase, `NAME=VALUE` (repeatable)"},
					&cli.StringSliceFlag{Name: "decision", Usage: `a decision carried forward, "[DEC-N] what: why" (repeatable)`},
					&cli.StringSliceFlag{Name: "constraint", Usage: "an active constraint (repeatable)"},
					&cli.StringSliceFlag{Name: "shed", Usage: `what was shed and where it lives, "what -> where" (repeatable)`},
					&cli.StringFlag{Name: "file", Usage: "read the handoff from crucible-format `FILE` (- for stdin)"},
				),
				Action: handoffWrite,
			},
			{
				Name:      "show",
				Usage:     "print the handoff from phase <from> to <to>",
				ArgsUsage: "<from> <to>",
				Flags:     commonFlags(),
				Action:    handoffShow,
			},
		},
	}
}

// boundaryArgs parses "<from> <to>", which must be adjacent phases.
func boundaryArgs(c *cli.Context) (ledger.Phase, error) {
	if c.NArg() != 2 {
		return 0, usageErrorf("want two arguments: <from> <to>, such as 1 2")
	}
	from, err := phaseArg(c, 0)
	if err != nil {
		return 0, err
	}
	to, err := phaseArg(c, 1)
	if err != nil {
		return 0, err
	}
	if to != from+1 {
		return 0, usageErrorf("a handoff goes from phase N to N+1, not %d to %d", from, to)
	}
	return from, nil
}

func handoffWrite(c *cli.Context) error {
	from, err := boundaryArgs(c)
	if err != nil {
		return err
	}
	d := pipeline.HandoffData{From: from}
	if f := c.String("file"); f != "" {
		if c.IsSet("input") || c.IsSet("decision") || c.IsSet("constraint") || c.IsSet("shed") {
			return usageErrorf("--file and the content options cannot be used together")
		}
		b, err := readInput(c, "file", f, maxKeptInput)
		if err != nil {
			return err
		}
		h, err := interop.ParseHandoff(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if ledger.Phase(h.From) != from {
			return &refused{Err: fmt.Errorf("%s is the handoff from phase %d to %d, not %d to %d", f, h.From, h.To, from, from+1)}
		}
		hd := h.Data()
		d = pipeline.HandoffData{From: from, Inputs: hd.Inputs, Decisions: hd.Decisions, Constraints: hd.Constraints, Shed: hd.Shed}
	} else {
		for _, in := range c.StringSlice("input") {
			name, value, ok := strings.Cut(in, "=")
			if !ok || strings.TrimSpace(name) == "" {
				return usageErrorf("--input wants NAME=VALUE, got %q", in)
			}
			d.Inputs = append(d.Inputs, pipeline.HandoffInput{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
		}
		for _, dec := range c.StringSlice("decision") {
			d.Decisions = append(d.Decisions, pipeline.HandoffDecision(interop.ParseHandoffDecision(oneLine(dec))))
		}
		for _, con := range c.StringSlice("constraint") {
			d.Constraints = append(d.Constraints, oneLine(con))
		}
		for _, sh := range c.StringSlice("shed") {
			d.Shed = append(d.Shed, pipeline.HandoffShed(interop.ParseHandoffShed(oneLine(sh))))
		}
	}
	return withPipeline(c, func(s *session, id string) error {
		_, doc, err := s.svc.WriteHandoff(c.Context, id, d, interop.RenderHandoff)
		if err != nil {
			return &refused{Err: err}
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"pipeline": id, "handoff": d, "document": string(doc)})
		}
		fmt.Fprintf(s.out(), "Recorded handoff %d → %d (%s)\n", from, from+1, pipeline.HandoffPath(from))
		return nil
	})
}

func handoffShow(c *cli.Context) error {
	from, err := boundaryArgs(c)
	if err != nil {
		return err
	}
	return withPipeline(c, func(s *session, id string) error {
		doc, err := s.svc.ReadKept(c.Context, id, pipeline.HandoffPath(from))
		if err != nil {
			return &refused{Err: fmt.Errorf("pipeline %s has no handoff %d → %d", id, from, from+1)}
		}
		if s.jsonOut() {
			h, err := interop.ParseHandoff(doc)
			if err != nil {
				return err
			}
			return s.printJSON(map[string]any{"pipeline": id, "handoff": h})
		}
		_, err = s.out().Write(doc)
		return err
	})
}
