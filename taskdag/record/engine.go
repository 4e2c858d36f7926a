// Package record runs a task DAG as a pipeline's task run, each change
// recorded in the pipeline's chain before the run goes on: git crucible
// run, its CI jobs (run --task, --collect) and Phase 3 of a build whose
// plan runs in parallel levels. taskdag runs the levels; this package
// dispatches their agents through the pipeline engine, records the run's
// events, replays them to resume a killed run, and writes its commits'
// messages and provenance notes.
package record

import (
	"context"

	"github.com/git-crucible/git-crucible/pipeline"
)

// Engine runs task DAGs in one pipeline. It stands on the pipeline
// engine's primitives, which that engine gives it (its TaskEngine method),
// so that a task run's dispatches and appends go through the engine that
// holds the pipeline's lock, as the walk's do.
type Engine struct {
	Service *pipeline.Service
	ID      string // the pipeline
	// Dispatch runs one agent durably (its start recorded before it runs,
	// its finish after) in a fresh agent directory in c.Workdir, with the
	// prompt render makes for the report path there, and returns the
	// report the agent wrote. A dispatch that did not complete is an error
	// (with the report it left, if any), and so is a manual agent, which
	// would wait for a person.
	Dispatch func(ctx context.Context, c Call, render func(report string) (Prompt, error)) ([]byte, error)
	// Interrupt records dispatch seq finished as interrupted, why: a CI
	// job whose lease ran out left it running elsewhere.
	Interrupt func(ctx context.Context, seq int, why string) error
	// Append appends drafts in one append, serialised with the
	// dispatches' records.
	Append func(ctx context.Context, drafts ...pipeline.Draft) error
	// Halt is asked before each task's agent starts: the pipeline's stop
	// at its cost cap (a CostCap that is taskdag.ErrHalted), nil when the
	// agent may start.
	Halt func(ctx context.Context) error
	// GoOnPastCap records that the pipeline goes on past the cost cap it
	// stopped at, now that the cap allows it; nothing when it did not
	// stop there.
	GoOnPastCap func(ctx context.Context) error
}

// Call is one agent call of a task run, as Engine.Dispatch records it.
type Call struct {
	Point          pipeline.Point // Phase 3: the step, the task, the round
	Role, Template string
	TemplateSHA256 string // the digest of the template's text (prompt.Set.Digest)
	Title          string // the dispatch's title: the task's, or the critique's
	Report         string // the report format the agent must write (prompt.ReportTask, ReportCritique)
	Workdir        string // the slot the agent works in
	RetryOf        *int   // the dispatch of this point it runs again
	RetryReason    string // why
}

// Prompt is a rendered prompt, and what its agent may run.
type Prompt struct {
	Text     []byte
	Commands []string
}

// CostCap is the stop at the pipeline's cost cap (the engine's
// BudgetError) that halts a run: it escalates the run, resumable under a
// higher cap.
type CostCap interface {
	error
	// Suggestion is what a person does about it.
	Suggestion() string
}

// events returns the pipeline's chain, oldest first.
func (e *Engine) events(ctx context.Context) ([]pipeline.Event, error) {
	return e.Service.ChainEvents(ctx, e.ID)
}
