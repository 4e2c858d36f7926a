package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
)

// Budget caps what a pipeline's dispatches may cost: the sum of the
// prices their clients reported (pipeline.Service.Cost). Once it reaches
// MaxUSD, the engine starts no dispatch: the walk or the task run stops
// at its next dispatch boundary, never killing an agent at work, with an
// escalation recorded, resumable with a higher cap.
type Budget struct {
	MaxUSD float64 // above 0
	From   string  // where the cap was set, for the message: "--max-cost", "crucible.maxCost"
	// GoOn is the command that goes on with cap maxCost, for the hint; nil
	// is build's: git crucible build --resume --max-cost <maxCost>.
	GoOn func(maxCost string) string
}

// MaxCostKey is the git config key of the cost cap build, replay and run
// take when --max-cost is not given.
const MaxCostKey = "crucible.maxCost"

// ConfigBudget is the cost cap MaxCostKey sets, nil when it is unset; goOn
// is Budget.GoOn. A value that is no number, or no amount above 0, is a
// usage error: the person set it, and a cap that caps nothing would be a
// silent no-cap.
func ConfigBudget(ctx context.Context, repo *gitext.Repo, goOn func(maxCost string) string) (*Budget, error) {
	v, set, err := repo.ConfigFloat(ctx, MaxCostKey)
	switch {
	case err != nil:
		return nil, outcome.Usagef("%v", err)
	case !set:
		return nil, nil
	case v <= 0:
		return nil, outcome.WithHints(outcome.Usagef("%s %s: want an amount of US dollars above 0", MaxCostKey, strconv.FormatFloat(v, 'f', -1, 64)),
			"remove it for no cap: git config --unset "+MaxCostKey)
	}
	return &Budget{MaxUSD: v, From: MaxCostKey, GoOn: goOn}, nil
}

// BudgetError is a dispatch the engine did not start: the pipeline's
// recorded cost has reached its cap.
type BudgetError struct {
	Cost, Cap float64
	From      string
	Next      string // a higher cap to go on with, as the hint gives it
	GoOn      string // the command that goes on with it
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the pipeline's recorded cost, %s, has reached its cap of %s (%s): no dispatch starts past it",
		pipeline.USD(e.Cost), pipeline.USD(e.Cap), e.From)
}

// Is makes a BudgetError a halt to a task run: its task stays pending.
func (e *BudgetError) Is(target error) bool { return target == taskdag.ErrHalted }

// Suggestion is what a person does about it: health's action and the hint.
func (e *BudgetError) Suggestion() string {
	return "Raise the cap to go on: " + e.GoOn
}

// NextCap is the cap a hint proposes once cost has reached limit: twice
// the cap, or the cost and the cap again when one dispatch went far past
// it; in cents, rounded up.
func NextCap(cost, limit float64) string {
	next := max(2*limit, cost+limit)
	return fmt.Sprintf("%.2f", math.Ceil(next*100-1e-9)/100)
}

// overBudget is the BudgetError of a dispatch about to start when the
// pipeline's recorded cost has reached its cap; nil when it may start (no
// cap, or a cost below it). The caller holds e.chain: the Service is not
// for several goroutines.
func (e *Engine) overBudget(ctx context.Context) (*BudgetError, error) {
	b := e.Budget
	if b == nil {
		return nil, nil
	}
	c, err := e.Service.Cost(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	if pipeline.NanoUSD(c.CostUSD) < pipeline.NanoUSD(b.MaxUSD) {
		return nil, nil
	}
	next := NextCap(c.CostUSD, b.MaxUSD)
	goOn := "git crucible build --resume --max-cost " + next
	if b.GoOn != nil {
		goOn = b.GoOn(next)
	}
	return &BudgetError{Cost: c.CostUSD, Cap: b.MaxUSD, From: b.From, Next: next, GoOn: goOn}, nil
}

// halt is taskdag.Runner's Halt: the BudgetError of a task about to start.
func (e *Engine) halt(ctx context.Context) error {
	e.chain.Lock()
	defer e.chain.Unlock()
	b, err := e.overBudget(ctx)
	if b != nil {
		return b
	}
	return err
}

// goOnPastBudget records that the pipeline goes on past the cost cap it
// stopped at (its health says so), now that the cap allows it: a budget
// decision, which ends the escalation's RED health. Nothing when the
// pipeline did not stop at its cap, or the cap still stops it.
func (e *Engine) goOnPastBudget(ctx context.Context) error {
	st, _, err := e.Service.Load(ctx, e.ID)
	if err != nil || !pipeline.StoppedAtCostCap(st) {
		return err
	}
	e.chain.Lock()
	defer e.chain.Unlock()
	b, err := e.overBudget(ctx)
	if err != nil || b != nil {
		return err
	}
	c, err := e.Service.Cost(ctx, e.ID)
	if err != nil {
		return err
	}
	choice := "going on with no cost cap"
	if e.Budget != nil {
		choice = fmt.Sprintf("going on under a cost cap of %s (%s)", pipeline.USD(e.Budget.MaxUSD), e.Budget.From)
	}
	_, _, err = e.Service.Record(ctx, e.ID, pipeline.Draft{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{
		Type: pipeline.DecisionBudget, Choice: choice, Reason: "the recorded cost is " + pipeline.USD(c.CostUSD)}})
	return err
}

// budgetAt is where a stop at the cost cap happened, for its record.
func budgetAt(step, task string) string {
	if task != "" {
		return fmt.Sprintf("before %s of task %s", step, task)
	}
	return "before " + strings.TrimSpace(step)
}
