package engine

import (
	"context"
	"fmt"

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
