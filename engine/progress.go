package engine

import (
	"context"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// RecordStep records that the walk's step at p ended with status
// (pipeline.StepDone, ...) and a short result: a gate's verdict, a run's
// exit. p.Round is the round it ended in, for gates and review loops.
func (e *Engine) RecordStep(ctx context.Context, p pipeline.Point, status, result string) error {
	return e.recordStep(ctx, p, status, result, false)
}

// recordStep is RecordStep; baseline says a test step is done against
// the known-failing baseline.
func (e *Engine) recordStep(ctx context.Context, p pipeline.Point, status, result string, baseline bool) error {
	_, _, err := e.Service.Record(ctx, e.ID, pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{
		Phase: p.Phase, Step: p.Step, Task: p.Task, Round: p.Round, Status: status, Result: result, Baseline: baseline}})
	return err
}

// Progress is how far a pipeline's walk got.
type Progress struct {
	// Steps is each point's last step event, keyed by the point without
	// its round (the event has the round the step ended in).
	Steps map[pipeline.Point]pipeline.StepData
	// Next is the first point of the walk not done, its Round the round
	// to run for a gate or review loop; the zero Point when the walk is
	// over. Steps[Next without round] says why it stopped there when it
	// has an event (failed, escalated, waiting).
	Next pipeline.Point
	// NeedTasks: Next is a tasks step whose per-task steps are not all
	// done, and ProgressOf was given no task list to walk them with.
	NeedTasks bool
	// Dispatches are those recorded at Next's step and task, every round,
	// oldest first: a finished one is adopted, never run again; one in
	// flight is Recover's.
	Dispatches []pipeline.Record
}

// Done reports whether the step at p (its round ignored) is done.
func (pr *Progress) Done(p pipeline.Point) bool {
	p.Round = 0
	return pr.Steps[p].Status == pipeline.StepDone
}

// Progress is ProgressOf the pipeline's chain.
func (e *Engine) Progress(ctx context.Context, sp *pipespec.Spec, tasks []string) (Progress, error) {
	events, err := e.events(ctx)
	if err != nil {
		return Progress{}, err
	}
	return ProgressOf(sp, tasks, events)
}

// ProgressOf derives from a chain's events where the walk of sp stands:
// phases in order, each phase's steps in order, a tasks step's steps once
// per task in the order of tasks (the plan's dependency order; nil when
// the plan is not known yet), then the tasks step itself. A step is done
// when its last step event says so.
func ProgressOf(sp *pipespec.Spec, tasks []string, events []pipeline.Event) (Progress, error) {
	var pr Progress
	events, _, err := pipeline.Live(events)
	if err != nil {
		return pr, err
	}
	recs, err := pipeline.Records(events)
	if err != nil {
		return pr, err
	}
	if pr.Steps, err = pipeline.StepsOf(events); err != nil {
		return pr, err
	}
	next, found := pr.next(sp, tasks)
	if !found {
		return pr, nil
	}
	for _, r := range recs {
		if r.Point.Phase == next.Phase && r.Point.Step == next.Step && r.Point.Task == next.Task {
			pr.Dispatches = append(pr.Dispatches, r)
		}
	}
	if l, ok := sp.Find(next.Step); ok && l.Step.Rounds() {
		next.Round = roundOf(l.Step, pr.Dispatches)
	}
	pr.Next = next
	return pr, nil
}

// next is the first point of the walk not done.
func (pr *Progress) next(sp *pipespec.Spec, tasks []string) (pipeline.Point, bool) {
	for _, ph := range sp.Phases {
		for i := range ph.Steps {
			st := &ph.Steps[i]
			p := pipeline.Point{Phase: ph.Number, Step: st.ID}
			if pr.Done(p) {
				continue
			}
			if st.Kind == pipespec.Tasks && len(st.Steps) > 0 {
				if tasks == nil {
					pr.NeedTasks = true
					return p, true
				}
				for _, task := range tasks {
					for _, sub := range st.Steps {
						if q := (pipeline.Point{Phase: ph.Number, Step: sub.ID, Task: task}); !pr.Done(q) {
							return q, true
						}
					}
				}
			}
			return p, true
		}
	}
	return pipeline.Point{}, false
}

// roundOf is the round a gate or review loop resumes at: the newest round
// dispatched, or the one after it once that round's fix has completed.
func roundOf(st *pipespec.Step, dispatched []pipeline.Record) int {
	round, fixed := 1, false
	for _, r := range dispatched {
		switch {
		case r.Point.Round > round:
			round, fixed = r.Point.Round, false
			fallthrough
		case r.Point.Round == round:
			fixed = fixed || r.Role == st.Fixer && r.Status == "completed"
		}
	}
	if fixed {
		round++
	}
	return round
}
