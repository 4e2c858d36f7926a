package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func gateCommand() *cli.Command {
	return &cli.Command{
		Name:  "gate",
		Usage: "record quality-gate results",
		Subcommands: []*cli.Command{{
			Name:      "verdict",
			Usage:     "record a quality-gate verdict for a phase (1, 2 or 4)",
			ArgsUsage: "<phase>",
			Description: "Records the verdict of the quality gate run on a phase's artifact. Only a PASS verdict\n" +
				"recorded after the phase began lets 'git crucible ledger pass' mark it PASS. With --marker,\n" +
				"reads a crucible verdict marker (gate-verdict-<run-id>.md, version 1 or 2) instead, and\n" +
				"rejects it when its PipelineID or Phase does not match.\n\n" +
				"Verdicts: " + strings.Join(interop.Verdicts, " "),
			Flags: commonFlags(
				&cli.StringFlag{Name: "verdict", Usage: "the `VERDICT` (PASS, FAIL, STAGNATION, ESCALATED, ...)"},
				&cli.IntFlag{Name: "rounds", Usage: "review rounds the gate took"},
				&cli.IntFlag{Name: "score", Usage: "final weighted score (0 when it passed)"},
				&cli.StringFlag{Name: "marker", Usage: "read the verdict from crucible marker `FILE`"},
			),
			Action: verdictAction,
		}},
	}
}

func verdictAction(c *cli.Context) error {
	p, err := phaseArg(c, 0)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 1); err != nil {
		return err
	}
	data := pipeline.VerdictData{Phase: p, Verdict: strings.ToUpper(strings.TrimSpace(c.String("verdict"))),
		Rounds: c.Int("rounds"), Score: c.Int("score")}
	marker := c.String("marker")
	switch {
	case marker != "" && data.Verdict != "":
		return usageErrorf("--verdict and --marker cannot be used together")
	case marker == "" && data.Verdict == "":
		return usageErrorf("a verdict is needed: --verdict <VERDICT> or --marker <FILE>")
	case marker == "" && !interop.ValidVerdict(data.Verdict):
		return usageErrorf("unknown verdict %q (want one of %s)", data.Verdict, strings.Join(interop.Verdicts, ", "))
	case data.Rounds < 0 || data.Score < 0:
		return usageErrorf("--rounds and --score cannot be negative")
	}
	return withPipeline(c, func(s *session, id string) error {
		data.PipelineID = id
		if marker != "" {
			if data, err = readMarker(marker, id, p); err != nil {
				return err
			}
		}
		st, _, err := s.svc.Record(c.Context, id, pipeline.Draft{Type: pipeline.TypeVerdict, Data: data})
		if err != nil {
			return ruleError(err, s.explicitPipeline(id))
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"pipeline": id, "phase": p, "verdict": data, "seq": st.Seq})
		}
		fmt.Fprintf(s.out(), "Recorded verdict %s for %s\n", data.Verdict, phaseLabel(p))
		if data.Verdict == "PASS" {
			s.hint("mark the phase passed with: %s",
				command(ledger.Action{Kind: ledger.PassGate, Phase: p}, s.explicitPipeline(id)))
		}
		return nil
	})
}

// readMarker reads the verdict on phase p of pipeline id from a crucible
// marker file, which must be for them.
func readMarker(path, id string, p ledger.Phase) (pipeline.VerdictData, error) {
	b, err := readFlagFile("--marker "+path, path, maxSmallFile)
	if err != nil {
		return pipeline.VerdictData{}, err
	}
	m, err := interop.ParseMarker(b)
	if err != nil {
		return pipeline.VerdictData{}, fmt.Errorf("%s: %w", path, err)
	}
	data, err := m.VerdictData(id, p)
	var mismatch *interop.MarkerMismatchError
	if errors.As(err, &mismatch) {
		return data, &refused{Err: fmt.Errorf("%s %w", path, err)}
	}
	return data, err
}
