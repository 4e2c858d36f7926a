package gitext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Refs are moved by git: one `git update-ref --stdin` transaction per
// call, so git takes the locks, checks the old values, writes the reflogs
// and works on whatever ref storage the repository uses. The transaction is
// opened and closed with explicit verbs: a caller killed before sending
// "commit" leaves git to read EOF and abort, never to half-commit.

// ErrRefChanged is a lost compare-and-swap: a ref is not at the old value
// the caller read. Read again and retry (RetryCAS).
var ErrRefChanged = errors.New("ref changed concurrently")

// LockedError says another process holds a ref's lock.
type LockedError struct{ Path string }

func (e *LockedError) Error() string {
	return fmt.Sprintf("unable to lock %s: it exists; another git process may be running", e.Path)
}

// Hint tells the user how to clear a stale lock.
func (e *LockedError) Hint() string {
	return "if no other git or git-crucible process is running, remove the file: rm " + e.Path
}

// RefUpdate is one ref's compare-and-swap in a transaction.
type RefUpdate struct {
	Name string
	Old  string // the value it has now; "" means it must not exist
	New  string // the value it gets; "" deletes it
}

// LockWait bounds how long a writer waits for another's ref lock (git's
// core.filesRefLockTimeout, in milliseconds), or for another git's index.
const LockWait = 10 * time.Second

// WaitForLocks is the setting (for git -c) that makes any git command that
// moves refs wait for another's ref lock as long as UpdateRefs does, not
// git's default 100ms, which a loaded machine can take to commit one ref.
func WaitForLocks() string {
	return fmt.Sprintf("core.filesRefLockTimeout=%d", LockWait.Milliseconds())
}

// UpdateRefs applies updates in one git transaction: every ref moves, or
// none does. reason goes into the reflogs git keeps. A ref not at its Old
// value fails the whole transaction with an error wrapping ErrRefChanged; a
// lock another process holds for longer than LockWait is a *LockedError.
func (r *Repo) UpdateRefs(ctx context.Context, reason string, updates ...RefUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	tx, err := r.BeginRefs(ctx, reason)
	if err != nil {
		return err
	}
	return tx.Commit(updates...)
}

// RefTx is a ref transaction whose git process is started before its
// updates are known, so that git's start-up overlaps the caller's own work
// (writing the objects the refs will name). Commit or Abort it.
type RefTx struct {
	repo   *Repo
	ctx    context.Context
	args   []string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	done   chan error
	ended  bool
}

// BeginRefs starts a ref transaction: `git update-ref --stdin` waiting for
// its updates. Nothing is locked until Commit, which moves nothing if ctx
// has ended by then. Every ref it moves keeps a reflog, refs/crucible/*
// too (git logs only branches and notes unless asked), unless NoReflogs:
// a chain rewound by hand is recovered from it, and gc keeps what it names.
func (r *Repo) BeginRefs(ctx context.Context, reason string) (*RefTx, error) {
	args := []string{"-c", WaitForLocks(), "update-ref", "--create-reflog", "--stdin", "-z", "-m", reason}
	if r.NoReflogs {
		args = slices.DeleteFunc(args, func(a string) bool { return a == "--create-reflog" })
	}
	t := &RefTx{repo: r, ctx: ctx, done: make(chan error, 1), args: args}
	t.cmd = exec.Command("git", t.args...)
	t.cmd.Env = Env(r)
	t.cmd.Stderr = &t.stderr
	// Its own process group, so that a signal to ours (a kill -9 of the
	// whole group, a ^C) cannot stop git holding a lock: git sees our end
	// of its input close instead, and aborts unless it read "commit".
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("cannot run git: %w", err)
	}
	t.stdin = stdin
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run git: %w", err)
	}
	go func() { t.done <- t.cmd.Wait() }()
	return t, nil
}

// Commit sends the updates and asks git to commit them, then waits.
func (t *RefTx) Commit(updates ...RefUpdate) error {
	if t.ended {
		return errors.New("ref transaction already ended")
	}
	if err := t.ctx.Err(); err != nil {
		t.Abort()
		return err
	}
	zero := strings.Repeat("0", 2*t.repo.HashLen())
	orZero := func(v string) string {
		if v == "" {
			return zero
		}
		return v
	}
	var in bytes.Buffer
	in.WriteString("start\x00")
	for _, u := range updates {
		if err := CheckRefName(u.Name); err != nil {
			t.Abort()
			return err
		}
		for _, v := range []string{u.Old, u.New} {
			if v != "" && !t.repo.ValidOID(v) {
				t.Abort()
				return fmt.Errorf("%s: invalid object id %q", u.Name, v)
			}
		}
		fmt.Fprintf(&in, "update %s\x00%s\x00%s\x00", u.Name, orZero(u.New), orZero(u.Old))
	}
	in.WriteString("prepare\x00commit\x00")
	// One write: git acts on nothing before "commit" arrives, and a
	// failed write (git gone) shows in its exit status below.
	t.stdin.Write(in.Bytes())
	t.stdin.Close()
	t.ended = true
	// Once "commit" is sent git is left to finish, even if ctx ends: a
	// signal that lands before git guards its lock file leaves the file
	// behind, and the caller must learn whether the refs moved. LockWait
	// bounds the wait.
	err := <-t.done
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("cannot run git: %w", err)
	}
	return refTxError(&Error{Args: t.args, Stderr: t.stderr.String(), ExitCode: exit.ExitCode()})
}

// Abort ends the transaction with nothing moved — git reads the end of its
// input before any "commit" — unless it has ended already, so that it can
// be deferred.
func (t *RefTx) Abort() {
	if t.ended {
		return
	}
	t.ended = true
	t.stdin.Close()
	<-t.done
}

// Is makes any git command's lost compare-and-swap an ErrRefChanged, so
// that callers retry it whichever command lost. A held lock is not a race.
func (e *Error) Is(target error) bool {
	return target == ErrRefChanged && lostRace(e.Stderr)
}

// lostRace reports whether stderr holds one of git's ways of saying a ref
// was not at the expected value (it has one where none was expected,
// another one, or none), in update-ref, fetch, or a remote's answer to a
// push: "cannot lock ref '<ref>': " and then "reference already exists",
// "is at <oid> but expected <oid>" or "unable to resolve reference '<ref>'".
// Read by hand, not by a regexp: the hook binary links no regexp package,
// whose start-up every commit would pay.
func lostRace(stderr string) bool {
	const lead = "cannot lock ref '"
	for rest := stderr; ; {
		i := strings.Index(rest, lead)
		if i < 0 {
			return false
		}
		rest = rest[i+len(lead):]
		_, after, ok := strings.Cut(rest, "'") // the ref, up to its closing quote (never one inside)
		if !ok {
			return false
		}
		if why, ok := strings.CutPrefix(after, ": "); ok && raceReason(why) {
			return true
		}
	}
}

// raceReason is lostRace's reading of what follows "cannot lock ref '<ref>': ".
func raceReason(s string) bool {
	if strings.HasPrefix(s, "reference already exists") {
		return true
	}
	if rest, ok := strings.CutPrefix(s, "unable to resolve reference '"); ok {
		return strings.Contains(rest, "'") // the ref, up to its closing quote (never one inside)
	}
	rest, ok := strings.CutPrefix(s, "is at ")
	if !ok {
		return false
	}
	rest, ok = cutHex(rest)
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, " but expected "); !ok {
		return false
	}
	_, ok = cutHex(rest)
	return ok
}

// cutHex cuts the lower-case hex digits s starts with; ok when there is one.
func cutHex(s string) (rest string, ok bool) {
	n := hexPrefix(s)
	return s[n:], n > 0
}

// hexPrefix is how many lower-case hex digits s starts with.
func hexPrefix(s string) int {
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] >= 'a' && s[n] <= 'f') {
		n++
	}
	return n
}

// HeldLock is the lock file that git gave up waiting for, another process
// holding it, when that made the command fail; "" otherwise. In a push's
// error it is the remote's (its own core.filesRefLockTimeout ran out).
// git says: Unable to create '<path>.lock': File exists.
func (e *Error) HeldLock() string {
	const lead = "Unable to create '"
	for rest := e.Stderr; ; {
		i := strings.Index(rest, lead)
		if i < 0 {
			return ""
		}
		rest = rest[i+len(lead):]
		path, after, ok := strings.Cut(rest, "'")
		if !ok {
			return ""
		}
		if strings.HasSuffix(path, ".lock") && strings.HasPrefix(after, ": File exists") {
			return path
		}
	}
}

// refTxError gives update-ref's failure its type: a held lock, or git's
// error (which Is ErrRefChanged on a lost race).
func refTxError(gerr *Error) error {
	if path := gerr.HeldLock(); path != "" {
		return &LockedError{Path: path}
	}
	return gerr
}

// maxCASAttempts bounds the retries of a write that keeps losing the race.
const maxCASAttempts = 100

// RetryCAS runs try — read a ref, build on it, compare-and-swap — until it
// succeeds, fails otherwise than by ErrRefChanged, or has lost the race
// maxCASAttempts times. It waits a random, growing while between tries so
// that writers racing each other spread out.
func RetryCAS(ctx context.Context, try func() error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || !errors.Is(err, ErrRefChanged) || attempt == maxCASAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.IntN(1000*attempt)) * time.Microsecond):
		}
	}
}

// ValidOID reports whether s is a full lower-case hex object id of r's
// object format.
func (r *Repo) ValidOID(s string) bool {
	return len(s) == 2*r.HashLen() && hexOID(s)
}

// hexOID reports whether s is a full lower-case hex object id of either
// object format, as git writes them in objects (a commit's tree and parents).
func hexOID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && hexPrefix(s) == len(s)
}
