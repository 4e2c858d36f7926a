package main

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/remote"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/taskdag/record"
)

// defaultLease is how long a CI job's lease on its task lasts.
const defaultLease = time.Hour

// ciRemote is the CI remote --push names, joined (record.CI.Join), nil
// without it.
func ciRemote(c *cli.Context, s *session) (*record.CI, error) {
	name := c.String("push")
	if name == "" {
		return nil, nil
	}
	if err := remote.CheckName(name); err != nil {
		return nil, usageErrorf("--push %s: %v", name, err)
	}
	ci := &record.CI{Syncer: &remote.Syncer{Svc: s.svc}, Remote: name}
	if err := ci.Join(c.Context); err != nil {
		return nil, remoteError(s, err, name)
	}
	return ci, nil
}

// jobName is --job, or a name made up for this job.
func jobName(c *cli.Context) (string, error) {
	if n := c.String("job"); n != "" {
		return n, nil
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "job-" + hex.EncodeToString(b), nil
}

// taskAgent checks that role taskdag.TaskRole has an agent that runs by itself.
func taskAgent(c *cli.Context, s *session) (*agent.Config, error) {
	agents, err := agentConfig(c, s)
	if err != nil {
		return nil, err
	}
	if _, err := taskdag.TaskAgent(agents, s.svc.Repo.WorkTree); err != nil {
		return nil, err
	}
	return agents, nil
}

// runTaskJob is run --task: one task, as a CI job runs it.
func runTaskJob(c *cli.Context, s *session, m *manifest.Manifest, name string) error {
	task := c.String("task")
	if m.Task(task) == nil {
		return &refused{Err: fmt.Errorf("%s has no task %q", name, task)}
	}
	job, err := jobName(c)
	if err != nil {
		return err
	}
	agents, err := taskAgent(c, s)
	if err != nil {
		return err
	}
	templates, err := prompt.Load(s.svc.Repo.WorkTree)
	if err != nil {
		return err
	}
	ci, err := ciRemote(c, s)
	if err != nil {
		return err
	}
	id := openPipeline(c, s)
	if id == "" {
		return withHints(&refused{Err: errors.New("the branch has no open pipeline: no task run has begun")},
			"a collector begins it: git crucible run --collect "+pushArg(c)+shellQuote(name))
	}
	e, err := engine.Open(s.svc, id, agents, s.svc.Repo.WorkTree)
	if err != nil {
		return err
	}
	defer e.Close()
	tasks := e.TaskEngine()
	if ci != nil {
		tasks.UseCI(ci)
	}
	ctx, stop := interruptible(c.Context)
	defer stop()
	res, err := tasks.RunTaskJob(ctx, record.TaskJob{TaskRun: record.TaskRun{Manifest: m, Path: name, Templates: templates,
		Template: "task", Role: taskdag.TaskRole, Step: "task", Test: agents.Test}, Task: task, Job: job,
		Lease: cmp.Or(c.Duration("lease"), defaultLease), CI: ci})
	if ci != nil {
		res.Pushes, res.Lost = ci.Pushes, ci.Lost
	}
	var noRun *record.NoRunError
	var notReady *record.NotReadyError
	switch {
	case errors.As(err, &noRun):
		return withHints(&refused{Err: err}, "a collector begins it: git crucible run --collect "+pushArg(c)+shellQuote(name))
	case errors.As(err, &notReady):
		return &refused{Err: err}
	case err != nil:
		return remoteError(s, err, c.String("push"))
	}
	if s.jsonOut() {
		if err := s.printJSON(res); err != nil {
			return err
		}
	}
	say := func(format string, args ...any) {
		if !s.jsonOut() {
			fmt.Fprintf(s.out(), "Task %s (level %d) of pipeline %s: "+format+"\n", append([]any{task, res.Level, id}, args...)...)
		}
	}
	switch res.Outcome {
	case record.JobRan:
		if res.Status == string(manifest.Failed) {
			s.error("task %s failed: %s", task, res.Reason)
			return &silentExit{Code: exitRefused}
		}
		say("ran as job %s, its work at %s (%s)", job, res.Ref, abbrev(res.Commit))
	case record.JobDone:
		say("job %s ran it already (%s); nothing to do", res.Holder, abbrev(res.Commit))
	case record.JobHeld:
		say("job %s holds it until %s; nothing to do", res.Holder, res.Until)
	case record.JobTaken:
		say("taken onto the branch already; nothing to do")
	case record.JobLost:
		say("job %s took it over when this job's lease ran out; this job's work is dropped", res.Holder)
	case record.JobFailed:
		s.error("task %s failed before: a job does not run it again", task)
		return &silentExit{Code: exitRefused}
	}
	return nil
}

// pushArg is "--push REMOTE " when --push is given.
func pushArg(c *cli.Context) string {
	if r := c.String("push"); r != "" {
		return "--push " + shellQuote(r) + " "
	}
	return ""
}

// collectJSON is run --collect --json's output.
type collectJSON struct {
	runResult
	Ready   bool     `json:"ready"`   // the next level's tasks wait for jobs, none running
	Level   int      `json:"level"`   // the level waited on, 0 when none is
	Waiting []string `json:"waiting"` // its tasks
	Pushes  int      `json:"pushes"`
}

// runCollect is run --collect: the level's finished tasks taken onto the
// branch, as a local run would commit them.
func runCollect(c *cli.Context, s *session, m *manifest.Manifest, name string, view *manifest.View) error {
	repo := s.svc.Repo
	agents, templates, err := taskRunAgents(c, s, m)
	if err != nil {
		return err
	}
	ci, err := ciRemote(c, s)
	if err != nil {
		return err
	}
	if ci != nil {
		if err := ci.HoldsBranch(c.Context); err != nil {
			return err
		}
		ci.Refs = []string{"refs/heads/" + ci.Branch}
	}
	approve := func() error {
		return taskdag.Approve(m, name, c.Bool("yes"), "approve them with: git crucible run --collect --yes "+name)
	}
	id, err := runPipeline(c, s, m, name, approve)
	if err != nil {
		return err
	}
	e, err := engine.Open(s.svc, id, agents, repo.WorkTree)
	if err != nil {
		return err
	}
	defer e.Close()
	tasks := e.TaskEngine()
	if ci != nil {
		tasks.UseCI(ci)
		if _, err := ci.Syncer.FetchRefs(c.Context, ci.Remote, record.TaskRefs(id)); err != nil {
			return err
		}
	}
	ctx, stop := interruptible(c.Context)
	defer stop()
	if _, err := e.RecoverLocal(ctx); err != nil {
		return err
	}
	res, err := tasks.RunTasks(ctx, record.TaskRun{Manifest: m, Path: name, MaxParallel: 1, Templates: templates,
		Template: "task", Role: taskdag.TaskRole, Step: "task", Test: agents.Test, Collect: true,
		Approve: approve, Progress: func(ev taskdag.Event) { printTaskEvent(s, ev) },
		Saw: func(m *manifest.Manifest) {
			if err := view.Write(m); err != nil {
				s.warn("%v", err)
			}
		}})
	if interrupted(ctx, c.Context) {
		return withHints(errors.New("interrupted"), "go on with: git crucible run --collect "+pushArg(c)+shellQuote(name))
	}
	if err != nil {
		return remoteError(s, err, c.String("push"))
	}
	if ci != nil && res.NotReady == nil {
		// The run's end is recorded (and pushed); its branch goes with it.
		if _, err := ci.Syncer.Push(ctx, ci.Remote, remote.Selection{IDs: []string{id}, Refs: ci.Refs}); err != nil {
			return remoteError(s, err, ci.Remote)
		}
	}
	ready := false
	if nr := res.NotReady; nr != nil {
		ready = true
		for _, t := range nr.Waiting {
			if m.Task(t).Status != manifest.Pending {
				ready = false
			}
		}
	}
	if s.jsonOut() {
		out := collectJSON{runResult: runJSON(id, res, m), Ready: ready, Waiting: []string{}}
		if ci != nil {
			out.Pushes = ci.Pushes
		}
		if nr := res.NotReady; nr != nil {
			out.Level, out.Waiting = nr.Level, nr.Waiting
		}
		if err := s.printJSON(out); err != nil {
			return err
		}
	}
	switch {
	case res.NotReady != nil && ready:
		if !s.jsonOut() {
			fmt.Fprintf(s.out(), "Task run of pipeline %s: level %d has %d task(s) ready for jobs: %s\n", id, res.NotReady.Level,
				len(res.NotReady.Waiting), joinIDs(res.NotReady.Waiting))
		}
	case res.NotReady != nil:
		if !s.jsonOut() {
			fmt.Fprintf(s.out(), "Task run of pipeline %s: level %d waits on jobs: %s\n", id, res.NotReady.Level, joinIDs(res.NotReady.Waiting))
		}
	case res.Budget != nil:
		s.error("task run stopped: %s", res.Reason)
		s.hint("%s", res.Budget.Suggestion())
		return &silentExit{Code: exitEscalated}
	case res.Critique != nil:
		s.error("task run stopped: %s", res.Reason)
		s.hint("the branch has not moved: the level's commits wait on %s", record.WorkRef(id))
		return &silentExit{Code: exitRefused}
	case res.Status == "escalated":
		s.error("task run escalated: %s", res.Reason)
		return &silentExit{Code: exitEscalated}
	case res.Status != "completed":
		s.error("task run failed: %s", res.Reason)
		return &silentExit{Code: exitRefused}
	case s.jsonOut():
	case res.Done:
		fmt.Fprintf(s.out(), "Task run of pipeline %s: already done, all %d tasks completed; nothing to run\n", id, len(m.Tasks))
	default:
		fmt.Fprintf(s.out(), "Task run of pipeline %s: %d tasks completed, the branch at %s\n", id, len(m.Tasks), res.Head)
	}
	return nil
}

func joinIDs(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += " "
		}
		out += id
	}
	return out
}
