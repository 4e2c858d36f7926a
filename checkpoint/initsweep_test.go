package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// leftover makes a first checkpoint's half-made shadow, as a build killed
// during it leaves one, beside the shadows of the repository at dir.
func leftover(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, ".git", "crucible", "shadow", name)
	if err := os.MkdirAll(filepath.Join(path, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStaleInitSwept: what a first checkpoint killed halfway left goes
// with the next checkpoint's Open, whether it creates the shadow or finds
// it made; a first checkpoint still running keeps its own.
func TestStaleInitSwept(t *testing.T) {
	t.Run("the next creates the shadow", func(t *testing.T) {
		dir := gittest.Init(t)
		stale := leftover(t, dir, ".init-123")
		s := openShadowIn(t, dir)
		if exists(stale) || !exists(filepath.Join(s.Dir(), "HEAD")) {
			t.Fatalf("leftover kept: %v; shadow made: %v", exists(stale), exists(filepath.Join(s.Dir(), "HEAD")))
		}
	})
	t.Run("the shadow was made", func(t *testing.T) {
		dir := gittest.Init(t)
		openShadowIn(t, dir)
		stale := leftover(t, dir, ".init-456")
		openShadowIn(t, dir)
		if exists(stale) {
			t.Fatal("leftover kept")
		}
	})
	t.Run("a first checkpoint running", func(t *testing.T) {
		dir := gittest.Init(t)
		live := leftover(t, dir, ".init-789")
		unlock, err := fsutil.Lock(filepath.Join(dir, ".git", "crucible", "shadow", initLock))
		if err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		repo, err := gitext.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		opened := make(chan error, 1)
		go func() {
			_, err := Open(context.Background(), repo)
			opened <- err
		}()
		time.Sleep(300 * time.Millisecond)
		if !exists(live) {
			t.Fatal("the running first checkpoint's directory was swept")
		}
		select {
		case err := <-opened:
			t.Fatalf("Open did not wait for the first checkpoint running: %v", err)
		default:
		}
		unlock() // it ended without making the shadow: its directory is stale now
		if err := <-opened; err != nil {
			t.Fatal(err)
		}
		if exists(live) {
			t.Fatal("leftover kept")
		}
	})
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
