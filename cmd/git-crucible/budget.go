package main

import (
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/engine"
)

// maxCostFlag is build's, replay's and run's --max-cost.
var maxCostFlag = &cli.StringFlag{Name: "max-cost", Usage: "start no dispatch once the pipeline's recorded cost (what its agents' clients priced) reaches `USD`; default: git config " + engine.MaxCostKey}

// maxCostHelp is what build's, replay's and run's help say of --max-cost.
const maxCostHelp = "--max-cost USD (else git config " + engine.MaxCostKey + ") caps what the pipeline's dispatches may cost:\n" +
	"the sum of the prices their agents' clients reported (claude reports one; codex, and a command\n" +
	"agent, none, so they count nothing). Once it reaches the cap no dispatch starts: the run stops at\n" +
	"its next dispatch boundary (an agent at work is never killed; in a parallel level those running\n" +
	"finish and are recorded), exit status 2, health RED, an escalation in the chain, and the hint says\n" +
	"the command that goes on with a higher cap. The cap holds for the command it is given to: give it\n" +
	"again when going on, or set " + engine.MaxCostKey + ". A cap of 0 or below is a usage error."

// parseCost reads an amount of US dollars for a cap: a decimal number
// above 0 ("5", "2.50", "$2.50").
func parseCost(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	return v, err == nil && v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// checkMaxCost refuses a --max-cost that is no cap, before anything is
// opened.
func checkMaxCost(c *cli.Context) error {
	if !c.IsSet("max-cost") {
		return nil
	}
	if _, ok := parseCost(c.String("max-cost")); !ok {
		return usageErrorf("--max-cost %s: want an amount of US dollars above 0, like 5 or 2.50", c.String("max-cost"))
	}
	return nil
}

// budget is the cost cap of a build, replay or run: --max-cost, else
// crucible.maxCost; nil when neither is set. goOn is the command that goes
// on with a higher cap (nil: git crucible build --resume --max-cost N).
func budget(c *cli.Context, s *session, goOn func(maxCost string) string) (*engine.Budget, error) {
	if c.IsSet("max-cost") {
		v, ok := parseCost(c.String("max-cost"))
		if !ok {
			return nil, checkMaxCost(c)
		}
		return &engine.Budget{MaxUSD: v, From: "--max-cost", GoOn: goOn}, nil
	}
	return engine.ConfigBudget(c.Context, s.svc.Repo, goOn)
}
