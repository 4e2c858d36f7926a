package record

import (
	"context"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// provenance writes the provenance notes of a task run's commits, which
// the post-commit hook never sees: commit-tree makes them. A level's notes
// are written before its dag.level event is recorded, so a level the
// chain holds has them, and one it does not is run again (its commits
// noted or not never reach the branch); the notes' union makes a second
// write of a line a no-op.
type provenance struct {
	e      *Engine
	phase  int
	role   string
	number map[string]int   // task id -> its number, for Crucible-Task
	made   map[string][]int // the level's commits so far -> their tasks' numbers
}

// saw takes note of ev before it is recorded: a task's commit is kept; a
// level has its commits noted.
func (p *provenance) saw(ctx context.Context, ev taskdag.Event) error {
	switch {
	case ev.Task != "" && ev.Status == manifest.Committed && ev.CommitSHA != "":
		p.made[ev.CommitSHA] = append(p.made[ev.CommitSHA], p.number[ev.Task])
		return nil
	case ev.Task != "" || len(p.made) == 0:
		return nil
	}
	h, err := p.e.Service.Store.Head(ctx, p.e.ID)
	if err != nil {
		return err
	}
	var batch []notes.Lines
	for sha, tasks := range p.made {
		b := notes.Lines{Object: sha}
		for _, n := range tasks {
			line, err := enforce.ProvenanceLine(p.e.Service.Repo, p.e.ID, p.phase, enforce.Agent{Task: n, Role: p.role}, h.Commit)
			if err != nil {
				return err
			}
			b.Lines = append(b.Lines, line)
		}
		batch = append(batch, b)
	}
	clear(p.made)
	return notes.AppendEach(ctx, p.e.Service.Repo, notes.ProvenanceRef, batch)
}
