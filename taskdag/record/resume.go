package record

import (
	"context"
	"sync"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// taskLeft is what a task run's chain says of its tasks' dispatches at
// its step, for a resume that pays for no dispatch twice: where each
// task's newest dispatch ran and which one it is, and the retry owed to a
// task its resume made pending again with a reason.
type taskLeft struct {
	mu    sync.Mutex
	tasks map[string]*leftTask
}

type leftTask struct {
	worktree string // its newest dispatched record's
	seq      int    // its newest dispatch at the step since that record, 0 for none
	last     int    // its newest dispatch at the step
	reused   string // the task dispatched in worktree after it
	retry    string // pending again for this reason: its next dispatch retries last
	commit   string // the task commit a CI job made of its newest dispatch's work
}

// leftOf reads events of the run at step.
func leftOf(events []pipeline.Event, step string) (*taskLeft, error) {
	l := &taskLeft{tasks: map[string]*leftTask{}}
	for _, ev := range events {
		switch ev.Type {
		case pipeline.TypeDAGTask:
			var d pipeline.DAGTaskData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			if d.Status == string(manifest.Dispatched) && d.Job != "" && d.Commit != "" {
				l.task(d.Task).commit = d.Commit // a CI job's result: its dispatch's work
				continue
			}
			if d.Status == string(manifest.Dispatched) {
				for _, o := range l.tasks {
					if d.Job != "" {
						break // a CI job's lease: its worktree is on another machine
					}
					if o.worktree == d.Worktree && o.reused == "" {
						o.reused = d.Task
					}
				}
				t := l.task(d.Task)
				t.worktree, t.seq, t.reused, t.commit = d.Worktree, 0, "", ""
				continue
			}
			l.saw(taskdag.Event{Task: d.Task, Status: manifest.TaskStatus(d.Status), Reason: d.Reason})
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			if err := pipeline.DecodeData(ev, &d); err != nil {
				return nil, err
			}
			if d.Step == step && d.TaskID != "" {
				t := l.task(d.TaskID)
				t.seq, t.last, t.retry = d.Seq, d.Seq, ""
			}
		}
	}
	return l, nil
}

func (l *taskLeft) task(id string) *leftTask {
	t := l.tasks[id]
	if t == nil {
		t = &leftTask{}
		l.tasks[id] = t
	}
	return t
}

// saw keeps the retry a task event owes: a task pending with a reason
// is owed one until its next dispatch starts, also through a kill before
// that (which leaves it dispatched with no dispatch, then pending with
// none); committed, completed or failed, it is owed none.
func (l *taskLeft) saw(ev taskdag.Event) {
	if ev.Task == "" || ev.Status == manifest.Dispatched || ev.Status == manifest.Pending && ev.Reason == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.task(ev.Task)
	t.retry = ""
	if ev.Status == manifest.Pending {
		t.retry = ev.Reason
	}
}

// retry is the dispatch task's next dispatch retries, and why, taken
// once; nil when it retries none.
func (l *taskLeft) retry(task string) (*int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tasks[task]
	if t == nil || t.retry == "" || t.last == 0 {
		return nil, ""
	}
	seq, why := t.last, t.retry
	t.retry = ""
	return &seq, why
}

// finished is the run's taskdag.Plan.Finished: how task's newest
// dispatch ended, per records, a completed one's report read from the
// chain.
func (e *Engine) finished(ctx context.Context, l *taskLeft, records []pipeline.Record) func(string) (*taskdag.Finished, error) {
	return func(task string) (*taskdag.Finished, error) {
		t := l.tasks[task]
		if t == nil || t.seq == 0 {
			return nil, nil
		}
		for _, r := range records {
			if r.Seq != t.seq || !r.Finished() {
				continue
			}
			f := &taskdag.Finished{Seq: r.Seq, Status: r.Status, Summary: r.Summary, Worktree: t.worktree, Reused: t.reused, Commit: t.commit}
			if r.Status == "completed" && r.Output != "" {
				b, err := e.Service.ReadKept(ctx, e.ID, r.Output)
				if err != nil {
					return nil, err
				}
				f.Report = b
			}
			return f, nil
		}
		return nil, nil
	}
}
