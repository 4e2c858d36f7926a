package gitext

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// looseIn17 writes blobs until objects/17, git's sample, holds n, and
// makes them reachable from a ref.
func looseIn17(t *testing.T, r *Repo, dir string, n int) {
	t.Helper()
	var entries []TreeEntry
	for i := 0; r.looseSample() < n; i++ {
		oid, err := r.WriteObject("blob", []byte(fmt.Sprintf("blob %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, TreeEntry{Mode: "100644", Name: fmt.Sprint(i), OID: oid})
	}
	tree, err := EncodeTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	oid, err := r.WriteObject("tree", tree)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "update-ref", "refs/heads/blobs", gittest.Git(t, dir, "commit-tree", oid, "-m", "blobs"))
}

func countLoose(t *testing.T, dir string) string {
	out := gittest.Git(t, dir, "count-objects", "-v")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "count: "); ok {
			return v
		}
	}
	t.Fatalf("count-objects: %s", out)
	return ""
}

// TestAutoGC: git gc --auto runs only when git's own sample of the loose
// objects passes gc.auto, and packs them; gc.auto=0 and
// maintenance.auto=false turn it off; while none is due no process starts.
func TestAutoGC(t *testing.T) {
	ctx := context.Background()
	r, dir := openRepo(t)
	looseIn17(t, r, dir, 2)
	t.Run("not due", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir()) // no git to start
		if r.AutoGC(ctx) {
			t.Fatal("ran git gc under the default gc.auto")
		}
	})
	gittest.Git(t, dir, "config", "gc.autoDetach", "false")
	for _, off := range [][]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
		gittest.Git(t, dir, "config", "gc.auto", "256") // a limit of 1 in objects/17
		gittest.Git(t, dir, "config", off[0], off[1])
		if r.AutoGC(ctx) {
			t.Fatalf("%s=%s: ran git gc", off[0], off[1])
		}
		gittest.Git(t, dir, "config", "--unset", off[0])
	}
	before := countLoose(t, dir)
	gittest.Git(t, dir, "config", "gc.auto", "256")
	if !r.AutoGC(ctx) {
		t.Fatal("did not run git gc past gc.auto")
	}
	if after := countLoose(t, dir); after != "0" {
		t.Fatalf("%s loose objects before git gc --auto, %s after", before, after)
	}
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gc.log")); err == nil {
		t.Fatal("git gc left a gc.log")
	}
}
