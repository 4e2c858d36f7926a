package engine

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/replay"
)

// Replay is a replay about to begin: where it resumes (replay.Detect's
// Resume of Source, whose chain's state is State), under which spec, and
// what it changes of the templates.
type Replay struct {
	Source *replay.Source
	State  *pipeline.State
	Resume *replay.Resume
	Spec   *pipespec.Spec
	// Mutations are the templates --mutate replaces, TemplateRef the commit
	// --template-ref reads them from, Swapped their new texts.
	Mutations   []string
	TemplateRef string
	Swapped     map[string][]byte
	// CurrentTree resumes on the work tree as it is; otherwise Restore puts
	// the boundary's checkpoint back (it may ask the user) and returns its id.
	CurrentTree bool
	Restore     func(ctx context.Context) (string, error)
}

// ReplayBegun is a replay's record: its session, the checkpoint it
// restored (none on the current tree), the dispatches left in flight it
// settled as interrupted, and the compression state its walk starts from.
type ReplayBegun struct {
	Session    string
	Checkpoint string
	Settled    []int
	State      []byte
}

// BeginReplay records rp's beginning, once the crashed run's dispatches
// are settled (Recover): the user's files taken aside and the boundary
// restored (unless on the current tree), the dispatches still in flight
// settled, then the replay event with its compression state. The walk
// (Walk) runs it next.
func (e *Engine) BeginReplay(ctx context.Context, rp Replay) (ReplayBegun, error) {
	src, r := rp.Source, rp.Resume
	d := pipeline.ReplayData{Session: fmt.Sprintf("replay-%d", src.Replays+1), From: r.Phase, Mutations: rp.Mutations, TemplateRef: rp.TemplateRef}
	var err error
	if d.Head, err = e.Service.Repo.HeadCommit(); err != nil {
		return ReplayBegun{}, err
	}
	if !rp.CurrentTree {
		// The files there are the user's: the restore's are the engine's.
		if err := e.TakeUserFiles(ctx); err != nil {
			return ReplayBegun{}, err
		}
		if d.Checkpoint, err = rp.Restore(ctx); err != nil {
			return ReplayBegun{}, err
		}
	}
	begun := ReplayBegun{Session: d.Session, Checkpoint: d.Checkpoint}
	if begun.Settled, err = replay.Settle(ctx, e.Service, e.ID, d.Session); err != nil {
		return ReplayBegun{}, err
	}
	begun.State = replay.CompressionState(rp.State, src, r, rp.Spec)
	if err := replay.Begin(ctx, e.Service, src, rp.Spec, d, begun.State, rp.Swapped); err != nil {
		return ReplayBegun{}, err
	}
	return begun, nil
}

// OpenReplay opens pipeline id's engine for a replay from f once
// replay.CheckBegin lets it begin on HEAD's branch (current: on the work
// tree as it is), then settles what the crashed run left: an agent of it
// still running ends, or is ended, before the tree is restored under it.
// What it settled is recorded whatever the answer to the restore, so it is
// returned to be said before BeginReplay asks.
func OpenReplay(ctx context.Context, svc *pipeline.Service, id string, agents *agent.Config, f *replay.Found, current bool) (*Engine, []Recovered, error) {
	branch, _ := svc.Repo.HeadBranch()
	if err := replay.CheckBegin(f.Source, f.State, f.Resume, branch, current); err != nil {
		return nil, nil, err
	}
	e, err := Open(svc, id, agents, svc.Repo.WorkTree)
	if err != nil {
		return nil, nil, err
	}
	recovered, err := e.Recover(ctx)
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return e, recovered, nil
}
