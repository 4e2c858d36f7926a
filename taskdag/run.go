package taskdag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// Event is a change the run made to its manifest's state: a task's
// status (with its commit, or why it failed), or, with Task "", a level's
// commits (Boundary..Head). The caller records each, in order, before the
// run goes on: they are what a resume starts from. Events recorded
// together must be recorded at once.
type Event struct {
	Task      string
	Status    manifest.TaskStatus
	CommitSHA string
	Reason    string
	Level     int
	Worktree  string         // dispatched: the worktree its agent works in
	Source    string         // fixing: critique or verification
	Round     int            // fixing, and a rebuilt level and its tasks: the amendment round
	Fix       string         // fixing: the commit holding its fix, once made
	issues    []report.Issue // fixing: Reason as the round found them, for its fix agent
	Boundary  string         // with Task "": the commit before the level's first commit
	Head      string         // with Task "": the level's last commit
}

// Apply applies e to m, as a Record function must (besides keeping e).
func Apply(m *manifest.Manifest, e Event) error {
	if e.Task == "" {
		if m.LevelBoundaries == nil {
			m.LevelBoundaries, m.LevelHeads = map[int]string{}, map[int]string{}
		}
		m.LevelBoundaries[e.Level], m.LevelHeads[e.Level] = e.Boundary, e.Head
		return nil
	}
	if err := m.SetStatus(e.Task, e.Status, e.CommitSHA); err != nil {
		return err
	}
	if e.Status == manifest.Fixing {
		m.Task(e.Task).FixingSource = e.Source
	}
	return nil
}

// Plan is what a run needs besides its runner.
type Plan struct {
	Manifest *manifest.Manifest
	Head     string // the commit the run builds on: Branch's, when Branch is given
	// Branch is the branch (refs/heads/...) each level's commits go on,
	// compare-and-swap, the work tree following when HEAD is on it; ""
	// leaves every branch alone.
	Branch string
	// WorkRef holds the newest level's commits from the moment they are
	// made, before any record names them, so that gc never takes them.
	WorkRef string
	Outputs map[string][]byte // reports of tasks already run, by id: filled as tasks finish
	// FastGate runs at each commit an amendment round rebuilds (the
	// manifest's CommitGate); "" stops the round with ErrNoCommitGate.
	FastGate string
	// Amend is what the amendment rounds recorded so far, nil for none:
	// Run keeps it up to date.
	Amend *Amendments
	// Record records events in one append (all of them or none) and
	// applies each to Manifest (Apply).
	Record  func(...Event) error
	Message func(Unit) string // a commit unit's message, trailers included
	// Between, when given, runs after settling and after each level,
	// before the next (and once before Run returns): build's Phase 3 runs
	// its tasks' remaining steps there. It may commit on the branch, and
	// returns the head to go on from; an error ends the run.
	Between func(head string) (string, error)
	// Finished, when given, says how the dispatch of a task a killed run
	// left dispatched ended, nil when none finished (the agent never
	// started). A completed one is never run again: its work is taken
	// from its slot, or, when that is gone, the task is pending again
	// with the reason, for its dispatcher to record the retry with.
	Finished func(task string) (*Finished, error)
	// Collect makes the run a CI collector's (git crucible run --collect):
	// it dispatches no task. A task's work is taken from the task commit
	// its job made (Finished.Commit); a level goes on once each of its
	// ready tasks has one, else Run stops with a *NotReady. Its critique
	// and amendment rounds run as a local run's do.
	Collect bool
}

// NotReady stops a collector at a level whose tasks' jobs have not all
// left their work: Waiting are those, Level theirs.
type NotReady struct {
	Level   int
	Waiting []string
}

func (e *NotReady) Error() string {
	return fmt.Sprintf("level %d waits on %d task(s): %s", e.Level, len(e.Waiting), strings.Join(e.Waiting, ", "))
}

// Finished is how the dispatch of a task left dispatched ended.
type Finished struct {
	Seq     int
	Status  string // the dispatch's: completed, failed, error
	Summary string
	Report  []byte // a completed one's report
	// Worktree is where it ran (Event.Worktree); Reused names the task
	// dispatched there after it, whose checkout took its work away.
	Worktree string
	Reused   string
	// Commit is the task commit a CI job made of its work (on the
	// level's base), "" when none: its work is taken from there.
	Commit string
}

// Run takes the manifest's tasks level by level from their statuses: the
// ready tasks of the lowest level run at once (RunLevel), the passed ones
// are committed on Head in the units of the manifest's commit strategy
// (Units, CommitLevel), the work ref and then the branch
// move to the level's last commit, and the next level starts from there.
// It returns the new head. A task is completed once the branch holds its
// commit. Tasks left no way to run are a *manifest.Deadlock.
//
// A resumed run goes on from what a killed one recorded: a task left
// dispatched whose dispatch completed has its work taken from its slot
// (Plan.Finished), else it runs again (it had not committed); one left
// committed is completed if the branch holds its commit, and if the
// branch is still at the level's boundary it is moved there first;
// otherwise it runs again.
func (r *Runner) Run(ctx context.Context, p Plan) (string, error) {
	defer r.objects.Close()
	m := p.Manifest
	if p.Amend == nil {
		p.Amend = &Amendments{}
	}
	var mu sync.Mutex // tasks of a level record their dispatch from their goroutines
	record := func(es ...Event) error {
		mu.Lock()
		defer mu.Unlock()
		if err := p.Record(es...); err != nil {
			return err
		}
		for _, e := range es {
			p.Amend.Apply(e)
		}
		return nil
	}
	head, taken, err := r.settle(ctx, p, record)
	if err != nil {
		return head, err
	}
	for {
		if p.Between != nil {
			if head, err = p.Between(head); err != nil {
				return head, err
			}
		}
		ready := withTaken(m, taken)
		if p.Collect {
			// A job at work on a task keeps its level waiting.
			ready = slices.Clone(ready)
			for _, t := range m.Tasks {
				if _, ok := taken[t.ID]; t.Status == manifest.Dispatched && !ok {
					ready = append(ready, t.ID)
				}
			}
		}
		if len(ready) == 0 {
			if d := m.Deadlocked(); d != nil {
				return head, d
			}
			return head, nil
		}
		level := m.Level(ready[0])
		for _, id := range ready {
			level = min(level, m.Level(id))
		}
		var jobs []Job
		var waiting []string
		for _, id := range ready {
			if m.Level(id) != level {
				continue
			}
			if _, ok := taken[id]; p.Collect && !ok {
				waiting = append(waiting, id)
			}
			t := m.Task(id)
			job := Job{Task: *t}
			for _, up := range t.Receives {
				job.Upstream = append(job.Upstream, Upstream{ID: up, Output: p.Outputs[up]})
			}
			jobs = append(jobs, job)
		}
		if len(waiting) > 0 {
			return head, &NotReady{Level: level, Waiting: waiting}
		}
		results, err := r.runLevel(ctx, head, jobs, func(job Job, dir string) error {
			return record(Event{Task: job.Task.ID, Status: manifest.Dispatched, Level: level, Worktree: dir})
		}, taken)
		if err != nil {
			return head, err
		}
		for _, j := range jobs {
			delete(taken, j.Task.ID)
		}
		var halted error
		for _, res := range results {
			if res.Report != nil {
				p.Outputs[res.ID] = res.Report
			}
			switch {
			case res.Halted != nil:
				// Never started: pending again (it may have been recorded dispatched).
				halted = res.Halted
				if m.Task(res.ID).Status != manifest.Pending {
					if err := record(Event{Task: res.ID, Status: manifest.Pending}); err != nil {
						return head, err
					}
				}
			case !res.Passed:
				if err := record(Event{Task: res.ID, Status: manifest.Failed, Reason: res.Reason, Level: level}); err != nil {
					return head, err
				}
			}
		}
		units := Units(m.Commits.Strategy, Group(m), results)
		commits, next, err := r.CommitLevel(ctx, head, units, p.Message)
		if err != nil {
			return head, err
		}
		if head, err = r.commitLevel(ctx, p, record, level, head, next, commits); err != nil {
			return head, err
		}
		if halted != nil {
			return head, halted
		}
	}
}

// commitLevel records a level's commits (made from boundary to next) and
// puts them on the branch: the work ref first, so that gc keeps them from
// the start; each task committed, with the level, in one record (a resume
// moves the branch to a level recorded, and runs again the tasks of one
// not recorded, never a task recorded committed); the branch; then the
// tasks completed, in one record too.
func (r *Runner) commitLevel(ctx context.Context, p Plan, record func(...Event) error, level int, boundary, next string, commits []Commit) (string, error) {
	if next != boundary {
		if err := r.holdWork(ctx, p, next); err != nil {
			return boundary, err
		}
	}
	var decided []Event
	for _, c := range commits {
		e := Event{Task: c.Task, Status: manifest.Committed, CommitSHA: c.SHA, Level: level}
		if c.SHA == "" {
			e.Reason = "changed nothing"
		}
		decided = append(decided, e)
	}
	if next != boundary {
		decided = append(decided, Event{Level: level, Boundary: boundary, Head: next})
	}
	if err := record(decided...); err != nil {
		return boundary, err
	}
	return r.finishLevel(ctx, p, record, level, boundary, next, commits)
}

// finishLevel takes a recorded level through the critique gate, when the
// runner has one, then puts the head it accepts on the branch and
// completes the tasks, each with the gate's warnings about it.
func (r *Runner) finishLevel(ctx context.Context, p Plan, record func(...Event) error, level int, boundary, next string, commits []Commit) (string, error) {
	var warnings map[string][]string
	if r.Gate != nil {
		var err error
		if next, commits, warnings, err = r.review(ctx, p, record, level, boundary, next, commits); err != nil {
			return boundary, err
		}
	}
	if err := r.advance(ctx, p, boundary, next); err != nil {
		return boundary, err
	}
	completed := make([]Event, len(commits))
	for i, c := range commits {
		completed[i] = Event{Task: c.Task, Status: manifest.Completed, CommitSHA: c.SHA, Level: level, Reason: strings.Join(warnings[c.Task], "; ")}
	}
	return next, record(completed...)
}

// holdWork points the work ref at head, compare-and-swap from where it is.
func (r *Runner) holdWork(ctx context.Context, p Plan, head string) error {
	if p.WorkRef == "" {
		return nil
	}
	old, err := r.Repo.ReadRef(p.WorkRef)
	if err != nil {
		return err
	}
	return r.Repo.UpdateRefs(ctx, "git crucible run: a level's commits", gitext.RefUpdate{Name: p.WorkRef, Old: old, New: head})
}

// advance moves the branch from old to new, compare-and-swap, and the
// work tree and index with it when HEAD is on it. They move first, as git
// checkout moves them (a file changed in the work tree that the move
// would change stops it, and nothing moves); then the branch, put back
// if it moved meanwhile. A kill between the two leaves the branch at old
// with the index at new, which advance then finishes.
func (r *Runner) advance(ctx context.Context, p Plan, old, new string) error {
	if p.Branch == "" || old == new {
		return nil
	}
	follow := false
	if r.Repo.WorkTree != "" {
		b, err := r.Repo.HeadBranch()
		if err != nil {
			return err
		}
		follow = "refs/heads/"+b == p.Branch
	}
	if follow {
		if err := r.Repo.With(gitext.Exec{Group: true}).ReadTreeMerge(ctx, old, new); err != nil {
			return fmt.Errorf("the work tree cannot take the level's commits: %w", err)
		}
	}
	err := r.Repo.UpdateRefs(ctx, "git crucible run: a level's commits", gitext.RefUpdate{Name: p.Branch, Old: old, New: new})
	if err != nil && follow {
		if undo := r.Repo.With(gitext.Exec{Group: true}).ReadTreeMerge(context.WithoutCancel(ctx), new, old); undo != nil {
			err = errors.Join(err, undo)
		}
	}
	return err
}

// settle turns what a killed run left into statuses Run can go on from,
// and returns the head to go on from and the results of the tasks left
// dispatched whose work it took (they stay dispatched until committed).
func (r *Runner) settle(ctx context.Context, p Plan, record func(...Event) error) (string, map[string]Result, error) {
	head := p.Head
	if level, commits := r.gatePending(p); commits != nil {
		var err error
		if head, err = r.finishLevel(ctx, p, record, level, p.Head, p.Manifest.LevelHeads[level], commits); err != nil {
			return p.Head, nil, err
		}
	}
	head, err := r.finishMove(ctx, p, head)
	if err != nil {
		return head, nil, err
	}
	taken := map[string]Result{}
	for _, t := range p.Manifest.Tasks {
		switch t.Status {
		case manifest.Dispatched:
			e := Event{Task: t.ID, Status: manifest.Pending}
			f, err := p.finished(t.ID)
			if err != nil {
				return head, nil, err
			}
			if p.Collect && (f == nil || f.Commit == "") {
				continue // its job is at work, or died: its lease says when another takes over
			}
			if f != nil {
				res, why, err := r.take(ctx, t, *f, head, p.Message)
				if err != nil {
					return head, nil, err
				}
				if why == "" {
					taken[t.ID] = res
					continue
				}
				e.Reason = why
			}
			if err := record(e); err != nil {
				return head, nil, err
			}
		case manifest.Committed:
			e := Event{Task: t.ID, Status: manifest.Completed, CommitSHA: t.CommitSHA, Level: p.Manifest.Level(t.ID)}
			if t.CommitSHA != "" {
				// An unknown commit is an error here too: either way the branch does not hold it.
				if in, err := r.Repo.IsAncestor(ctx, t.CommitSHA, head); err != nil || !in {
					e = Event{Task: t.ID, Status: manifest.Pending}
				}
			}
			if err := record(e); err != nil {
				return head, nil, err
			}
		case manifest.Fixing:
			return head, nil, fmt.Errorf("task %s is fixing (%s) outside the newest level's gate", t.ID, t.FixingSource)
		}
	}
	return head, taken, nil
}

func (p Plan) finished(task string) (*Finished, error) {
	if p.Finished == nil {
		return nil, nil
	}
	return p.Finished(task)
}

// take takes the work of task t's finished dispatch f from the slot it
// ran in, as runTask would have after it, the level at base. When it
// cannot, it says why, for the retry: the dispatch did not complete, or
// its work is gone.
func (r *Runner) take(ctx context.Context, t manifest.Task, f Finished, base string, message func(Unit) string) (Result, string, error) {
	gone := func(why string, args ...any) (Result, string, error) {
		return Result{}, fmt.Sprintf("dispatch %d completed, but ", f.Seq) + fmt.Sprintf(why, args...), nil
	}
	switch {
	case f.Status != "completed":
		return Result{}, fmt.Sprintf("dispatch %d ended %s: %s", f.Seq, f.Status, f.Summary), nil
	case f.Commit != "":
		res, err := r.takeCommit(ctx, t, f, base, message)
		return res, "", err
	case f.Reused != "":
		return gone("task %s was dispatched in its worktree %s before its work was committed", f.Reused, f.Worktree)
	}
	slot, wt, ok, err := r.Pool.Reopen(f.Worktree)
	if err != nil || !ok {
		if err == nil {
			return gone("its worktree %s is gone", f.Worktree)
		}
		return Result{}, "", err
	}
	defer slot.Release()
	head, err := wt.Resolve(ctx, "HEAD")
	if err != nil {
		return Result{}, "", fmt.Errorf("slot %d: %w", slot.N, err)
	}
	if on, err := r.Repo.IsAncestor(ctx, base, head); err != nil || !on {
		return gone("its worktree %s is not on the commit its level starts from, %s", f.Worktree, base)
	}
	res := Result{ID: t.ID, Report: f.Report, Slot: slot.N}
	if res.Tree, res.Changed, err = r.snapshot(ctx, wt, base); err != nil {
		return Result{}, "", fmt.Errorf("slot %d: %w", slot.N, err)
	}
	res.Passed, res.Reason = check(t, f.Report, res.Changed, slot.Dir)
	return res, "", nil
}

// withTaken is m's ready tasks and the tasks of taken, in m's order.
func withTaken(m *manifest.Manifest, taken map[string]Result) []string {
	ready := m.Ready()
	if len(taken) == 0 {
		return ready
	}
	var out []string
	for _, t := range m.Tasks {
		if _, ok := taken[t.ID]; ok || slices.Contains(ready, t.ID) {
			out = append(out, t.ID)
		}
	}
	return out
}

// finishMove ends the branch move a killed run left half done: the
// newest level's commits recorded and the branch still at its boundary.
// It returns the head to go on from.
func (r *Runner) finishMove(ctx context.Context, p Plan, head string) (string, error) {
	m := p.Manifest
	level := newestLevel(m)
	if level == 0 || p.Branch == "" || head != m.LevelBoundaries[level] {
		return head, nil
	}
	next := m.LevelHeads[level]
	if err := r.advance(ctx, p, head, next); err != nil {
		return head, err
	}
	return next, nil
}

func newestLevel(m *manifest.Manifest) int {
	level := 0
	for l := range m.LevelHeads {
		level = max(level, l)
	}
	return level
}

// gatePending returns the newest recorded level and its commits when a
// killed run left it in the critique gate: the head still at its
// boundary (the branch moves only once the gate accepts), a task of it
// committed or fixing. nil commits: none is.
func (r *Runner) gatePending(p Plan) (int, []Commit) {
	m := p.Manifest
	level := newestLevel(m)
	if r.Gate == nil || level == 0 || p.Head != m.LevelBoundaries[level] {
		return 0, nil
	}
	var commits []Commit
	for _, t := range m.Tasks {
		if m.Level(t.ID) == level && (t.Status == manifest.Committed || t.Status == manifest.Fixing) {
			commits = append(commits, Commit{Task: t.ID, SHA: t.CommitSHA})
		}
	}
	return level, commits
}

// takeCommit takes the work of task t from the task commit a CI job made,
// as take does from a slot, checking it first: a remote's ref is not
// trusted. Its one parent must be base, the level's; its message the one
// message gives the task's own commit (its trailers name the pipeline and
// the task); its changed paths are held to the task's plan as a slot's
// are, its evidence files must be in its tree. A commit that fails is a
// failed task, saying why.
func (r *Runner) takeCommit(ctx context.Context, t manifest.Task, f Finished, base string, message func(Unit) string) (Result, error) {
	res := Result{ID: t.ID, Report: f.Report}
	fail := func(format string, args ...any) (Result, error) {
		res.Reason = fmt.Sprintf("task commit %s: ", short(f.Commit)) + fmt.Sprintf(format, args...)
		return res, nil
	}
	parents, err := r.Repo.Parents(ctx, f.Commit)
	if err != nil {
		return fail("not a commit this clone has (fetch its task ref)")
	}
	if len(parents) != 1 || parents[0] != base {
		return fail("its parent is not %s, the commit its level starts from", short(base))
	}
	if res.Tree, err = r.Repo.ResolveTree(ctx, f.Commit); err != nil {
		return Result{}, err
	}
	if res.Changed, err = r.Repo.ChangedPaths(ctx, base, res.Tree); err != nil {
		return Result{}, err
	}
	list, err := r.Repo.ListTree(ctx, res.Tree)
	if err != nil {
		return Result{}, err
	}
	files := map[string]bool{}
	for _, file := range list {
		files[file.Path] = true
	}
	if message != nil {
		got, err := r.Repo.CatFile(ctx, "commit", f.Commit)
		if err != nil {
			return Result{}, err
		}
		_, body, _ := bytes.Cut(got, []byte("\n\n"))
		if want := message(Unit{Results: []Result{res}, Paths: [][]string{res.Changed}}); string(body) != want {
			return fail("its message is not the task's commit message (its trailers must name the pipeline and the task)")
		}
	}
	res.Passed, res.Reason = checkWith(t, f.Report, res.Changed, func(p string) bool { return files[manifest.CleanPath(p)] })
	return res, nil
}

func short(oid string) string { return oid[:min(len(oid), 12)] }

// RunOne runs one job from base in slot 1 of the pool, as a level runs
// each (a CI job's task, git crucible run --task): started, when given, is
// called once the slot is held, before its checkout.
func (r *Runner) RunOne(ctx context.Context, base string, job Job, started func(Job, string) error) (Result, error) {
	defer r.objects.Close()
	return r.runTask(ctx, 1, base, job, started)
}
