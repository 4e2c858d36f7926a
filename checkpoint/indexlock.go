package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// resetLocks are the lock files git reset takes to move branch: those of
// HEAD and the branch (update-ref HEAD), the index (reset), ORIG_HEAD.
func (s *Shadow) resetLocks(branch string) (head, index, origHead []string) {
	head = []string{filepath.Join(s.main.GitDir, "HEAD.lock")}
	if branch != "" {
		head = append(head, filepath.Join(s.main.CommonDir, "refs", "heads", filepath.FromSlash(branch)+".lock"))
	}
	return head, []string{filepath.Join(s.main.GitDir, "index.lock")}, []string{filepath.Join(s.main.GitDir, "ORIG_HEAD.lock")}
}

// underResetLocks runs one git command of the reset, which takes locks,
// with a record of this process as their owner, removed as soon as it
// returns: a restore killed between commands leaves no record, and a
// killed one's record names only the locks its command was taking, so a
// later lock of another git is never reported as the restore's.
func (s *Shadow) underResetLocks(branch string, locks []string, run func() error) error {
	if b, err := os.ReadFile(s.resetOwner()); err == nil {
		owner, named, _ := strings.Cut(string(b), "\n")
		if pid, gone := gitext.OwnerGone(owner + "\n"); gone {
			held := slices.DeleteFunc(strings.Split(named, "\n"), func(l string) bool { return l == "" })
			if len(held) == 0 { // a record that names none: any reset lock
				held = slices.Concat(s.resetLocks(branch))
			}
			for _, l := range held {
				if _, err := os.Lstat(l); err == nil {
					return &KilledRestoreError{Lock: l, PID: pid}
				}
			}
		}
	}
	if err := os.WriteFile(s.resetOwner(), []byte(gitext.Owner()+strings.Join(locks, "\n")), 0o644); err != nil {
		return err
	}
	defer os.Remove(s.resetOwner())
	return run()
}
