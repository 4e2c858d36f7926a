package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/taskdag/record"
)

// Parallel runs the plan as a task DAG (TaskEngine's RunTasks): level by
// level, the implementers (the tasks step's first dispatch step) of a
// level's tasks at once, at most MaxParallel, each in its own worktree,
// their work committed per task on the branch at the fan-in; then, before
// the next level, each task's steps after it (its fast gate, its review,
// their fixes in the work tree) one task after another. The steps before
// it (a checkpoint) run for each task of a level before the level starts.
type Parallel struct{ MaxParallel int }

// errStopped ends a task run at a step that stops the walk (Tasks.stop).
var errStopped = errors.New("a task's step stopped the walk")

// Execute implements Executor.
func (x Parallel) Execute(ctx context.Context, ts *Tasks) error {
	w := ts.w
	k := slices.IndexFunc(ts.st.Steps, func(s pipespec.Step) bool { return s.Kind == pipespec.Dispatch })
	if k < 0 {
		return Serial{}.Execute(ctx, ts) // no agent to run at once
	}
	impl := &ts.st.Steps[k]
	m, err := manifest.FromPlan(w.state.Goal, impl.Role, x.MaxParallel, ts.Order)
	if err != nil {
		end := stopped(ts.p, pipeline.StepFailed, WalkFailed, fmt.Sprintf("the plan's tasks cannot run in parallel: %v (--max-parallel 1 runs them one at a time)", err))
		ts.stop = &end
		return w.record(ctx, ts.p, end)
	}
	// The tasks' worktrees start from the branch, which has what the
	// phases before wrote (the design, the plan, the acceptance tests):
	// each was committed as it ended (commitPhase). This commit is a
	// safety net, a no-op when nothing is pending, as it is after those
	// commits: it takes what a dispatch of Phase 3 before the tasks step
	// (a spec's own) changed, or what a pipeline whose Phases 1 and 2
	// ran under an engine without phase commits left, for the
	// implementers to read. Only before the task run begins: after, a
	// change there is a fix's, whose task commits it.
	if !w.view.dagRun {
		if err := w.commitWork(ctx, fmt.Sprintf("Phase 3 of pipeline %s begins\n\nThe work tree as the phases before left it, which the tasks start from.", w.e.ID), enforce.Agent{}, false); err != nil {
			return err
		}
	}
	prompts, titles := map[string]prompt.Data{}, map[string]string{}
	for _, t := range ts.Order {
		titles[t.ID] = t.Title
		d, err := w.data(ctx, ts.at(impl, t.ID), impl, &t)
		if err != nil {
			return err
		}
		d.Role, d.Outputs, d.Exports = impl.Role, impl.Outputs, impl.Exports
		d.Report = prompt.Report{Format: prompt.ReportTask} // its path is its dispatch's
		prompts[t.ID] = d
	}
	res, err := w.e.TaskEngine().RunTasks(ctx, record.TaskRun{Manifest: m, MaxParallel: x.MaxParallel, Templates: w.opts.Templates,
		Template: impl.Template, Role: impl.Role, Step: impl.ID, Test: w.opts.Test, Retry: true, Titles: titles,
		Prompt:  func(job taskdag.Job) prompt.Data { return prompts[job.Task.ID] },
		Between: func(head string) (string, error) { return ts.between(ctx, m, k, head) }})
	if rerr := w.refresh(ctx); err == nil {
		err = rerr
	}
	switch {
	case errors.Is(err, errStopped):
		return nil
	case err != nil:
		return err
	case res.Status == "completed":
		return nil
	case res.Budget != nil:
		// Its escalation is recorded with the run's: the tasks step ends escalated, to go on under a higher cap.
		end := stopped(ts.p, pipeline.StepEscalated, WalkEscalated, res.Budget.Error())
		end.stop.Suggestion = res.Budget.Suggestion()
		ts.stop = &end
		return w.record(ctx, ts.p, end)
	}
	// The tasks that failed end their implement steps failed; the first stops the walk.
	for _, id := range res.Failed {
		reason := res.Reasons[id]
		if reason == "" {
			reason = res.Reason
		}
		end := stopped(ts.at(impl, id), pipeline.StepFailed, WalkFailed, fmt.Sprintf("task %s: %s", id, reason))
		if err := w.record(ctx, end.stop.Point, end); err != nil {
			return err
		}
		if ts.stop == nil {
			ts.stop = &end
		}
	}
	if ts.stop == nil {
		end := stopped(ts.p, pipeline.StepFailed, WalkFailed, res.Reason)
		ts.stop = &end
		return w.record(ctx, ts.p, end)
	}
	return nil
}

// at is step's point for task id.
func (ts *Tasks) at(step *pipespec.Step, id string) pipeline.Point {
	return pipeline.Point{Phase: ts.p.Phase, Step: step.ID, Task: id}
}

// between runs between the levels of a task run: each completed task's
// implement step (the k-th) is done, and its steps after it are walked;
// then the steps before it of the next level's tasks. It returns the
// branch's head, which the steps' fixes may have moved; head is where
// the task run left it.
func (ts *Tasks) between(ctx context.Context, m *manifest.Manifest, k int, head string) (string, error) {
	w := ts.w
	w.wt.head = head
	if err := w.refresh(ctx); err != nil {
		return "", err
	}
	impl := &ts.st.Steps[k]
	for _, t := range ts.Order {
		if m.Task(t.ID).Status != manifest.Completed {
			continue
		}
		if q := ts.at(impl, t.ID); !w.done(q) {
			result := "committed " + m.Task(t.ID).CommitSHA
			if m.Task(t.ID).CommitSHA == "" {
				result = "changed nothing"
			}
			if err := w.record(ctx, q, done(result)); err != nil {
				return "", err
			}
		}
		if err := ts.walk(ctx, t, ts.st.Steps[k+1:]); err != nil {
			return "", err
		}
	}
	for _, t := range nextLevel(m, ts.Order) {
		if err := ts.walk(ctx, t, ts.st.Steps[:k]); err != nil {
			return "", err
		}
	}
	return w.e.Service.Repo.HeadCommit()
}

// walk walks task's steps of steps; errStopped when one stops the walk.
func (ts *Tasks) walk(ctx context.Context, task report.PlanTask, steps []pipespec.Step) error {
	stop, err := ts.steps(ctx, task, steps)
	if err == nil && stop {
		err = errStopped
	}
	return err
}

// nextLevel are the tasks the task run dispatches next: the ready ones of
// the lowest level.
func nextLevel(m *manifest.Manifest, order []report.PlanTask) []report.PlanTask {
	ready := m.Ready()
	level := 0
	for _, id := range ready {
		if l := m.Level(id); level == 0 || l < level {
			level = l
		}
	}
	var out []report.PlanTask
	for _, t := range order {
		if slices.Contains(ready, t.ID) && m.Level(t.ID) == level {
			out = append(out, t)
		}
	}
	return out
}
