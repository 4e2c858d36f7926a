package gitext

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// defaultGCAuto is git's gc.auto when unset: about how many loose objects
// make git gc --auto pack them.
const defaultGCAuto = 6700

// AutoGC does what git's own commands do after they write objects: it runs
// `git gc --auto`, which packs loose objects when there are too many and,
// by default (gc.autoDetach), does so in the background. Unlike git's
// commands it starts no process while none is due: it takes git's own
// sample first, the loose objects in objects/17 (a 256th of them), against
// gc.auto. gc.auto=0 or maintenance.auto=false turn it off, as for git.
// It reads them into cfg the first time it needs them and from cfg after:
// a command appending again and again reads them once, as a git command
// reads its configuration once. It reports whether it ran git gc. A gc
// that fails is for git to report (in gc.log) at a later try, not a
// failure of the write before it. Call it only after writes that no git
// command of the user's follows: git commit, rebase, am and fetch run auto
// maintenance themselves, so a write from their hooks, or right after one
// of them, leaves it to them.
func (r *Repo) AutoGC(ctx context.Context, cfg *GCConfig) bool {
	if r.Private || os.Getenv("GIT_QUARANTINE_PATH") != "" {
		return false // a push's quarantine or a shadow store is not to be packed
	}
	loose := r.looseSample()
	if loose < 2 {
		return false // within any gc.auto's limit
	}
	if !cfg.read {
		cfg.limit, cfg.read = r.gcAuto(ctx), true
	}
	// git's rule (builtin/gc.c, too_many_loose_objects).
	if limit := cfg.limit; limit <= 0 || loose <= (limit+255)/256 {
		return false
	}
	cmd := exec.CommandContext(ctx, "git", "gc", "--auto", "--quiet")
	cmd.Dir = r.top()
	cmd.Env = Env(r)
	_ = cmd.Run() // returns once git has detached, or finished when told not to detach
	return true
}

// GCConfig is what AutoGC read of git's configuration; the zero value has
// read nothing yet.
type GCConfig struct {
	read  bool
	limit int // gc.auto as git gc --auto takes it: 0 or less is off
}

// gcAuto is gc.auto, 0 when it or maintenance.auto turns git gc --auto
// off: read in process when it can be, else from git.
func (r *Repo) gcAuto(ctx context.Context) int {
	on, limit, ok := r.gcConfigInProcess()
	if !ok {
		on, limit, ok = r.gcConfigFromGit(ctx)
	}
	if !ok || !on {
		return 0
	}
	return int(limit)
}

// looseSample counts the loose objects in objects/17.
func (r *Repo) looseSample() int {
	entries, err := os.ReadDir(filepath.Join(r.ObjectDir(), "17"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if len(name) == 2*r.HashLen()-2 && strings.Trim(name, "0123456789abcdef") == "" {
			n++
		}
	}
	return n
}

// PruneNow collects garbage now, removing every unreachable object
// whatever its age (git gc --prune=now).
func (r *Repo) PruneNow(ctx context.Context) error {
	_, err := run(ctx, r, nil, "gc", "-q", "--prune=now")
	return err
}
