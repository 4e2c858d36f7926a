package taskdag

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// Commit is the commit a task's work became at the fan-in: its unit's.
// SHA is "" for a task whose unit changed nothing (an explore task): the
// seed marks it committed all the same.
type Commit struct {
	Task string
	SHA  string
}

// Unit is a commit unit of a level: the passed tasks that share one
// commit, in topological order, each with the paths attributed to it.
type Unit struct {
	Results []Result
	Paths   [][]string // Paths[i]: the changed paths Results[i]'s tree gives the commit
}

// Tasks are the ids of the unit's tasks.
func (u Unit) Tasks() []string {
	ids := make([]string, len(u.Results))
	for i, r := range u.Results {
		ids[i] = r.ID
	}
	return ids
}

// empty says whether the unit has no path to commit.
func (u Unit) empty() bool {
	for _, p := range u.Paths {
		if len(p) > 0 {
			return false
		}
	}
	return true
}

// The commit strategies of the manifest's commits.strategy.
const (
	PerTask = "per-task" // a commit per task (the default)
	Grouped = "grouped"  // tasks sharing a commit-group share a commit; the others have their own
	Single  = "single"   // one commit for the level
)

// Units groups a level's passed results (in topological order) into
// commit units by strategy, group giving a task's commit-group (nil: none
// has one), and
// attributes each changed path to the last task in that order that
// changed it, as the seed's shared file attribution: earlier tasks'
// commits skip it. A unit comes where its first task does.
func Units(strategy string, group func(id string) string, results []Result) []Unit {
	var units []Unit
	at := map[string]int{} // commit group -> its unit
	for _, r := range results {
		if !r.Passed {
			continue
		}
		key := ""
		switch strategy {
		case Single:
			key = "\x00level"
		case Grouped:
			if group != nil {
				key = group(r.ID)
			}
		}
		i, ok := at[key]
		if key == "" || !ok {
			i = len(units)
			units = append(units, Unit{})
			if key != "" {
				at[key] = i
			}
		}
		units[i].Results = append(units[i].Results, r)
	}
	last := map[string]string{} // path -> the last task that changed it
	for _, r := range results {
		if r.Passed {
			for _, p := range r.Changed {
				last[p] = r.ID
			}
		}
	}
	for i := range units {
		u := &units[i]
		u.Paths = make([][]string, len(u.Results))
		for j, r := range u.Results {
			for _, p := range r.Changed {
				if last[p] == r.ID {
					u.Paths[j] = append(u.Paths[j], p)
				}
			}
		}
	}
	return units
}

// Group is the commit group function of a manifest, for Units.
func Group(m *manifest.Manifest) func(string) string {
	return func(id string) string {
		if t := m.Task(id); t != nil {
			return t.CommitGroup
		}
		return ""
	}
}

// CommitLevel makes a level's commits: each unit, in the order given, on
// top of the one before, starting at head. A unit's commit is head's tree
// with each of its tasks' attributed paths as that task's tree has them. A
// unit with no path makes no commit: its tasks get "". message gives each
// unit's message, trailers included. Only objects are written, in
// process: the caller moves the branch (and records head as the level's
// boundary) once all are made. It returns each task's commit, in the
// units' order.
func (r *Runner) CommitLevel(ctx context.Context, head string, units []Unit, message func(Unit) string) ([]Commit, string, error) {
	writer := r.Repo.NewCommitWriter()
	var commits []Commit
	for _, u := range units {
		sha := ""
		if !u.empty() {
			tree, err := r.overlay(ctx, head, u)
			if err != nil {
				return nil, "", err
			}
			if head, err = writer.Write(ctx, tree, []string{head}, message(u)); err != nil {
				return nil, "", err
			}
			sha = head
		}
		for _, r := range u.Results {
			commits = append(commits, Commit{Task: r.ID, SHA: sha})
		}
	}
	return commits, head, nil
}

// overlay is treeish's tree with each of u's tasks' paths as its tree has
// them: a path its tree has no file at, it deleted.
func (r *Runner) overlay(ctx context.Context, treeish string, u Unit) (string, error) {
	var edits []gitext.TreeEdit
	for i, res := range u.Results {
		var gone []gitext.TreeEdit
		for _, p := range u.Paths[i] {
			e, ok, err := r.objects.Entry(ctx, res.Tree, p)
			if err != nil {
				return "", err
			}
			if ok && !e.IsTree() {
				edits = append(edits, gitext.TreeEdit{Path: p, Entry: e})
			} else {
				gone = append(gone, gitext.TreeEdit{Path: p})
			}
		}
		// After its files, as update-index took them from its listing.
		edits = append(edits, gone...)
	}
	return r.objects.EditTree(ctx, treeish, edits)
}

// CommitSubject is the subject of the commit of the task with title and
// id, the serial walk's and the task run's alike.
func CommitSubject(title, id string) string {
	return fmt.Sprintf("%s (task %s)", title, id)
}
