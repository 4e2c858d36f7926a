package gitext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestUpdateRefs covers the transaction: create, move, delete, each way of
// losing the race, a ref only in packed-refs, several refs at once (all or
// none), the reflog git writes, and waiting for a held lock.
func TestUpdateRefs(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	up := func(u ...RefUpdate) error { return r.UpdateRefs(ctx, "test: move", u...) }
	if err := up(RefUpdate{Name: "refs/crucible/x", New: head}); err != nil {
		t.Fatal(err)
	}
	for _, lost := range []RefUpdate{
		{Name: "refs/crucible/x", New: head},            // already exists
		{Name: "refs/crucible/x", New: head, Old: tree}, // is at another value
		{Name: "refs/crucible/y", New: head, Old: tree}, // does not exist
		{Name: "refs/crucible/y", Old: tree},            // delete of a missing ref
		{Name: "refs/crucible/x", Old: tree},            // delete from the wrong value
	} {
		if err := up(lost); !errors.Is(err, ErrRefChanged) {
			t.Errorf("%+v: %v, want ErrRefChanged", lost, err)
		}
	}
	gittest.Git(t, dir, "pack-refs", "--all", "--prune")
	if got, err := r.ReadRef("refs/crucible/x"); err != nil || got != head {
		t.Fatalf("packed ref reads %q, %v", got, err)
	}
	if err := up(RefUpdate{Name: "refs/crucible/x", New: tree, Old: head}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "rev-parse", "refs/crucible/x"); got != tree {
		t.Fatalf("git sees %s", got)
	}

	// All or none: the second update loses, so the first does not happen.
	err := up(RefUpdate{Name: "refs/crucible/a", New: head}, RefUpdate{Name: "refs/crucible/x", New: head, Old: head})
	if !errors.Is(err, ErrRefChanged) {
		t.Fatalf("half-stale transaction: %v", err)
	}
	if got, _ := r.ReadRef("refs/crucible/a"); got != "" {
		t.Fatalf("refs/crucible/a moved to %s in a failed transaction", got)
	}
	if err := up(RefUpdate{Name: "refs/crucible/a", New: head}, RefUpdate{Name: "refs/crucible/x", Old: tree}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/crucible/"); got != "refs/crucible/a" {
		t.Fatalf("after create and delete: %q", got)
	}

	// Every move is in the ref's reflog, refs/crucible/* too, whatever
	// core.logAllRefUpdates says: a rewound chain is recovered from it.
	if err := up(RefUpdate{Name: "refs/crucible/a", New: tree, Old: head}); err != nil {
		t.Fatal(err)
	}
	logged, err := os.ReadFile(filepath.Join(dir, ".git", "logs", "refs", "crucible", "a"))
	zero := strings.Repeat("0", len(head))
	if want := zero + " " + head + " Ada Tester <ada@example.com> 1795341600 +0000\ttest: move\n" +
		head + " " + tree + " Ada Tester <ada@example.com> 1795341600 +0000\ttest: move\n"; err != nil || string(logged) != want {
		t.Fatalf("reflog: %q, %v\nwant %q", logged, err, want)
	}

	// A held lock makes the writer wait, not fail, while it is released soon.
	lock := filepath.Join(dir, ".git", "refs", "crucible", "a.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- up(RefUpdate{Name: "refs/crucible/a", New: head, Old: tree}) }()
	time.Sleep(50 * time.Millisecond)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}

// TestUpdateRefsRefuses: names git would not take and ids of the wrong
// format never reach git.
func TestUpdateRefsRefuses(t *testing.T) {
	r, dir := openRepo(t)
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	for _, u := range []RefUpdate{
		{Name: "refs/heads/../../config", New: head},
		{Name: "refs/x\x00y", New: head},
		{Name: "refs/x", New: head + "00"},
		{Name: "refs/x", New: strings.ToUpper(head)},
	} {
		if err := r.UpdateRefs(context.Background(), "test", u); err == nil || errors.Is(err, ErrRefChanged) {
			t.Errorf("%q accepted: %v", u, err)
		}
	}
}

// TestRefTxError: git's wordings of a lost race and of a held lock get
// their types; anything else stays git's error. Text that did not come
// from git is no race.
func TestRefTxError(t *testing.T) {
	for _, c := range []struct {
		stderr string
		race   bool
		lock   string
	}{
		{"fatal: prepare: cannot lock ref 'refs/x/y': reference already exists\n", true, ""},
		{"fatal: prepare: cannot lock ref 'refs/x/y': is at 98557168c1198966016674eb7a822df57f0e5878 but expected b9ae761dbacb185092e9f14b499798e12d09ac62\n", true, ""},
		{"fatal: prepare: cannot lock ref 'refs/x/z': unable to resolve reference 'refs/x/z'\n", true, ""},
		{"fatal: prepare: cannot lock ref 'refs/x/y': Unable to create '/r/.git/refs/x/y.lock': File exists.\n\nAnother git process...", false, "/r/.git/refs/x/y.lock"},
		{"fatal: prepare: cannot lock ref 'refs/x/y/z': 'refs/x/y' exists; cannot create 'refs/x/y/z'\n", false, ""},
		// fetch, and a remote refusing a push
		{"remote: error: cannot lock ref 'refs/crucible/pipelines/p': is at 6d18 but expected fd65        \nerror: failed to push some refs to 'x'\n", true, ""},
		{"error: cannot lock ref 'refs/crucible-remote/origin/pipelines/p': is at fd65 but expected 35ef\n", true, ""},
		{"fatal: '/nowhere' does not appear to be a git repository\n", false, ""},
	} {
		err := refTxError(&Error{Stderr: c.stderr, ExitCode: 128})
		var le *LockedError
		if errors.Is(err, ErrRefChanged) != c.race || errors.As(err, &le) != (c.lock != "") || le != nil && le.Path != c.lock {
			t.Errorf("%q: %v", c.stderr, err)
		}
	}
	if errors.Is(errors.New("cannot lock ref 'x': is at a but expected b"), ErrRefChanged) {
		t.Error("an error that is not git's was taken for a lost race")
	}
}

// TestRetryCAS retries lost races only, and a bounded number of times.
func TestRetryCAS(t *testing.T) {
	ctx := context.Background()
	n := 0
	if err := RetryCAS(ctx, func() error {
		if n++; n < 3 {
			return fmt.Errorf("x: %w", ErrRefChanged)
		}
		return nil
	}); err != nil || n != 3 {
		t.Fatalf("won on try %d: %v", n, err)
	}
	n = 0
	other := errors.New("other")
	if err := RetryCAS(ctx, func() error { n++; return other }); err != other || n != 1 {
		t.Fatalf("other error: tried %d times, %v", n, err)
	}
	n = 0
	if err := RetryCAS(ctx, func() error { n++; return ErrRefChanged }); !errors.Is(err, ErrRefChanged) || n != maxCASAttempts {
		t.Fatalf("always losing: tried %d times, %v", n, err)
	}
}

// TestDeadOwnersLockCleared: a symbolic ref's lock left by a killed
// git-crucible is cleared by the next writer; a live owner's, or a lock
// without our owner record, is waited on and reported.
func TestDeadOwnersLockCleared(t *testing.T) {
	r, dir := openRepo(t)
	lock := filepath.Join(dir, ".git", "refs", "crucible", "active", "main.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(ownerRecord(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.SetSymref("refs/crucible/active/main", "refs/crucible/pipelines/a", ""); err != nil {
		t.Fatalf("a dead owner's lock: %v", err)
	}
	if got := gittest.Git(t, dir, "symbolic-ref", "refs/crucible/active/main"); got != "refs/crucible/pipelines/a" {
		t.Fatalf("git reads %q", got)
	}
	for _, held := range []string{ownerRecord(os.Getpid()), "", "ref: refs/crucible/pipelines/b\n",
		ownerPrefix + "pid 1 boot unknown\n"} {
		if err := os.WriteFile(lock, []byte(held), 0o644); err != nil {
			t.Fatal(err)
		}
		lk, err := takeLock(strings.TrimSuffix(lock, ".lock"), 0)
		var le *LockedError
		if !errors.As(err, &le) || le.Path != lock {
			t.Errorf("lock holding %q: %v", held, err)
			if lk != nil {
				lk.rollback()
			}
		}
	}
	// A pid of an earlier boot is dead whatever runs under it now.
	if err := os.WriteFile(lock, []byte(ownerPrefix+fmt.Sprintf("pid %d boot earlier-boot\n", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.SetSymref("refs/crucible/active/main", "refs/crucible/pipelines/b", "refs/crucible/pipelines/a"); err != nil {
		t.Fatalf("an earlier boot's lock: %v", err)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock left: %v", err)
	}
}

// TestRefTxBegunEarly: a transaction started before its updates are known
// moves nothing until Commit, moves nothing when aborted, and a deferred
// Abort after Commit is harmless.
func TestRefTxBegunEarly(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	tx, err := r.BeginRefs(ctx, "test: early")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.ReadRef("refs/crucible/early"); got != "" {
		t.Fatalf("moved before Commit: %s", got)
	}
	tx.Abort()
	tx.Abort()
	if got, _ := r.ReadRef("refs/crucible/early"); got != "" {
		t.Fatalf("an aborted transaction moved the ref to %s", got)
	}
	tx, err = r.BeginRefs(ctx, "test: early")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	if err := tx.Commit(RefUpdate{Name: "refs/crucible/early", New: head}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.ReadRef("refs/crucible/early"); got != head {
		t.Fatalf("ref at %q, want %s", got, head)
	}
	if err := tx.Commit(RefUpdate{Name: "refs/crucible/early", Old: head}); err == nil {
		t.Fatal("a second Commit of one transaction was accepted")
	}
	tx, _ = r.BeginRefs(ctx, "test: early")
	if err := tx.Commit(RefUpdate{Name: "refs/crucible/early", New: head}); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("a lost race begun early: %v, want ErrRefChanged", err)
	}
}

// TestRefTxCancelled: a transaction whose context ends before Commit
// moves nothing and leaves no lock; git is never signalled mid-way, where
// a signal before git guards its lock file leaves the file behind (a
// cancelled build's next run then waited for it and failed).
func TestRefTxCancelled(t *testing.T) {
	r, dir := openRepo(t)
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	lock := filepath.Join(dir, ".git", "refs", "crucible", "x.lock")
	for i := range 60 {
		ctx, cancel := context.WithCancel(context.Background())
		tx, err := r.BeginRefs(ctx, "test: cancelled")
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := tx.Commit(RefUpdate{Name: "refs/crucible/x", New: head}); !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: %v, want context.Canceled", i, err)
		}
		if _, err := os.Lstat(lock); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("run %d: %s left: %v", i, lock, err)
		}
		if out, _ := exec.Command("git", "-C", dir, "rev-parse", "-q", "--verify", "refs/crucible/x").Output(); len(out) > 0 {
			t.Fatalf("run %d: a cancelled transaction moved refs/crucible/x", i)
		}
	}
}
