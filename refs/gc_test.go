package refs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestAppendsRunAutoGC: appends past a low gc.auto leave a bounded number
// of loose objects, because each append runs git gc --auto when git's
// sample says it is due, and nothing is lost; gc.auto=0 turns it off.
func TestAppendsRunAutoGC(t *testing.T) {
	const appends = 250 // 5 objects each; the content and dates are fixed, so are the ids
	for _, gcAuto := range []string{"256", "0"} {
		t.Run("gc.auto="+gcAuto, func(t *testing.T) {
			s, dir := openStore(t)
			gittest.Git(t, dir, "config", "gc.auto", gcAuto)
			gittest.Git(t, dir, "config", "gc.autoDetach", "false") // so that the test sees its effect at once
			most := 0
			for seq := 1; seq <= appends; seq++ {
				if _, err := s.Append(context.Background(), "p", who, func(*Head) (*Batch, error) { return benchBatch(seq), nil }); err != nil {
					t.Fatal(err)
				}
				most = max(most, gittest.LooseObjects(t, dir))
			}
			packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
			if gcAuto == "0" {
				if len(packs) != 0 || most < 4*appends {
					t.Fatalf("gc.auto=0: %d packs, %d loose objects at most", len(packs), most)
				}
				return
			}
			// git's sample (objects/17) passes a limit of 1 after about
			// 2 x 256 loose objects.
			if len(packs) == 0 || most > 4*512 {
				t.Fatalf("%d packs; %d loose objects at most (of %d written)", len(packs), most, 5*appends)
			}
			t.Logf("%d loose objects at most", most)
			gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
			n := 0
			if err := s.Walk(context.Background(), "p", func(c *ChainCommit) (bool, error) {
				n++
				b, err := s.ReadFile(context.Background(), c.Entries, EventsFile)
				if err == nil && !strings.Contains(string(b), `"seq":`) {
					t.Fatalf("commit %s: events %q", c.OID, b)
				}
				return true, err
			}); err != nil || n != appends {
				t.Fatalf("walked %d commits of %d: %v", n, appends, err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "gc.log")); err == nil {
				t.Fatal("git gc left a gc.log")
			}
		})
	}
}

// TestMergeLeavesGCToGit: a merge commit is written right after the git
// fetch that brought the other side, which runs auto maintenance itself, so
// Integrate never runs git gc, however many loose objects git's sample
// (objects/17) finds.
func TestMergeLeavesGCToGit(t *testing.T) {
	ctx := context.Background()
	s, dir := openStore(t)
	first, err := s.Append(ctx, "p", who, batchOf("a"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.Append(ctx, "p", who, batchOf("theirs"))
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "update-ref", PipelineRef("p"), first.Commit, theirs.Commit)
	if _, err := s.Append(ctx, "p", who, batchOf("ours")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "config", "gc.auto", "256") // a limit of 1 in objects/17
	gittest.Git(t, dir, "config", "gc.autoDetach", "false")
	gittest.FillSample(t, dir, 2)
	outcome, _, err := s.Integrate(ctx, "p", theirs.Commit, who, func(ours, _ *Head) (*Batch, error) {
		return &Batch{Files: map[string][]byte{StateFile: ours.State}, Subject: "merge"}, nil
	})
	if err != nil || outcome != Merged {
		t.Fatalf("Integrate = %s, %v", outcome, err)
	}
	if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 0 {
		t.Fatalf("Integrate ran git gc: %v", packs)
	}
}
