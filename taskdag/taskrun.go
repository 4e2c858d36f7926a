// Package taskdag runs one level of a task DAG: at most MaxParallel task
// agents at once, each in its own linked worktree at the level's base
// commit (a slot of a pool under the git dir, reused from level to
// level), and brings back each task's work as a tree at the fan-in,
// checked against the output contract of the dispatch seed.
package taskdag

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/wtpool"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// Job is one task to run, with the output of the upstream tasks it
// receives, for its prompt.
type Job struct {
	Task     manifest.Task
	Upstream []Upstream
}

// Upstream is an upstream task's report.
type Upstream struct {
	ID     string
	Output []byte
}

// Dispatcher runs job's agent with workdir as its work tree and returns
// the report it wrote (nil when none). The build engine's is its durable
// Dispatch, so a killed run resumes. An error is a dispatch that could
// not run or record: the task fails with it; unless it is ErrHalted (see
// Runner.Halt), when the task's agent never started.
type Dispatcher func(ctx context.Context, job Job, workdir string) (report []byte, err error)

// ErrHalted is what a dispatch the engine would not start wraps (its cost
// cap is reached): the run stops without failing anything, resumable.
var ErrHalted = errors.New("the run is halted: no dispatch starts")

// Runner runs levels of tasks.
type Runner struct {
	Repo        *gitext.Repo
	Pool        wtpool.Pool
	MaxParallel int
	Dispatch    Dispatcher
	Gate        *Gate // the critique gate of each level; nil: none
	// Halt, when given, is asked before each task's agent starts: an
	// error wrapping ErrHalted keeps the task pending, not started. The
	// level's other tasks, running, finish and are committed; then the
	// run stops with that error (after the level's critique, which is a
	// dispatch too), resumable by running it again.
	Halt func() error
	// objects reads the trees the run compares and edits: each level's
	// base is read once for all its tasks.
	objects *gitext.Objects
	tidy    tidySlots
}

// SlotsDir is where, in the work tree, the task worktrees are: outside
// the git dir, where an agent's client lets it edit (claude refuses to
// edit anything under .git), and ignored by git.
const SlotsDir = ".crucible/slots"

// Slots is the pool of task worktrees under SlotsDir of repo's work tree.
func Slots(repo *gitext.Repo) wtpool.Pool {
	return wtpool.Pool{Repo: repo, Dir: filepath.Join(repo.WorkTree, filepath.FromSlash(SlotsDir)), Hidden: true}
}

// New is a runner whose task worktrees are the slots under SlotsDir of
// repo's work tree.
func New(repo *gitext.Repo, maxParallel int, dispatch Dispatcher) *Runner {
	return &Runner{Repo: repo, Pool: Slots(repo), MaxParallel: max(maxParallel, 1), Dispatch: dispatch, objects: repo.NewObjects()}
}

// Result is how one task of a level went.
type Result struct {
	ID      string
	Passed  bool     // the seed's self-report-passed: its work is to be committed
	Reason  string   // why it failed
	Halted  error    // why its agent never started (wraps ErrHalted): it is neither passed nor failed
	Report  []byte   // its output.yaml, nil when none
	Tree    string   // its work tree at the end, all changes staged; "" when it did not run
	Changed []string // the paths that differ from the base, sorted
	Slot    int      // the pool slot it ran in
}

// RunLevel runs jobs from base, at most MaxParallel at once, and returns
// their results in the jobs' order. Only the engine's own failures (ctx
// ended, a slot that could not be set up) are errors; a task that fails
// is a Result.
func (r *Runner) RunLevel(ctx context.Context, base string, jobs []Job) ([]Result, error) {
	defer r.objects.Close()
	return r.runLevel(ctx, base, jobs, nil, nil)
}

// runLevel is RunLevel; started, when given, is called (from the task's
// goroutine) once its slot is held and before the slot is checked out
// for it: an error fails the level. A job whose result is in taken (a
// killed run's task whose work was taken from its slot) does not run.
func (r *Runner) runLevel(ctx context.Context, base string, jobs []Job, started func(Job, string) error, taken map[string]Result) ([]Result, error) {
	results := make([]Result, len(jobs))
	errs := make([]error, len(jobs))
	free := make(chan int, r.MaxParallel)
	for n := 1; n <= r.MaxParallel; n++ {
		free <- n
	}
	var wg sync.WaitGroup
	for i, job := range jobs {
		if res, ok := taken[job.Task.ID]; ok {
			results[i] = res
			continue
		}
		var n int
		select {
		case n = <-free:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { free <- n }()
			results[i], errs[i] = r.runTask(ctx, n, base, job, started)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	failShared(results, jobs)
	return results, nil
}

// runTask runs one job in slot n.
func (r *Runner) runTask(ctx context.Context, n int, base string, job Job, started func(Job, string) error) (Result, error) {
	res := Result{ID: job.Task.ID, Slot: n}
	slot, err := r.Pool.Hold(n)
	if err != nil {
		return res, err
	}
	defer slot.Release()
	if r.Halt != nil {
		if err := r.Halt(); errors.Is(err, ErrHalted) {
			res.Halted = err
			return res, nil
		} else if err != nil {
			return res, err
		}
	}
	// Recorded before the checkout: what the slot's last task left there
	// is its work until a record names the slot's next task.
	if started != nil {
		if err := started(job, slot.Dir); err != nil {
			return res, err
		}
	}
	tidy := r.tidy.take(n)
	wt, err := slot.Checkout(ctx, base)
	if err != nil {
		return res, err
	}
	// What an earlier task left untracked goes; ignored files (build
	// caches) stay, which is what reusing the slot is for.
	if !tidy {
		if err := wt.With(gitext.Exec{Group: true}).Clean(ctx); err != nil {
			return res, fmt.Errorf("slot %d: %w", n, err)
		}
	}
	report, dispatchErr := r.Dispatch(ctx, job, slot.Dir)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if errors.Is(dispatchErr, ErrHalted) {
		res.Halted = dispatchErr
		return res, nil
	}
	res.Report = report
	if res.Tree, res.Changed, err = r.snapshot(ctx, wt, base); err != nil {
		return res, fmt.Errorf("slot %d: %w", n, err)
	}
	r.tidy.left(n, wt, res.Changed)
	if dispatchErr != nil {
		res.Reason = dispatchErr.Error()
		return res, nil
	}
	res.Passed, res.Reason = check(job.Task, report, res.Changed, slot.Dir)
	return res, nil
}

// snapshot stages everything the agent left in wt and returns the tree
// and the paths that differ from base.
func (r *Runner) snapshot(ctx context.Context, wt *gitext.Repo, base string) (tree string, changed []string, err error) {
	locking := wt.With(gitext.Exec{Group: true})
	if err := locking.AddAll(ctx, gitext.AddOptions{}); err != nil {
		return "", nil, err
	}
	if tree, err = locking.WriteIndexTree(ctx); err != nil {
		return "", nil, err
	}
	changed, err = r.objects.ChangedPaths(ctx, base, tree)
	return tree, changed, err
}

// UpstreamContext is what a task's prompt gets from the upstream tasks it
// receives: each one's output.yaml, fenced, in receives' order, as the
// seed injects it (the task's plan.md is left as it is). "" when it
// receives none.
func (j Job) UpstreamContext() string {
	if len(j.Upstream) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Upstream context\n")
	for _, u := range j.Upstream {
		fmt.Fprintf(&b, "\n### Output of task %s\n\n", u.ID)
		if u.Output == nil {
			b.WriteString("(no output was kept)\n")
			continue
		}
		fence := "```"
		for strings.Contains(string(u.Output), fence) {
			fence += "`"
		}
		b.WriteString(fence + "yaml\n" + strings.TrimRight(string(u.Output), "\n") + "\n" + fence + "\n")
	}
	return b.String()
}
