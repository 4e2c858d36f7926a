package gitext

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestAutoGC: git gc --auto runs only when git's own sample of the loose
// objects passes gc.auto, and packs them; gc.auto=0 and
// maintenance.auto=false turn it off; while none is due no process starts;
// what it read of the configuration it keeps for the next call.
func TestAutoGC(t *testing.T) {
	ctx := context.Background()
	r, dir := openRepo(t)
	gittest.FillSample(t, dir, 2)
	t.Run("not due", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir()) // no git to start
		if r.AutoGC(ctx, &GCConfig{}) {
			t.Fatal("ran git gc under the default gc.auto")
		}
	})
	gittest.Git(t, dir, "config", "gc.autoDetach", "false")
	var kept GCConfig
	for _, off := range [][]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
		gittest.Git(t, dir, "config", "gc.auto", "256") // a limit of 1 in objects/17
		gittest.Git(t, dir, "config", off[0], off[1])
		if r.AutoGC(ctx, &GCConfig{}) || r.AutoGC(ctx, &kept) {
			t.Fatalf("%s=%s: ran git gc", off[0], off[1])
		}
		gittest.Git(t, dir, "config", "--unset", off[0])
	}
	before := gittest.LooseObjects(t, dir)
	gittest.Git(t, dir, "config", "gc.auto", "256")
	if r.AutoGC(ctx, &kept) {
		t.Fatal("read the configuration again")
	}
	if !r.AutoGC(ctx, &GCConfig{}) {
		t.Fatal("did not run git gc past gc.auto")
	}
	if after := gittest.LooseObjects(t, dir); after != 0 {
		t.Fatalf("%d loose objects before git gc --auto, %d after", before, after)
	}
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gc.log")); err == nil {
		t.Fatal("git gc left a gc.log")
	}
}
