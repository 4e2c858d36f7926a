package record

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
	"github.com/git-crucible/git-crucible/remote"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// TaskRefs is where CI jobs put the task commits of pipeline id's tasks.
func TaskRefs(id string) string { return "refs/crucible/tasks/" + id + "/" }

// TaskRef is the ref of task's task commit in pipeline id.
func TaskRef(id, task string) string { return TaskRefs(id) + task }

// CI carries an engine's records to a remote that CI jobs share: every
// append is pushed with the notes and Refs in one atomic push that is
// never forced, so the remote's chain stays one line that every job
// appends to in turn. A push the remote refuses because another job
// pushed first takes the append back, fetches (the remote's chains are
// verified before they are taken in), and appends again on the new tip,
// for up to Wait.
type CI struct {
	Syncer *remote.Syncer
	Remote string
	Branch string        // the branch checked out, as Join found it
	Refs   []string      // refs each push sends besides the chain and the notes
	Wait   time.Duration // how long lost races are retried; 0: two minutes
	// Pushes counts the pushes the remote took, Lost those it refused
	// because another job pushed first.
	Pushes, Lost int
}

// UseCI makes the engine's appends go to c's remote (pipeline.Service.Relay).
func (e *Engine) UseCI(c *CI) {
	e.Service.Relay = func(ctx context.Context, id string, append func() error) error {
		if id != e.ID {
			return append()
		}
		return c.relay(ctx, e.Service, id, append)
	}
}

// Pull fetches the remote's pipeline history and takes it in; pipeline
// id's chain must be taken in (a chain that fails verification is not).
func (c *CI) Pull(ctx context.Context, id string) error {
	report, err := c.Syncer.Fetch(ctx, c.Remote)
	if err != nil {
		return err
	}
	for _, p := range report.Pipelines {
		if p.ID == id && len(p.Rejected) > 0 {
			return fmt.Errorf("the chain of %s fetched from %s was not taken in: %s", id, c.Remote, strings.Join(p.Rejected, "; "))
		}
	}
	return c.Syncer.Svc.Reguard(id)
}

// Join makes c the remote of a task run on the branch checked out: the
// remote's pipeline history is taken in (Pull), and the branch fetched to
// its tracking ref, whose commits are the levels' bases. A detached HEAD
// is refused: a task run commits on a branch.
func (c *CI) Join(ctx context.Context) error {
	if err := c.Pull(ctx, ""); err != nil {
		return err
	}
	branch, err := c.Syncer.Svc.Repo.HeadBranch()
	if err != nil {
		return err
	}
	if branch == "" {
		return &outcome.Refused{Err: errors.New("HEAD is detached: a task run commits on a branch")}
	}
	c.Branch = branch
	_, err = c.Syncer.FetchRefs(ctx, c.Remote, "refs/heads/"+branch)
	return err
}

// HoldsBranch refuses a collector whose branch (Join's) does not hold
// the remote's: the collector builds on it and pushes it, never forced.
func (c *CI) HoldsBranch(ctx context.Context) error {
	repo, branch := c.Syncer.Svc.Repo, c.Branch
	theirs, err := repo.ReadRef(remote.TrackingRefs(c.Remote, "refs/heads/"+branch))
	if err != nil {
		return err
	}
	ours, err := repo.HeadCommit()
	if err != nil {
		return err
	}
	if in, err := repo.IsAncestor(ctx, theirs, ours); err != nil || !in {
		return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("branch '%s' does not hold %s's (%s)", branch, c.Remote, short(theirs))},
			"bring it up to date first: git pull --ff-only "+c.Remote+" "+branch)
	}
	return nil
}

// relay runs append, then pushes; see CI.
func (c *CI) relay(ctx context.Context, svc *pipeline.Service, id string, append func() error) error {
	wait := c.Wait
	if wait == 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for attempt := 1; ; attempt++ {
		before, err := svc.Store.Tip(id)
		if err != nil {
			return err
		}
		if err := append(); err != nil {
			return err
		}
		after, err := svc.Store.Tip(id)
		if err != nil {
			return err
		}
		_, err = c.Syncer.Push(ctx, c.Remote, remote.Selection{IDs: []string{id}, Refs: c.Refs})
		if err == nil {
			c.Pushes++
			return nil
		}
		if !errors.Is(err, remote.ErrRemoteMoved) && !errors.Is(err, remote.ErrLostRace) {
			return err
		}
		c.Lost++
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %d attempts in %v: %w", attempt, wait, err)
		}
		// Another job pushed first: ours goes after its events.
		if before != after {
			if err := svc.Repo.UpdateRefs(ctx, "crucible: an append the remote refused, taken back",
				gitext.RefUpdate{Name: refs.PipelineRef(id), Old: after, New: before}); err != nil {
				return err
			}
		}
		if err := c.Pull(ctx, id); err != nil {
			return err
		}
		if err := backOff(ctx, attempt); err != nil {
			return err
		}
	}
}

// backOff waits a random while that grows with the attempt, up to 2 s:
// eight jobs pushing at once lost a third fewer races than with 1 s.
func backOff(ctx context.Context, attempt int) error {
	return remote.WaitBelow(ctx, min(time.Duration(attempt)*250*time.Millisecond, 2*time.Second))
}

// TaskJob is one task of a task run, run by a CI job (git crucible run
// --task): its agent in a slot at its level's base, its output contract,
// its work committed on its task ref.
type TaskJob struct {
	TaskRun
	Task  string
	Job   string        // the job's name, recorded with its lease
	Lease time.Duration // how long the lease lasts: a job silent longer is taken over
	CI    *CI           // nil: the records stay in this clone
}

// The outcomes of a task job.
const (
	JobRan    = "ran"    // it ran the task: its commit is on the task ref (or the task failed)
	JobDone   = "done"   // another job's result was there: nothing ran
	JobHeld   = "held"   // another job holds the task's lease: nothing ran
	JobTaken  = "taken"  // the collector has the task already: nothing ran
	JobFailed = "failed" // the task failed before: no job runs it again
	JobLost   = "lost"   // its lease ran out and another job took the task over: its work is dropped
)

// TaskJobResult is how a task job ended.
type TaskJobResult struct {
	Task    string `json:"task"`
	Job     string `json:"job"`
	Level   int    `json:"level"`
	Outcome string `json:"outcome"`
	Status  string `json:"status,omitempty"` // ran: completed or failed
	Reason  string `json:"reason,omitempty"`
	Commit  string `json:"commit,omitempty"` // the task commit
	Ref     string `json:"ref"`
	Holder  string `json:"holder,omitempty"` // held, done: the job
	Until   string `json:"until,omitempty"`  // held: its lease's end
	Base    string `json:"base,omitempty"`
	Pushes  int    `json:"pushes"`
	Lost    int    `json:"lost_races"`
}

// NoRunError refuses a task job before the task run has begun: its
// collector begins it.
type NoRunError struct{ ID string }

func (e *NoRunError) Error() string {
	return fmt.Sprintf("pipeline %s has no task run begun: a collector begins it", e.ID)
}

// NotReadyError refuses a task job whose task waits on others.
type NotReadyError struct {
	Task    string
	Waiting []string
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("task %s is not ready: it waits on %s", e.Task, strings.Join(e.Waiting, ", "))
}

// errStop ends a task job that has nothing to do; its result says why.
var errStop = errors.New("nothing to do")

// lease is a task's newest CI job, as the chain says.
type lease struct {
	job, until, commit string
}

// leaseOf is task's newest job lease and result in events: the newest
// dispatched record of a job, its result (one with a commit) kept with it.
func leaseOf(events []pipeline.Event, task string) (lease, error) {
	var l lease
	for _, ev := range events {
		if ev.Type != pipeline.TypeDAGTask {
			continue
		}
		var d pipeline.DAGTaskData
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return l, err
		}
		switch {
		case d.Task != task:
		case d.Status == string(manifest.Dispatched) && d.Job != "" && d.Commit != "":
			if d.Job == l.job {
				l.commit = d.Commit
			}
		case d.Status == string(manifest.Dispatched) && d.Job != "":
			l = lease{job: d.Job, until: d.Lease}
		default:
			l = lease{}
		}
	}
	return l, nil
}

// levelBase is the commit the tasks of level start from: the head of the
// newest level before it that made commits, else where the run began.
func levelBase(m *manifest.Manifest, began *pipeline.DAGRunData, level int) (string, error) {
	for l := level - 1; l >= 1; l-- {
		if h := m.LevelHeads[l]; h != "" {
			return h, nil
		}
	}
	if began.Start == "" {
		return "", errors.New("the task run's chain does not say where it began (an earlier git-crucible's run)")
	}
	return began.Start, nil
}

// RunTaskJob runs j's task once (a CI job's share of a task run): it
// claims the task with a lease recorded in the chain, runs its agent in
// slot 1 at its level's base through the durable dispatch (its start and
// finish recorded), checks its output contract, commits its work on the
// base (the message and trailers its level commit will have) at its task
// ref, and records the result. With CI, each record is pushed (the task
// ref with the result). A task whose result is there, whose lease
// another job holds, or that is taken already, runs nothing; a lease run
// out is taken over, the dead job's dispatch finished as interrupted and
// retried.
func (e *Engine) RunTaskJob(ctx context.Context, j TaskJob) (TaskJobResult, error) {
	repo := e.Service.Repo
	m := j.Manifest
	res := TaskJobResult{Task: j.Task, Job: j.Job, Ref: TaskRef(e.ID, j.Task), Level: m.Level(j.Task)}
	if m.Task(j.Task) == nil {
		return res, fmt.Errorf("the manifest has no task %q", j.Task)
	}
	if j.CI != nil {
		if err := j.CI.Pull(ctx, e.ID); err != nil {
			return res, err
		}
	}
	numbers := map[string]int{}
	for i, t := range m.Tasks {
		numbers[t.ID] = i + 1
	}
	var (
		job      taskdag.Job
		retryOf  *int
		retryWhy string
	)
	claim := func() error {
		events, err := e.events(ctx)
		if err != nil {
			return err
		}
		m.ClearState()
		began, err := replayTaskRun(events, m, &taskdag.Amendments{})
		switch {
		case err != nil:
			return err
		case began == nil:
			return &NoRunError{ID: e.ID}
		}
		t := m.Task(j.Task)
		l, err := leaseOf(events, j.Task)
		if err != nil {
			return err
		}
		now, err := gitext.Now()
		if err != nil {
			return err
		}
		switch t.Status {
		case manifest.Completed, manifest.Committed, manifest.Fixing:
			res.Outcome = JobTaken
			return errStop
		case manifest.Failed:
			res.Outcome = JobFailed
			return errStop
		case manifest.Pending:
			var waiting []string
			for _, d := range t.DependsOn {
				if m.Task(d).Status != manifest.Completed {
					waiting = append(waiting, d)
				}
			}
			if len(waiting) > 0 {
				return &NotReadyError{Task: t.ID, Waiting: waiting}
			}
		case manifest.Dispatched:
			if l.commit != "" {
				res.Outcome, res.Holder, res.Commit = JobDone, l.job, l.commit
				return errStop
			}
			until, err := time.Parse(time.RFC3339, l.until)
			if l.job != "" && l.job != j.Job && err == nil && now.Before(until) {
				res.Outcome, res.Holder, res.Until = JobHeld, l.job, l.until
				return errStop
			}
		}
		if res.Base, err = levelBase(m, began, res.Level); err != nil {
			return err
		}
		outputs, err := e.taskOutputs(ctx, events, j.Step)
		if err != nil {
			return err
		}
		job = taskdag.Job{Task: *t}
		for _, up := range t.Receives {
			job.Upstream = append(job.Upstream, taskdag.Upstream{ID: up, Output: outputs[up]})
		}
		// The task's dispatch a job left running is over: its lease ran out.
		records, err := pipeline.Records(events)
		if err != nil {
			return err
		}
		retryOf, retryWhy = nil, ""
		for _, r := range records {
			if r.Point.Step != j.Step || r.Point.Task != j.Task {
				continue
			}
			why := fmt.Sprintf("dispatch %d ended %s", r.Seq, r.Status)
			if !r.Finished() {
				why = fmt.Sprintf("interrupted: job %s's lease on task %s ran out at %s", l.job, j.Task, l.until)
				if err := e.Interrupt(ctx, r.Seq, why); err != nil {
					return err
				}
			}
			seq := r.Seq
			retryOf, retryWhy = &seq, why
		}
		return e.Append(ctx, pipeline.Draft{Type: pipeline.TypeDAGTask, Data: pipeline.DAGTaskData{Task: j.Task,
			Status: string(manifest.Dispatched), Level: res.Level, Job: j.Job, Lease: now.Add(j.Lease).UTC().Format(time.RFC3339)}})
	}
	_, _, renderTask := e.taskPrompts(j.TaskRun)
	runner := taskdag.New(repo, 1, e.TaskDispatcher(Call{Point: pipeline.Point{Step: j.Step}, Role: j.Role, Template: j.Template,
		TemplateSHA256: j.Templates.Digest(j.Template)}, j.Titles, renderTask, func(string) (*int, string) { return retryOf, retryWhy }))
	// The claim finds the level's base, and what the task receives.
	if err := e.Service.Relayed(ctx, e.ID, claim); err != nil {
		if errors.Is(err, errStop) {
			return res, nil
		}
		return res, err
	}
	if _, err := repo.Resolve(ctx, res.Base+"^{commit}"); err != nil {
		return res, fmt.Errorf("the level's base %s is not in this clone: fetch the branch", short(res.Base))
	}
	out, rerr := runner.RunOne(ctx, res.Base, job, nil)
	if rerr != nil {
		return res, rerr
	}
	res.Outcome, res.Status, res.Reason = JobRan, string(manifest.Completed), out.Reason
	if !out.Passed {
		res.Status = string(manifest.Failed)
	}
	if out.Passed {
		phase, err := e.phase(ctx)
		if err != nil {
			return res, err
		}
		msg := e.unitMessage(j.TaskRun, taskdag.Unit{Results: []taskdag.Result{out}, Paths: [][]string{out.Changed}}, numbers, phase)
		sha, err := repo.CommitTree(ctx, out.Tree, []string{res.Base}, msg)
		if err != nil {
			return res, err
		}
		res.Commit = sha
		old, err := repo.ReadRef(res.Ref)
		if err != nil {
			return res, err
		}
		if err := repo.UpdateRefs(ctx, "git crucible run --task: task "+j.Task, gitext.RefUpdate{Name: res.Ref, Old: old, New: res.Commit}); err != nil {
			return res, err
		}
		if j.CI != nil {
			j.CI.Refs = append(j.CI.Refs, res.Ref)
		}
	}
	result := func() error {
		events, err := e.events(ctx)
		if err != nil {
			return err
		}
		l, err := leaseOf(events, j.Task)
		if err != nil {
			return err
		}
		if l.job != j.Job || l.commit != "" {
			res.Outcome, res.Holder = JobLost, l.job
			return errStop
		}
		d := pipeline.DAGTaskData{Task: j.Task, Status: string(manifest.Dispatched), Level: res.Level, Job: j.Job, Commit: res.Commit}
		if !out.Passed {
			d = pipeline.DAGTaskData{Task: j.Task, Status: string(manifest.Failed), Level: res.Level, Reason: out.Reason}
		}
		return e.Append(ctx, pipeline.Draft{Type: pipeline.TypeDAGTask, Data: d})
	}
	if err := e.Service.Relayed(ctx, e.ID, result); err != nil && !errors.Is(err, errStop) {
		return res, err
	}
	return res, nil
}

func short(oid string) string { return oid[:min(len(oid), 12)] }
