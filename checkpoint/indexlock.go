package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A restore moves the branch back with git reset, which locks the main
// repository's index. If git-crucible is killed meanwhile, index.lock may
// stay, and every later restore would meet git's generic "File exists".
// Beside the lock we record who ran the reset (pid and boot id), so that a
// lock left by a killed restore is named as such, with how to clear it. The
// lock itself is git's: it is never removed here.

// KilledRestoreError: index.lock was left by a restore that is no longer running.
type KilledRestoreError struct {
	Lock string
	PID  int
}

func (e *KilledRestoreError) Error() string {
	return fmt.Sprintf("unable to lock the index: '%s' was left by a checkpoint restore that was killed (git-crucible pid %d)", e.Lock, e.PID)
}

// Hint says how to clear it.
func (e *KilledRestoreError) Hint() string {
	return "if no git process is running, remove it and restore again: rm '" + e.Lock + "'"
}

func (s *Shadow) indexLock() string { return filepath.Join(s.main.GitDir, "index.lock") }

func (s *Shadow) indexLockOwner() string { return s.indexLock() + ".crucible-owner" }

// claimIndexLock checks for a lock a killed restore left and records this
// process as the one about to take it.
func (s *Shadow) claimIndexLock() error {
	if _, err := os.Lstat(s.indexLock()); err == nil {
		if pid, dead := deadOwner(s.indexLockOwner()); dead {
			return &KilledRestoreError{Lock: s.indexLock(), PID: pid}
		}
	}
	return os.WriteFile(s.indexLockOwner(), []byte(fmt.Sprintf("pid %d boot %s\n", os.Getpid(), bootID())), 0o644)
}

func (s *Shadow) releaseIndexLock() { os.Remove(s.indexLockOwner()) }

// deadOwner reads an owner record: dead when its process is of an earlier
// boot, or of this one and no longer runs.
func deadOwner(path string) (pid int, dead bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var boot string
	if n, _ := fmt.Sscanf(string(b), "pid %d boot %s\n", &pid, &boot); n != 2 || pid <= 0 {
		return 0, false
	}
	if boot != bootID() {
		return pid, boot != "unknown"
	}
	err = syscall.Kill(pid, 0)
	return pid, err != nil && !errors.Is(err, syscall.EPERM)
}

// bootID tells this boot from the last, so that a pid recorded before a
// reboot is not taken for a live process now.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
