package build

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/spec"
	"github.com/git-crucible/git-crucible/taskrun"
)

// TaskDispatcher dispatches the tasks of a parallel DAG level through
// Dispatch, so that each is recorded write-ahead and a killed run
// resumes: role's agent runs in the task's own worktree, at step of
// Phase 3, with the prompt render makes, and must write a task report.
// Dispatches of one level run at once; the chain gives them distinct
// seqs. A dispatch that failed returns its report (if any) with the
// failure; a manual agent, which would wait for a person, is refused.
// titles are the tasks' titles, for status; a task without one is its id.
func (e *Engine) TaskDispatcher(step, role string, titles map[string]string, render func(taskrun.Job) []byte) taskrun.Dispatcher {
	return func(ctx context.Context, job taskrun.Job, workdir string) ([]byte, error) {
		out, err := e.Dispatch(ctx, DispatchSpec{Point: spec.Point{Phase: ledger.Execute, Step: step, Task: job.Task.ID},
			Role: role, Template: role, Prompt: render(job), Title: titleOf(titles, job.Task.ID), Report: prompt.ReportTask, Workdir: workdir})
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
}

// titleOf is task id's title in titles, else its id.
func titleOf(titles map[string]string, id string) string {
	if t := titles[id]; t != "" {
		return t
	}
	return id
}
