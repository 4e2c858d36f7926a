package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag"
)

// Executor runs Phase 3's plan: its tasks through the tasks step's
// steps, level by level of the plan's dependency graph. Serial walks one
// task at a time in the work tree; Parallel runs the implementers of a
// level at once (the task DAG). Execute is called from the walk's
// goroutine, and Tasks' methods must be called from it too.
type Executor interface {
	Execute(ctx context.Context, tasks *Tasks) error
}

// Tasks is the walk of a plan's tasks an Executor drives.
type Tasks struct {
	Order []report.PlanTask // the plan's tasks, dependencies first
	w     *walker
	p     pipeline.Point // the tasks step's
	st    *pipespec.Step
	stop  *stepEnd // where a step stopped the walk
}

// Levels are the plan's tasks by level, as indexes into Order (not copies
// of its tasks, which a plan of 1,000 would hold twice): a task's level is
// one past its deepest dependency's. Each is in Order's order.
func (ts *Tasks) Levels() [][]int {
	level := map[string]int{}
	var out [][]int
	for i, t := range ts.Order {
		n := 0
		for _, d := range t.DependsOn {
			n = max(n, level[d])
		}
		level[t.ID] = n + 1
		for len(out) <= n {
			out = append(out, nil)
		}
		out[n] = append(out[n], i)
	}
	return out
}

// Walk walks task's steps that are not done, in the work tree, and
// reports whether the walk stops there.
func (ts *Tasks) Walk(ctx context.Context, task report.PlanTask) (stop bool, err error) {
	return ts.steps(ctx, task, ts.st.Steps)
}

// steps walks task's steps of steps that are not done.
func (ts *Tasks) steps(ctx context.Context, task report.PlanTask, steps []pipespec.Step) (bool, error) {
	for i := range steps {
		sub := &steps[i]
		q := pipeline.Point{Phase: ts.p.Phase, Step: sub.ID, Task: task.ID}
		if ts.w.done(q) {
			continue
		}
		end, err := ts.w.step(ctx, q, sub, &task)
		if err != nil {
			return true, err
		}
		if end.status != "" {
			if err := ts.w.record(ctx, q, end); err != nil {
				return true, err
			}
		}
		if end.status != pipeline.StepDone {
			ts.stop = &end
			return true, nil
		}
	}
	return false, nil
}

// Serial runs the tasks one at a time, level by level, and stops at the
// first that stops.
type Serial struct{}

// Execute implements Executor.
func (Serial) Execute(ctx context.Context, ts *Tasks) error {
	for _, level := range ts.Levels() {
		for _, i := range level {
			if stop, err := ts.Walk(ctx, ts.Order[i]); err != nil || stop {
				return err
			}
		}
	}
	return nil
}

// executor is the walk's executor for the tasks step st of order: the
// option's; else as Phase 3 began, when it did: Parallel when the chain
// has its task run, Serial when a task's step is recorded without one;
// else Parallel when max-parallel (the option's, else st's) is above 1.
func (w *walker) executor(st *pipespec.Step, order []report.PlanTask) Executor {
	n := st.MaxParallel
	if w.opts.MaxParallel > 0 {
		n = w.opts.MaxParallel
	}
	switch {
	case w.opts.Executor != nil:
		return w.opts.Executor
	case w.view.dagRun:
		return Parallel{MaxParallel: max(n, 1)}
	case n > 1 && !w.tasksBegun(st, order):
		return Parallel{MaxParallel: n}
	}
	return Serial{}
}

// tasksBegun reports whether a step of a task of order is recorded.
func (w *walker) tasksBegun(st *pipespec.Step, order []report.PlanTask) bool {
	for _, t := range order {
		for _, sub := range st.Steps {
			if w.stepStatus(pipeline.Point{Phase: ledger.Execute, Step: sub.ID, Task: t.ID}) != "" {
				return true
			}
		}
	}
	return false
}

// tasks runs phase 3's tasks step: each task of the plan (the export
// named by st.From, from the newest report carrying it) through st's
// steps, then COMPLETE in the ledger with every task done.
func (w *walker) tasks(ctx context.Context, p pipeline.Point, st *pipespec.Step) (stepEnd, error) {
	w.at = p
	plan, err := w.plan(ctx, st)
	if err != nil {
		return stopped(p, pipeline.StepFailed, WalkFailed, err.Error()), nil
	}
	order := plan.Order()
	w.taskNumbers = map[string]int{}
	for i, t := range order {
		w.taskNumbers[t.ID] = i + 1
	}
	ts := &Tasks{Order: order, w: w, p: p, st: st}
	err = w.executor(st, order).Execute(ctx, ts)
	if err != nil || ts.stop != nil {
		end := deref(ts.stop)
		end.status = "" // the task's step recorded it: the tasks step goes on
		return end, err
	}
	// The phase's commits are verified by a rebase of the branch: never
	// one under a commit of another's.
	if err := w.checkHead(ctx); err != nil {
		return stepEnd{}, err
	}
	if err := w.verifyPhase(ctx, p, order); err != nil {
		return stepEnd{}, err
	}
	if w.state.Gates.Ledger.Entry(p.Phase).Status == ledger.InProgress {
		if _, _, err := w.e.Service.Record(ctx, w.e.ID, pipeline.Draft{Type: pipeline.LedgerType(ledger.CompletePhase),
			Data: pipeline.LedgerData{Phase: p.Phase, Done: len(order), Total: len(order)}}); err != nil {
			return stepEnd{}, err
		}
	}
	return done(fmt.Sprintf("%d/%d tasks", len(order), len(order))), nil
}

// plan is the task list of the export st.From names, read again from
// the report it came in, by the one parser of task lists.
func (w *walker) plan(ctx context.Context, st *pipespec.Step) (report.Plan, error) {
	from, ok := w.exportFrom[st.From]
	if !ok {
		return report.Plan{}, fmt.Errorf("%s: no report exported %q: the plan writer must list the tasks", st.ID, st.From)
	}
	b, err := w.e.Service.ReadKept(ctx, w.e.ID, from.Output)
	if err != nil {
		return report.Plan{}, err
	}
	t, err := report.ParseTask(b)
	if err != nil {
		return report.Plan{}, err
	}
	plan, err := t.PlanAt(st.From)
	if err != nil {
		return report.Plan{}, fmt.Errorf("%s: the task list of dispatch %d: %w", st.ID, from.Seq, err)
	}
	return plan, nil
}

// commitTask commits what the agents of the engine changed in the work
// tree for task, last the one of dispatch seq, as task's commit: its
// trailers name the task by its 1-based position in the plan's order (a
// positive integer, as the hooks' are). Nothing to commit (its agent
// changed nothing) is fine.
func (w *walker) commitTask(ctx context.Context, task *report.PlanTask, seq int, role string) error {
	msg := fmt.Sprintf("%s\n\n%s dispatch %d of pipeline %s.", taskdag.CommitSubject(task.Title, task.ID), role, seq, w.e.ID)
	return w.commitWork(ctx, msg, enforce.Agent{Task: w.taskNumbers[task.ID], Seq: seq, Role: role}, false)
}

// commitWork commits, with msg and the trailers of a commit a (the
// engine's agent) made in the pipeline's current phase, what the engine's
// dispatches changed in the work tree and no commit took yet, and writes
// its provenance note: hooks or none. Nothing else is staged or committed:
// not a file of the user's, nor what the user staged. With amend it
// replaces HEAD, the engine's own commit, its note carried over. Nothing
// to commit is fine. HEAD moved by another's commit is a
// *ForeignCommitError.
func (w *walker) commitWork(ctx context.Context, msg string, a enforce.Agent, amend bool) error {
	return w.commitPending(ctx, func([]string) string { return msg }, a, amend)
}

// commitPending is commitWork with the message made from the paths it
// commits.
func (w *walker) commitPending(ctx context.Context, message func(paths []string) string, a enforce.Agent, amend bool) error {
	// Another's ref lock (HEAD, the branch) is waited for as the engine's
	// own ref updates do. A process group of its own: git outlives a kill
	// of the engine's group and ends as it would have, rather than dying
	// with HEAD and the branch locked, which would stop every later
	// commit. The token lets the engine's commit past the hooks, which
	// leave its trailers and note to it; paths are paths, never patterns.
	// The hooks get the environment as it is, as from a person's commit.
	git := func(config ...string) *gitext.Repo {
		return w.e.Service.Repo.With(gitext.Exec{Dir: w.e.Workdir, Group: true, Inherit: true,
			Config: append([]string{"-c", gitext.WaitForLocks()}, config...),
			Env:    []string{enforce.EnvEngineCommit + "=" + w.wt.token, "GIT_LITERAL_PATHSPECS=1"}})
	}
	// Not ended with ctx either: a git killed mid-commit leaves the index
	// and HEAD locked, and a commit takes moments.
	whole := context.WithoutCancel(ctx)
	// A resume may start while the git commit of the engine it follows,
	// killed, still runs in its own group, holding the index: wait for it.
	if err := waitGone(ctx, filepath.Join(w.e.Service.Repo.GitDir, "index.lock"), gitext.LockWait); err != nil {
		return err
	}
	if err := w.checkHead(ctx); err != nil {
		return err
	}
	if err := w.settle(ctx); err != nil {
		return err
	}
	paths, err := w.engineChanges(ctx)
	if err != nil || len(paths) == 0 {
		return err
	}
	repo := w.e.Service.Repo
	phase := int(w.state.Gates.Ledger.Current())
	style, err := enforce.ReadStyle(ctx, repo)
	if err != nil {
		return err
	}
	text, _, err := enforce.WriteTrailers(ctx, repo, []byte(message(paths)+"\n"), enforce.CommitTrailers(w.e.ID, phase, a), style)
	if err != nil {
		return err
	}
	file, err := w.messageFile(text)
	if err != nil {
		return err
	}
	line, err := enforce.ProvenanceLine(repo, w.e.ID, phase, a, w.tip)
	if err != nil {
		return err
	}
	was, parent := w.wt.head, w.wt.head
	if amend {
		parent = w.parent(ctx, was)
	}
	w.wt.state.Note = &pendingNote{Was: was, Parent: parent, Line: string(line)}
	if err := writeJSON(w.workFile(), w.wt.state); err != nil {
		return err
	}
	if err := git().AddPaths(whole, paths); err != nil {
		return fmt.Errorf("git add: %w", err)
	}
	// Only the engine's paths, whatever else is staged; the message as it
	// is, its trailers in it.
	err = git(notes.RewriteArgs...).Commit(whole, gitext.CommitOptions{MessageFile: file, Only: paths, Amend: amend})
	if err != nil {
		err = fmt.Errorf("git commit: %w", err)
	}
	if rerr := os.Remove(file); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	head, err := repo.HeadCommit()
	if err != nil {
		return err
	}
	if err := notes.Append(ctx, repo, notes.ProvenanceRef, head, line); err != nil {
		return err
	}
	return w.committed(head)
}

// waitGone waits until path does not exist, at most limit: then git meets
// it and says what it is.
func waitGone(ctx context.Context, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for exists(path) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	return nil
}
