package checkpoint

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestSafetyCheckpointRecordsHeadNow: a work tree that matches the newest
// checkpoint but sits on another branch or commit gets a checkpoint of its
// own, so that the safety checkpoint of a restore names where HEAD is now
// (its undo restores on this branch, not on the one the older was taken on).
func TestSafetyCheckpointRecordsHeadNow(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "f.txt"), "one\n")
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	onMain := mustCreate(t, s, "on main")
	gittest.Git(t, dir, "switch", "-q", "-c", "feature")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	safety := mustCreate(t, s, "pre-restore-safety")
	if safety.Branch != "feature" || safety.Head != head || safety.ID == onMain.ID {
		t.Fatalf("safety checkpoint %s on branch %q at %s; HEAD is feature at %s (the older one: %s)",
			safety.ID[:12], safety.Branch, safety.Head, head, onMain.ID[:12])
	}
	if again := mustCreate(t, s, "again"); !again.Unchanged || again.ID != safety.ID {
		t.Fatalf("nothing changed, yet a new checkpoint %s", again.ID[:12])
	}
}

// TestResetBranchComparesAndSwaps: a commit made on the branch while a
// restore ran (after its safety checkpoint) is not dropped from the
// branch: the move is refused as a lost race, the branch stays.
func TestResetBranchComparesAndSwaps(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "f.txt"), "one\n")
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	cp := mustCreate(t, s, "at one")
	writeFile(t, filepath.Join(dir, "f.txt"), "two\n")
	gittest.Git(t, dir, "commit", "-q", "-am", "two")
	safety, _, err := s.Plan(ctx, &cp.Checkpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "made meanwhile")
	meanwhile := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	err = s.ResetBranch(ctx, safety.Head, cp.Head)
	if !errors.Is(err, gitext.ErrRefChanged) {
		t.Fatalf("ResetBranch over a commit made meanwhile: %v", err)
	}
	if now := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "main")); now != meanwhile {
		t.Fatalf("main is at %s, not at the commit made meanwhile %s", now, meanwhile)
	}
	// Without a commit in between it moves, index included.
	safety, _, err = s.Plan(ctx, &cp.Checkpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ResetBranch(ctx, safety.Head, cp.Head); err != nil {
		t.Fatal(err)
	}
	if now := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "main")); now != cp.Head {
		t.Fatalf("main is at %s, want %s", now, cp.Head)
	}
	if st := gittest.Git(t, dir, "diff", "--cached", "--name-only"); st != "" {
		t.Fatalf("the index is not the new HEAD's: %s", st)
	}
	if orig := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "ORIG_HEAD")); orig != meanwhile {
		t.Fatalf("ORIG_HEAD is %s, want where the branch was, %s", orig, meanwhile)
	}
}
