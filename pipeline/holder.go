package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// EngineLock is the file whose flock an engine (build, replay, run,
// verify-commits --fix) holds while it works on pipeline id, with an owner
// record naming it (gitext.Owner): while it does, it is the pipeline's
// only writer.
func EngineLock(r *gitext.Repo, id string) string {
	return filepath.Join(RunsDir(r, id), "engine-lock")
}

// RunsDir is where the engines of pipeline id keep their run directories
// and lock.
func RunsDir(r *gitext.Repo, id string) string { return filepath.Join(r.CrucibleDir(), "runs", id) }

// BranchLock is the lock an engine holds on the branch it works on, its
// owner record followed by BranchLockPipeline and the pipeline's id.
func BranchLock(r *gitext.Repo, branch string) string {
	sum := sha256.Sum256([]byte(branch))
	return filepath.Join(r.CrucibleDir(), "runs", ".branches", hex.EncodeToString(sum[:8]))
}

// BranchHolder returns the live engine holding the lock of branch (its
// short name), or nil, as HolderOf does for a pipeline.
func BranchHolder(r *gitext.Repo, branch string) *Holder { return holderIn(BranchLock(r, branch)) }

// BranchLockPipeline starts the line of a branch lock naming its pipeline.
const BranchLockPipeline = "pipeline "

// Holder is the engine process holding a pipeline.
type Holder struct {
	Pid     int
	Command string // how it was started, as far as it can be told: "git-crucible build"
}

func (h Holder) String() string {
	if h.Command == "" {
		return fmt.Sprintf("an engine (pid %d)", h.Pid)
	}
	return fmt.Sprintf("'%s' (pid %d)", h.Command, h.Pid)
}

// HolderOf returns the live engine holding pipeline id, or nil. It reads
// the lock's owner record without taking the lock: a probe that took it
// would turn away an engine starting meanwhile. A record a killed engine
// left names a process gone, and an engine that stopped empties it.
func HolderOf(r *gitext.Repo, id string) *Holder { return holderIn(EngineLock(r, id)) }

// holderIn is the live engine whose owner record lock holds, or nil.
func holderIn(lock string) *Holder {
	b, err := os.ReadFile(lock)
	if err != nil {
		return nil
	}
	pid, gone := gitext.OwnerGone(string(b))
	if pid == 0 || gone {
		return nil
	}
	return &Holder{Pid: pid, Command: commandOf(pid)}
}

// commandOf is the program and subcommand process pid runs, from
// /proc/PID/cmdline, or "" where that cannot be read.
func commandOf(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	args[0] = filepath.Base(args[0])
	if len(args) > 2 {
		args = args[:2]
	}
	return strings.Join(args, " ")
}

// HeldError refuses an append to a pipeline another process's engine
// holds: while an engine runs, it alone records its pipeline — an agent
// it dispatched, having a shell, must not pass its own gate.
type HeldError struct {
	ID     string
	Holder Holder
	Types  []string // what was refused
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("pipeline %s is held by %s: while its engine runs, no other process records %s", e.ID, e.Holder, strings.Join(e.Types, ", "))
}

// Hint says what to do instead.
func (e *HeldError) Hint() string {
	return fmt.Sprintf("wait for it to stop, or stop it (kill %d) and resume it: its gates are its own to pass", e.Holder.Pid)
}

// mayAppend refuses drafts for pipeline id while another process's engine
// holds it; a hook's service (Service.Hook) may record dispatches, which
// move no gate, and they are marked as the hook's.
func (s *Service) mayAppend(id string, drafts []Draft) error {
	if _, engine := s.guard[id]; engine {
		return nil
	}
	h := HolderOf(s.Repo, id)
	if h == nil || h.Pid == os.Getpid() {
		return nil
	}
	var refused []string
	for _, d := range drafts {
		if !s.Hook || d.Type != TypeDispatchStart && d.Type != TypeDispatchFinish {
			refused = append(refused, d.Type)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return &HeldError{ID: id, Holder: *h, Types: refused}
}

// recordedBy is what a dispatch this service starts is marked recorded by.
func (s *Service) recordedBy() string {
	if s.Hook {
		return "hook"
	}
	return ""
}
