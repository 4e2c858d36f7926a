package remote

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
)

// syncedClone is a repository with pipeline p1 synced to its remote
// origin, a bare repository whose path it also returns.
func syncedClone(t *testing.T) (*Syncer, string) {
	t.Helper()
	dir := gittest.Init(t)
	t.Chdir(dir)
	repo, err := gitext.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	svc := pipeline.Open(repo)
	t.Cleanup(func() { svc.Close() })
	server := filepath.Join(t.TempDir(), "server.git")
	gittest.Git(t, dir, "init", "-q", "--bare", server)
	gittest.Git(t, dir, "remote", "add", "origin", server)
	x := &Syncer{Svc: svc}
	startPipeline(t, x, "p1")
	if _, err := x.Sync(t.Context(), "origin", Selection{}); err != nil {
		t.Fatal(err)
	}
	return x, server
}

func startPipeline(t *testing.T, x *Syncer, id string) {
	t.Helper()
	if _, _, err := x.Svc.Start(t.Context(), pipeline.StartOptions{Goal: "goal " + id, Mode: "feature", ID: id, Beside: true}); err != nil {
		t.Fatal(err)
	}
}

// lockRef creates the lock file of ref file path, as a git process moving
// that ref holds it, and returns the lock's path.
func lockRef(t *testing.T, path string) string {
	t.Helper()
	lock := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return lock
}

// holdLock locks ref file path and removes the lock after a while.
func holdLock(t *testing.T, path string, hold time.Duration) {
	t.Helper()
	lock := lockRef(t, path)
	released := make(chan struct{})
	time.AfterFunc(hold, func() {
		os.Remove(lock)
		close(released)
	})
	t.Cleanup(func() { <-released })
}

// TestSyncWaitsOutRemoteLock: a push that finds the remote's ref locked by
// another push (the remote's git gives up on a held lock after 100ms,
// core.filesRefLockTimeout) has lost a race: the sync starts over and
// succeeds once the lock is gone.
func TestSyncWaitsOutRemoteLock(t *testing.T) {
	x, server := syncedClone(t)
	startPipeline(t, x, "p2")
	holdLock(t, filepath.Join(server, refs.PipelineRef("p2")), time.Second)
	report, err := x.Sync(t.Context(), "origin", Selection{})
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if report.Attempts < 2 {
		t.Errorf("%d attempt(s): the push did not meet the lock", report.Attempts)
	}
	assertPushed(t, x, server, "p2")
}

// TestSyncGivesUpOnStaleRemoteLock: a lock left at the remote by a
// crashed push holds every sync up until its patience runs out, not longer;
// the error says so, and names the lock.
func TestSyncGivesUpOnStaleRemoteLock(t *testing.T) {
	x, server := syncedClone(t)
	startPipeline(t, x, "p2")
	lock := lockRef(t, filepath.Join(server, refs.PipelineRef("p2")))
	defer func(p time.Duration) { syncPatience = p }(syncPatience)
	syncPatience = 300 * time.Millisecond
	report, err := x.Sync(t.Context(), "origin", Selection{})
	if !errors.Is(err, ErrLostRace) {
		t.Fatalf("sync: %v, want ErrLostRace", err)
	}
	if want := fmt.Sprintf("gave up after %d attempts in 300ms: ", report.Attempts); !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), filepath.Base(lock)) {
		t.Errorf("sync after %d attempts: %v", report.Attempts, err)
	}
}

// TestSyncWaitsOutLocalLock: a fetch that finds a tracking ref locked by
// another git process waits for it, as this clone's own ref writes do,
// instead of failing after git's default 100ms.
func TestSyncWaitsOutLocalLock(t *testing.T) {
	x, server := syncedClone(t)
	repo := x.Svc.Repo
	tracking := TrackingPrefix("origin") + "p1"
	gittest.Git(t, repo.WorkTree, "update-ref", "-d", tracking) // the fetch must write it again
	holdLock(t, filepath.Join(repo.GitDir, tracking), time.Second)
	if _, err := x.Sync(t.Context(), "origin", Selection{}); err != nil {
		t.Fatalf("sync: %v", err)
	}
	assertPushed(t, x, server, "p1")
}

// assertPushed checks that the remote and the tracking ref hold the local
// tip of pipeline id.
func assertPushed(t *testing.T, x *Syncer, server, id string) {
	t.Helper()
	local := gittest.Git(t, x.Svc.Repo.WorkTree, "rev-parse", refs.PipelineRef(id))
	if got := gittest.Git(t, server, "rev-parse", refs.PipelineRef(id)); got != local {
		t.Errorf("remote has %s at %s, want %s", id, got, local)
	}
	if got, err := x.Svc.Repo.ReadRef(TrackingPrefix("origin") + id); err != nil || got != local {
		t.Errorf("tracking ref of %s: %s %v, want %s", id, got, err, local)
	}
}

// TestTransfersTakeTurns: a sync waits while another fetch or push of the
// same repository runs (holds the transfer lock), then goes through.
func TestTransfersTakeTurns(t *testing.T) {
	x, server := syncedClone(t)
	startPipeline(t, x, "p2")
	unlock, err := fsutil.Lock(filepath.Join(x.Svc.Repo.CrucibleDir(), "transfer.lock"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := x.Sync(t.Context(), "origin", Selection{})
		done <- err
	}()
	select {
	case err := <-done:
		unlock()
		t.Fatalf("the sync ran beside another transfer: %v", err)
	case <-time.After(time.Second):
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("sync: %v", err)
	}
	assertPushed(t, x, server, "p2")
}
