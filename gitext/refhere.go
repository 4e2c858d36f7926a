package gitext

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// With Repo.RefsHere, a ref git keeps as a loose file, in a repository
// where git's update-ref would only lock it, compare it, log the move and
// rename the new value in, is moved by those same steps here, under git's
// lock protocol: a hook's provenance note then starts no git process,
// which was a third of what the note cost a commit. Anything else is left
// to git (UpdateRefs): a new, packed or symbolic ref, a ref of one
// worktree, reftable storage, a reference-transaction hook to run,
// configuration that changes how git writes refs (fsync, shared
// permissions, another hooks directory, an include that might say so), a
// push's quarantine, an object not stored loose (git checks it exists), a
// repository keeping no reflogs of ours. Git, in its own process group,
// rolls its lock back when ours is killed; here a kill between lock and
// rename leaves our owner record, which our next writer clears (the hooks
// ignore ^C, hang-ups and SIGTERM while they write, so only a kill -9 can).

// MovableHere reports whether MoveRef may move name without git as things
// stand; MoveRef checks again under the ref's lock.
func (r *Repo) MovableHere(name string) bool {
	if !r.RefsHere || r.NoReflogs || !validRefName(name) || perWorktree(name) || r.checkRef(name) != nil {
		return false
	}
	if r.refsHere == 0 {
		r.refsHere = -1
		if r.refsHereAllowed() {
			r.refsHere = 1
		}
	}
	v, err := r.readLoose(name)
	return r.refsHere == 1 && err == nil && r.ValidOID(v)
}

// refsHereAllowed reports whether nothing in the repository or the
// environment asks git to do more than lock, compare, log and rename.
// RefsHere is for short-lived processes: it is asked once.
func (r *Repo) refsHereAllowed() bool {
	if os.Getenv("GIT_QUARANTINE_PATH") != "" {
		return false
	}
	if _, err := os.Stat(filepath.Join(r.CommonDir, "hooks", "reference-transaction")); err == nil {
		return false
	}
	return !r.ConfigMayMention("fsync", "sharedrepository", "hookspath")
}

// MoveRef moves one existing ref from u.Old to u.New, a compare-and-swap,
// in process when MovableHere allows it (its reflog entry signed by sig,
// a Signature), else in a git transaction. A ref not at u.Old is an error
// wrapping ErrRefChanged.
func (r *Repo) MoveRef(ctx context.Context, reason, sig string, u RefUpdate) error {
	if u.Old == "" || u.New == "" || !r.MovableHere(u.Name) || !r.ValidOID(u.New) || !r.storedLoose(u.New) {
		return r.UpdateRefs(ctx, reason, u)
	}
	moved, err := r.moveLoose(reason, sig, u)
	if moved || err != nil {
		return err
	}
	return r.UpdateRefs(ctx, reason, u)
}

// moveLoose is MoveRef's own path, false when the ref turns out not to be
// loose any more (a git pack-refs took it meanwhile): git must move it.
func (r *Repo) moveLoose(reason, sig string, u RefUpdate) (bool, error) {
	lock, err := takeLock(r.refPath(u.Name), LockWait)
	if err != nil {
		return false, err
	}
	cur, err := r.readLoose(u.Name)
	switch {
	case err != nil:
	case !r.ValidOID(cur):
		lock.rollback()
		return false, nil
	case cur != u.Old:
		err = fmt.Errorf("cannot lock ref '%s': is at %s but expected %s: %w", u.Name, cur, u.Old, ErrRefChanged)
	default:
		// The reflog first, as git writes it: a move is never left unlogged.
		err = r.appendReflog(u, sig, reason)
	}
	if err != nil {
		lock.rollback()
		return false, err
	}
	return true, lock.commit(u.New + "\n")
}

// appendReflog adds git's line for the move to u.Name's reflog, creating
// it as update-ref --create-reflog does.
func (r *Repo) appendReflog(u RefUpdate, sig, reason string) error {
	path := filepath.Join(r.CommonDir, "logs", filepath.FromSlash(u.Name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %s %s\t%s\n", u.Old, u.New, sig, strings.Join(strings.Fields(reason), " "))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// storedLoose reports whether object oid is a loose object of r.
func (r *Repo) storedLoose(oid string) bool {
	_, err := os.Stat(filepath.Join(r.ObjectDir(), oid[:2], oid[2:]))
	return err == nil
}

// perWorktree reports whether name is one of the refs each worktree keeps
// for itself, under its own git dir.
func perWorktree(name string) bool {
	for _, p := range []string{"refs/bisect/", "refs/worktree/", "refs/rewritten/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
