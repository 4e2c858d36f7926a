package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-crucible/git-crucible/gitext"
)

// A restore moves the branch back with git reset, which locks the main
// repository's index, HEAD, ORIG_HEAD and the branch. If git-crucible and
// its git are killed meanwhile, a lock may stay, and every later restore
// would meet git's generic "File exists". Beside them we record who ran
// the reset (gitext.Owner), so that a lock left by a killed restore is
// named as such, with how to clear it. The locks are git's: they are never
// removed here.

// KilledRestoreError: a lock was left by a restore that is no longer running.
type KilledRestoreError struct {
	Lock string
	PID  int
}

func (e *KilledRestoreError) Error() string {
	return fmt.Sprintf("unable to lock '%s': it was left by a checkpoint restore that was killed (git-crucible pid %d)", e.Lock, e.PID)
}

// Hint says how to clear it.
func (e *KilledRestoreError) Hint() string {
	return "if no git process is running, remove it and restore again: rm '" + e.Lock + "'"
}

// resetOwner is the record of the restore running git reset, per worktree
// as the index and HEAD are.
func (s *Shadow) resetOwner() string { return filepath.Join(s.main.GitDir, "crucible-reset.owner") }

// resetLocks are the lock files git reset takes to move branch.
func (s *Shadow) resetLocks(branch string) []string {
	locks := []string{
		filepath.Join(s.main.GitDir, "index.lock"),
		filepath.Join(s.main.GitDir, "HEAD.lock"),
		filepath.Join(s.main.GitDir, "ORIG_HEAD.lock"),
	}
	if branch != "" {
		locks = append(locks, filepath.Join(s.main.CommonDir, "refs", "heads", filepath.FromSlash(branch)+".lock"))
	}
	return locks
}

// claimResetLocks checks for a lock a killed restore left and records this
// process as the one about to take them.
func (s *Shadow) claimResetLocks(branch string) error {
	if b, err := os.ReadFile(s.resetOwner()); err == nil {
		if pid, gone := gitext.OwnerGone(string(b)); gone {
			for _, l := range s.resetLocks(branch) {
				if _, err := os.Lstat(l); err == nil {
					return &KilledRestoreError{Lock: l, PID: pid}
				}
			}
		}
	}
	return os.WriteFile(s.resetOwner(), []byte(gitext.Owner()), 0o644)
}

func (s *Shadow) releaseResetLocks() { os.Remove(s.resetOwner()) }
