package build

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/spec"
)

// Executor runs a plan's tasks: run walks one task's steps and returns
// whether the walk stops there. Serial is this engine's; the parallel task
// DAG replaces it.
type Executor interface {
	Execute(ctx context.Context, tasks []report.PlanTask, run func(context.Context, report.PlanTask) (stop bool, err error)) error
}

// Serial runs the tasks one at a time, in the order given (the plan's
// dependency order), and stops at the first that stops.
type Serial struct{}

// Execute implements Executor.
func (Serial) Execute(ctx context.Context, tasks []report.PlanTask, run func(context.Context, report.PlanTask) (bool, error)) error {
	for _, t := range tasks {
		if stop, err := run(ctx, t); err != nil || stop {
			return err
		}
	}
	return nil
}

// tasks runs phase 3's tasks step: each task of the plan (the export
// named by st.From, from the newest report carrying it) through st's
// steps, then COMPLETE in the ledger with every task done.
func (w *walker) tasks(ctx context.Context, p spec.Point, st *spec.Step) (stepEnd, error) {
	plan, err := w.plan(ctx, st)
	if err != nil {
		return stopped(p, pipeline.StepFailed, WalkFailed, err.Error()), nil
	}
	order := plan.Order()
	w.taskNumbers = map[string]int{}
	for i, t := range order {
		w.taskNumbers[t.ID] = i + 1
	}
	var stop *stepEnd
	err = w.opts.Executor.Execute(ctx, order, func(ctx context.Context, t report.PlanTask) (bool, error) {
		for i := range st.Steps {
			sub := &st.Steps[i]
			q := spec.Point{Phase: p.Phase, Step: sub.ID, Task: t.ID}
			if w.done(q) {
				continue
			}
			end, err := w.step(ctx, q, sub, &t)
			if err != nil {
				return true, err
			}
			if end.status == "" {
				stop = &end
				return true, nil
			}
			if err := w.record(ctx, q, end); err != nil {
				return true, err
			}
			if end.status != pipeline.StepDone {
				stop = &end
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil || stop != nil {
		end := deref(stop)
		end.status = "" // the task's step recorded it: the tasks step goes on
		return end, err
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
func (w *walker) plan(ctx context.Context, st *spec.Step) (report.Plan, error) {
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

// commitTask commits what the agent of dispatch seq changed in the work
// tree for task, with CRUCIBLE_TASK (the task's 1-based position in the
// plan's order: the hooks' trailers want a positive integer) and
// CRUCIBLE_SEQ set, so that the commit-msg and post-commit hooks add the
// trailers and provenance. Nothing to commit (the agent committed itself,
// or changed nothing) is fine.
func (w *walker) commitTask(ctx context.Context, task *report.PlanTask, seq int, role string) error {
	git := func(args ...string) ([]byte, error) {
		// Another's ref lock (HEAD, the branch) is waited for as the engine's own ref updates do.
		// Not ended with ctx either: a git killed mid-commit leaves the
		// index and HEAD locked, and a commit takes moments.
		cmd := exec.Command("git", append([]string{"-c", gitext.WaitForLocks()}, args...)...)
		cmd.Dir = w.e.Workdir
		// A process group of its own: git outlives a kill of the engine's
		// group and ends as it would have, rather than dying with HEAD and
		// the branch locked, which would stop every later commit.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Env = append(os.Environ(), enforce.EnvTask+"="+strconv.Itoa(w.taskNumbers[task.ID]),
			enforce.EnvSeq+"="+strconv.Itoa(seq), enforce.EnvRole+"="+role)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return out, nil
	}
	// A resume may start while the git commit of the engine it follows,
	// killed, still runs in its own group, holding the index: wait for it.
	if err := waitGone(ctx, filepath.Join(w.e.Service.Repo.GitDir, "index.lock"), gitext.LockWait); err != nil {
		return err
	}
	if _, err := git("add", "-A"); err != nil {
		return err
	}
	if _, err := git("diff", "--cached", "--quiet"); err == nil {
		return nil
	}
	msg := fmt.Sprintf("%s (task %s)\n\n%s dispatch %d of pipeline %s.", task.Title, task.ID, role, seq, w.e.ID)
	_, err := git("commit", "-q", "-m", msg)
	return err
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
