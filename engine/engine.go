// Package engine is the engine of `git crucible build`: it dispatches a
// pipeline's agents durably and records how far its walk got, so that an
// engine killed anywhere resumes without losing a dispatch or running a
// finished one twice.
//
// # Durability
//
// A dispatch is recorded before its agent starts (dispatch.start, the
// prompt kept in the chain), and settled after it ends (dispatch.finish,
// the report or stdout kept). In between, its run directory under the
// common git dir (RunDir) holds what a successor needs: the prompt, the
// report path, the agent's owner record (pid, start time, boot, deadline)
// written as soon as it runs, and its exit record written when it ends.
// The agent runs in its own process group, so it outlives a killed engine.
// Recover, run first on every resume, settles each dispatch started and
// not finished without running it again whenever it can: it waits for an
// agent still running, adopts a report or exit record left behind, and
// only when nothing is left finishes it as interrupted, for the walk to
// dispatch the step again (a new seq, retry_of the old one). A finished
// dispatch is never run again.
//
// One engine works on a pipeline at a time: Open takes the pipeline's
// engine lock (an flock, which dies with its holder) and a second Open is
// refused with the holder's pid.
//
// # Progress
//
// When a step of the walk ends, the walker records it (RecordStep: a step
// event with its point and status); ProgressOf derives from a chain's
// events and a spec the first point not done, and what was dispatched
// there already.
//
// # Replays
//
// The walk stands on the chain's live run (pipeline.Live): a replay event
// (git crucible replay) replaces the steps, handoffs and dispatches of its
// phase and the later ones, so the walk runs them again, each new dispatch
// naming the one it replays (replay_of) and the replay's session.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Engine runs one pipeline's dispatches. Open returns one holding the
// pipeline's engine lock; Close releases it.
type Engine struct {
	Service *pipeline.Service
	ID      string        // the pipeline
	Agents  *agent.Config // who plays each role
	Runner  agent.Runner  // Started is the engine's own
	Workdir string        // CRUCIBLE_WORKDIR: the work tree agents edit
	// Budget, when set, caps what the pipeline's dispatches may cost:
	// Dispatch starts none once the recorded cost has reached it.
	Budget *Budget
	unlock func()
	// hooks are the repository's hooks as the last dispatch left them.
	hooks atomic.Pointer[hookSet]
	// chain serializes Dispatch's records: the tasks of a parallel level
	// dispatch from several goroutines, and the Service is for one.
	chain sync.Mutex
}

// BusyError is a pipeline, or its branch, another engine is working on.
type BusyError struct {
	ID    string
	Owner int // its pid, 0 when unknown
	// Branch and Other: another pipeline's engine works on the branch.
	Branch, Other string
}

func (e *BusyError) Error() string {
	if e.Other != "" {
		return fmt.Sprintf("branch '%s' is being built by another git-crucible (pid %d, pipeline %s): one engine works on a branch at a time", e.Branch, e.Owner, e.Other)
	}
	if e.Owner == 0 {
		return fmt.Sprintf("pipeline %s is being built by another git-crucible", e.ID)
	}
	return fmt.Sprintf("pipeline %s is being built by another git-crucible (pid %d)", e.ID, e.Owner)
}

// Open takes pipeline id's engine lock, and that of the branch checked
// out (one engine per branch: two pipelines' agents must not share a work
// tree), and returns its engine. Another engine holding either is a
// *BusyError.
func Open(svc *pipeline.Service, id string, agents *agent.Config, workdir string) (*Engine, error) {
	e := &Engine{Service: svc, ID: id, Agents: agents, Workdir: workdir}
	unlock, err := fsutil.TryLock(e.lockPath(), []byte(gitext.Owner()))
	var held *fsutil.HeldError
	if errors.As(err, &held) {
		pid, _ := gitext.OwnerGone(held.Owner)
		return nil, &BusyError{ID: id, Owner: pid}
	}
	if err != nil {
		return nil, err
	}
	e.unlock = unlock
	if branch, err := svc.Repo.HeadBranch(); err != nil {
		e.Close()
		return nil, err
	} else if branch != "" {
		lock := pipeline.BranchLock(svc.Repo, branch)
		unlockBranch, err := fsutil.TryLock(lock, []byte(gitext.Owner()+pipeline.BranchLockPipeline+id+"\n"))
		if errors.As(err, &held) {
			e.Close()
			pid, _ := gitext.OwnerGone(held.Owner)
			_, other, _ := strings.Cut(held.Owner, pipeline.BranchLockPipeline)
			return nil, &BusyError{ID: id, Owner: pid, Branch: branch, Other: strings.TrimSpace(other)}
		}
		if err != nil {
			e.Close()
			return nil, err
		}
		e.unlock = func() {
			os.Truncate(lock, 0)
			unlockBranch()
			unlock()
		}
	}
	// Held, the pipeline changes only by this engine's appends, unless
	// someone goes around the lock: each append checks.
	if err := svc.Guard(id); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Running returns the pid of the engine that holds pipeline id's lock,
// 0 when none is known to run (pipeline.HolderOf).
func Running(svc *pipeline.Service, id string) int {
	if h := pipeline.HolderOf(svc.Repo, id); h != nil {
		return h.Pid
	}
	return 0
}

// lockPath is the engine lock's file.
func (e *Engine) lockPath() string { return pipeline.EngineLock(e.Service.Repo, e.ID) }

// Close releases the engine lock.
func (e *Engine) Close() {
	if e.unlock != nil {
		// Its owner record goes first, while it is held: Running must
		// not take a process that lives on for an engine.
		os.Truncate(e.lockPath(), 0)
		e.unlock()
		e.unlock = nil
		e.Service.Unguard(e.ID)
	}
}

// runs is the directory of the pipeline's run directories and lock.
func (e *Engine) runs() string {
	return pipeline.RunsDir(e.Service.Repo, e.ID)
}

// RunDir is where dispatch seq keeps what a successor engine needs while
// it runs: removed once its finish is recorded.
func (e *Engine) RunDir(seq int) string { return filepath.Join(e.runs(), strconv.Itoa(seq)) }

// events returns the pipeline's chain, oldest first.
func (e *Engine) events(ctx context.Context) ([]pipeline.Event, error) {
	return e.Service.ChainEvents(ctx, e.ID)
}

// Dispatches returns the pipeline's dispatches, in seq order.
func (e *Engine) Dispatches(ctx context.Context) ([]pipeline.Record, error) {
	events, err := e.events(ctx)
	if err != nil {
		return nil, err
	}
	return pipeline.Records(events)
}
