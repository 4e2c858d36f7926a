package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

func openShadow(t *testing.T) (*Shadow, string) {
	t.Helper()
	dir := gittest.Init(t)
	t.Chdir(dir)
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// TestPruneFreesObjects: a pruned checkpoint's unique content leaves the
// shadow's object store; what the kept ones hold stays.
func TestPruneFreesObjects(t *testing.T) {
	s, dir := openShadow(t)
	var blobs []string
	for i := 0; i < 3; i++ {
		content := strings.Repeat(string(rune('a'+i)), 5000)
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create("r", "test", ""); err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, s.repo.HashObject("blob", []byte(content)))
	}
	gone, err := s.Prune(1, time.Hour)
	if err != nil || len(gone) != 2 {
		t.Fatalf("pruned %d, %v", len(gone), err)
	}
	has := func(oid string) bool {
		_, err := s.repo.Git(context.Background(), "cat-file", "-e", oid)
		return err == nil
	}
	if has(blobs[0]) || has(blobs[1]) {
		t.Fatal("a pruned checkpoint's content is still in the shadow")
	}
	if !has(blobs[2]) {
		t.Fatal("the kept checkpoint's content is gone")
	}
	list, err := s.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v, %v", list, err)
	}
}

// TestDamagedShadowIsReported: a shadow that lost its HEAD is reported and
// left as it is, never re-created over what it still holds.
func TestDamagedShadowIsReported(t *testing.T) {
	s, _ := openShadow(t)
	if _, err := s.Create("r", "test", ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.Dir(), "HEAD")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), s.main)
	if err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Fatalf("Open = %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "objects")); err != nil {
		t.Fatal("the damaged shadow's objects were touched")
	}
}

func TestProgressSteps(t *testing.T) {
	s, _ := openShadow(t)
	var steps []string
	s.Progress = func(step string) { steps = append(steps, step) }
	if _, err := s.Create("r", "test", ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(steps, ", "); got != "looking for changes, adding files, writing the tree" {
		t.Fatalf("steps: %s", got)
	}
}
