package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag/record"
)

// TaskEngine is the task DAG's engine for the engine's pipeline, standing
// on the engine's primitives: its durable dispatch, its appends serialised
// with the dispatches', its cost cap. git crucible run and its CI jobs run
// their task runs through it, and so does Phase 3 (Parallel).
func (e *Engine) TaskEngine() *record.Engine {
	return &record.Engine{Service: e.Service, ID: e.ID, Dispatch: e.dispatchTask, Interrupt: e.interrupt,
		Append: e.appendDrafts, Halt: e.halt, GoOnPastCap: e.goOnPastBudget}
}

// dispatchTask dispatches c with the prompt render makes for the report
// path of a fresh agent directory in c's work tree, a slot.
func (e *Engine) dispatchTask(ctx context.Context, c record.Call, render func(report string) (record.Prompt, error)) ([]byte, error) {
	ad, err := e.NewAgentDir(c.Workdir)
	if err != nil {
		return nil, err
	}
	ad.InSlot = true
	r, err := render(ad.Report())
	if err != nil {
		return nil, errors.Join(err, ad.Remove())
	}
	d := DispatchSpec{Point: c.Point, Role: c.Role, Template: c.Template, TemplateSHA256: c.TemplateSHA256, Title: c.Title,
		Report: c.Report, Workdir: c.Workdir, RetryOf: c.RetryOf, RetryReason: c.RetryReason,
		Prompt: r.Text, Commands: r.Commands, AgentDir: ad}
	return taskOutcome(e.Dispatch(ctx, d))
}

// taskOutcome is a dispatch of a task run as its dispatchers return it.
func taskOutcome(out Outcome, err error) ([]byte, error) {
	switch {
	case err != nil:
		return nil, err
	case out.Status == StatusWaiting:
		return nil, fmt.Errorf("dispatch %d waits for a person: a manual agent cannot run a task of a parallel level", out.Seq)
	case out.Status != "completed":
		return out.Report, fmt.Errorf("dispatch %d %s: %s", out.Seq, out.Status, out.Summary)
	}
	return out.Report, nil
}

// interrupt records dispatch seq finished as interrupted, why, for the
// task run to dispatch its task again.
func (e *Engine) interrupt(ctx context.Context, seq int, why string) error {
	return e.finish(ctx, Outcome{Seq: seq, Status: "error", Summary: why, Recovered: Interrupted})
}

// appendDrafts appends ds in one append, serialised with the dispatches'
// records.
func (e *Engine) appendDrafts(ctx context.Context, ds ...pipeline.Draft) error {
	e.chain.Lock()
	defer e.chain.Unlock()
	_, _, err := e.Service.Record(ctx, e.ID, ds...)
	return err
}
