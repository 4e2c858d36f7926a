package gitext

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A lock file of ours is "<path>.lock", created exclusively as git creates
// its own, and removed once the new content is renamed over <path> (from
// a dot file, which git never takes for a ref). It holds an owner record —
// our pid and the boot id — from start to end, so that a lock left by a
// killed git-crucible is cleared by the next writer instead of stalling
// every later one until a person removes it. The record is inside the
// lock, not beside it: a file beside a ref's lock would itself be a ref to
// git. A lock without our record (git's, or one cut short) is never broken.

type lockFile struct {
	f    *os.File
	path string // the file the lock guards
}

// ownerPrefix starts an owner record; git writes a ref's content into its
// locks, which never starts so.
const ownerPrefix = "git-crucible lock owner: "

// takeLock takes path's lock, waiting up to wait for another holder and
// clearing a lock whose recorded owner has died.
func takeLock(path string, wait time.Duration) (*lockFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the directory for %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	delay := time.Millisecond
	for {
		f, err := createLock(path + ".lock")
		if err == nil {
			return &lockFile{f: f, path: path}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		if clearDeadOwner(path + ".lock") {
			continue
		}
		if time.Now().After(deadline) {
			return nil, &LockedError{Path: path + ".lock"}
		}
		time.Sleep(delay)
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// createLock creates lock holding our owner record from the instant it
// exists: the record is written to a dot file beside it, which is then
// linked as the lock (failing, as O_EXCL would, when the lock exists). A
// lock created empty and then written would leave, killed between the
// two, a lock with no owner, which no one could ever judge dead.
func createLock(lock string) (*os.File, error) {
	dir, base := filepath.Split(lock)
	tmp := newSibling(dir, base)
	if err := os.WriteFile(tmp, []byte(ownerRecord(os.Getpid())), 0o666); err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, lock); err != nil {
		return nil, err
	}
	return os.OpenFile(lock, os.O_RDWR, 0)
}

// siblings numbers the dot files of this process, so that two goroutines
// writing one ref (each waiting for the other's lock) never share one.
var siblings atomic.Uint64

// newSibling names a new dot file beside base in dir, ours alone.
func newSibling(dir, base string) string {
	return filepath.Join(dir, fmt.Sprintf(".%s.%d.%d.new", base, os.Getpid(), siblings.Add(1)))
}

// ownerRecord names process pid of this boot.
func ownerRecord(pid int) string {
	return fmt.Sprintf("%spid %d boot %s\n", ownerPrefix, pid, BootID())
}

// BootID tells this boot from the last, so that a pid recorded before a
// reboot is not taken for a live process now.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// Owner returns an owner record naming this process, for a lock of ours or
// a record kept beside one of git's.
func Owner() string { return ownerRecord(os.Getpid()) }

// OwnerGone reads an owner record: the pid it names, and whether that
// process is gone — of an earlier boot, or of this one and no longer
// running. Anything that is not a whole record is not known to be gone.
func OwnerGone(record string) (pid int, gone bool) {
	rec, ok := strings.CutPrefix(record, ownerPrefix)
	if !ok {
		return 0, false
	}
	var boot string
	if n, _ := fmt.Sscanf(rec, "pid %d boot %s\n", &pid, &boot); n != 2 || pid <= 0 || boot == "unknown" {
		return 0, false
	}
	return pid, boot != BootID() || !processAlive(pid)
}

// clearDeadOwner removes lock when it carries our owner record and that
// owner is gone. It reports whether it removed it.
func clearDeadOwner(lock string) bool {
	b, err := os.ReadFile(lock)
	if err != nil {
		return errors.Is(err, os.ErrNotExist) // released meanwhile: try again
	}
	if _, gone := OwnerGone(string(b)); !gone {
		return false
	}
	// Remove only the lock we judged: if another writer cleared it and
	// took a new one meanwhile, its record differs and it stays. (Two
	// clearers of one dead lock leave a window of two system calls.)
	if now, err := os.ReadFile(lock); err != nil || string(now) != string(b) {
		return err != nil && errors.Is(err, os.ErrNotExist)
	}
	return os.Remove(lock) == nil
}

// processAlive reports whether pid runs (or may: a process of another
// user answers EPERM).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// commit puts content in the file the lock guards and releases the lock.
// The content goes to a dot file beside it (git takes no dot file for a
// ref), renamed over the file, and only then does the lock go: a kill at
// any point leaves the lock holding our owner record, which the next
// writer clears, never a lock holding a ref's content, which nobody may.
func (l *lockFile) commit(content string) error {
	dir, base := filepath.Split(l.path)
	tmp := newSibling(dir, base)
	err := os.WriteFile(tmp, []byte(content), 0o666)
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	l.rollback()
	return err
}

func (l *lockFile) rollback() {
	l.f.Close()
	os.Remove(l.f.Name())
}
