package record

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/taskdag"
)

// TaskDispatcher dispatches the tasks of a parallel DAG level through
// Dispatch, so that each is recorded write-ahead and a killed run
// resumes: as's role's agent runs in the task's own worktree, at as's
// step of Phase 3, with the prompt render makes from as's template (its
// name and digest recorded) naming the report it must write. Dispatches of
// one level run at once; the chain gives them distinct seqs. A dispatch
// that failed returns its report (if any) with the failure; a manual
// agent, which would wait for a person, is refused. titles are the
// tasks' titles, for status; a task without one is its id. retry, when
// given, is the finished dispatch a task's dispatch runs again, and why.
func (e *Engine) TaskDispatcher(as Call, titles map[string]string, render func(job taskdag.Job, report string) (Prompt, error), retry func(task string) (*int, string)) taskdag.Dispatcher {
	return func(ctx context.Context, job taskdag.Job, workdir string) ([]byte, error) {
		d := as
		d.Point = pipeline.Point{Phase: ledger.Execute, Step: as.Point.Step, Task: job.Task.ID}
		d.Title, d.Report, d.Workdir = titleOf(titles, job.Task.ID), prompt.ReportTask, workdir
		if retry != nil {
			d.RetryOf, d.RetryReason = retry(job.Task.ID)
		}
		return e.Dispatch(ctx, d, func(report string) (Prompt, error) { return render(job, report) })
	}
}

// critiqueStep and fixStep are the steps of a task run's critique and
// fix dispatches.
const (
	critiqueStep = "critique"
	fixStep      = "task-fix"
)

// Gate is a task run's critique gate, its agents dispatched through
// Dispatch as the tasks' are: the level's critique by role critic (the
// manifest's critique.agent), each fix by the task agents' role. last is
// the run's newest critique dispatch when it finished (nil otherwise):
// the run stopped at it, killed, or at a critique that did not judge. The
// same critique asked for again is not paid for twice: a completed one's
// report is taken (what its agent changed is discarded anyway); one that
// did not complete is retried, the retry saying how it ended.
func (e *Engine) Gate(tr TaskRun, critic string, last *pipeline.Record, renderCritique func(taskdag.Review, string) (Prompt, error), renderFix func(taskdag.FixJob, string) (Prompt, error)) *taskdag.Gate {
	return &taskdag.Gate{
		Critic: func(ctx context.Context, rv taskdag.Review, workdir string) ([]byte, error) {
			d := Call{Point: pipeline.Point{Phase: ledger.Execute, Step: critiqueStep, Round: rv.Round + 1},
				Role: critic, Template: critiqueStep, Title: fmt.Sprintf("critique of level %d", rv.Level),
				Report: prompt.ReportCritique, Workdir: workdir}
			prev := last
			last = nil // the run goes on past it, or stops again
			if prev != nil && prev.Point == d.Point && prev.Title == d.Title {
				if prev.Status == "completed" {
					return e.Service.ReadKept(ctx, e.ID, prev.Output)
				}
				d.RetryOf, d.RetryReason = &prev.Seq, fmt.Sprintf("dispatch %d ended %s: %s", prev.Seq, prev.Status, prev.Summary)
			}
			return e.Dispatch(ctx, d, func(report string) (Prompt, error) { return renderCritique(rv, report) })
		},
		Fix: func(ctx context.Context, f taskdag.FixJob, workdir string) ([]byte, error) {
			d := Call{Point: pipeline.Point{Phase: ledger.Execute, Step: fixStep, Task: f.Task.ID, Round: f.Round},
				Role: tr.Role, Template: tr.Template, Title: f.Task.ID, Report: prompt.ReportTask, Workdir: workdir}
			return e.Dispatch(ctx, d, func(report string) (Prompt, error) { return renderFix(f, report) })
		},
	}
}

// titleOf is task id's title in titles, else its id.
func titleOf(titles map[string]string, id string) string {
	if t := titles[id]; t != "" {
		return t
	}
	return id
}

// lastCritique is the newest critique dispatch of records when it
// finished; nil otherwise.
func lastCritique(records []pipeline.Record) *pipeline.Record {
	for i := len(records) - 1; i >= 0; i-- {
		if r := records[i]; r.Point.Step == critiqueStep {
			if r.Finished() {
				return &r
			}
			return nil
		}
	}
	return nil
}
