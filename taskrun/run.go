package taskrun

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/dag"
)

// Event is a change the run made to its manifest's state: a task's
// status (with its commit, or why it failed), or a level's boundary. The
// caller records each, in order, before the run goes on: they are what a
// resume starts from.
type Event struct {
	Task      string
	Status    dag.TaskStatus
	CommitSHA string
	Reason    string
	Level     int
	Boundary  string // with Task "": the commit before the level's first commit
}

// Plan is what a run needs besides its runner.
type Plan struct {
	Manifest *dag.Manifest
	Head     string              // the commit the run builds on
	Outputs  map[string][]byte   // reports of tasks already run, by id: filled as tasks finish
	Record   func(Event) error   // records an event, and applies it to Manifest
	Message  func(Result) string // a task's commit message, trailers included
}

// Run takes the manifest's tasks level by level from their statuses:
// the ready tasks of the lowest level run at once (RunLevel), the passed
// ones are committed on Head (CommitLevel), and the next level starts from
// there. It returns the new head. Without critique (next to come), a
// committed task is completed. A task a killed run left dispatched runs
// again; one it left committed is completed when its commit is in Head's
// history, else runs again. Tasks left no way to run are a *dag.Deadlock.
func (r *Runner) Run(ctx context.Context, p Plan) (string, error) {
	m := p.Manifest
	if err := r.settle(ctx, p); err != nil {
		return "", err
	}
	head := p.Head
	for {
		ready := m.Ready()
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
		for _, id := range ready {
			if m.Level(id) != level {
				continue
			}
			t := m.Task(id)
			job := Job{Task: *t}
			for _, up := range t.Receives {
				job.Upstream = append(job.Upstream, Upstream{ID: up, Output: p.Outputs[up]})
			}
			jobs = append(jobs, job)
			if err := p.Record(Event{Task: id, Status: dag.Dispatched, Level: level}); err != nil {
				return head, err
			}
		}
		results, err := r.RunLevel(ctx, head, jobs)
		if err != nil {
			return head, err
		}
		for _, res := range results {
			if res.Report != nil {
				p.Outputs[res.ID] = res.Report
			}
			if !res.Passed {
				if err := p.Record(Event{Task: res.ID, Status: dag.Failed, Reason: res.Reason, Level: level}); err != nil {
					return head, err
				}
			}
		}
		commits, next, err := CommitLevel(ctx, r.Repo, head, results, p.Message)
		if err != nil {
			return head, err
		}
		if len(commits) > 0 {
			if err := p.Record(Event{Level: level, Boundary: head}); err != nil {
				return head, err
			}
		}
		for _, c := range commits {
			for _, st := range []dag.TaskStatus{dag.Committed, dag.Completed} {
				if err := p.Record(Event{Task: c.Task, Status: st, CommitSHA: c.SHA, Level: level}); err != nil {
					return head, err
				}
			}
		}
		head = next
	}
}

// settle turns what a killed run left into statuses Run can go on from.
func (r *Runner) settle(ctx context.Context, p Plan) error {
	for _, t := range p.Manifest.Tasks {
		switch t.Status {
		case dag.Dispatched:
			if err := p.Record(Event{Task: t.ID, Status: dag.Pending}); err != nil {
				return err
			}
		case dag.Committed:
			st, sha := dag.Completed, t.CommitSHA
			if sha != "" {
				// An unknown commit is an error here too: either way it is not in Head.
				if in, err := r.Repo.IsAncestor(ctx, sha, p.Head); err != nil || !in {
					st, sha = dag.Pending, ""
				}
			}
			if err := p.Record(Event{Task: t.ID, Status: st, CommitSHA: sha}); err != nil {
				return err
			}
		case dag.Fixing:
			return fmt.Errorf("task %s is fixing (%s): amendment rounds are not implemented yet", t.ID, t.FixingSource)
		}
	}
	return nil
}
