package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/gatecache"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestConcurrentVerifyCommits runs 8 verify-commits at once, each in a
// worktree of one repository, on ranges that share most of their commits
// and end in a commit of their own: every tree of every range ends with
// its result in the notes, nothing is left pending, and git reads the
// notes ref as sound.
func TestConcurrentVerifyCommits(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Git(t, dir, "tag", "base")
	for i := range 6 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%d", i)), "shared\n")
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprintf("shared %d", i))
	}
	const runs = 8
	trees := map[string]bool{}
	worktrees := make([]string, runs)
	for w := range runs {
		wt := filepath.Join(t.TempDir(), "wt")
		// Ranges of 3 to 6 shared commits, then one of the worktree's own.
		gittest.Git(t, dir, "worktree", "add", "-q", "-b", fmt.Sprint("w", w), wt, fmt.Sprintf("main~%d", w%4))
		write(t, filepath.Join(wt, "own"), fmt.Sprintln("worktree", w))
		gittest.Git(t, wt, "add", "-A")
		gittest.Git(t, wt, "commit", "-q", "-m", "own")
		for _, tr := range strings.Fields(gittest.Git(t, wt, "log", "--format=%T", "base..HEAD")) {
			trees[tr] = true
		}
		worktrees[w] = wt
	}
	gate := "test -e f0 && echo tested >> " + filepath.Join(t.TempDir(), "runs")
	var wg sync.WaitGroup
	outs := make([]string, runs)
	errs := make([]error, runs)
	for w, wt := range worktrees {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("git-crucible", "verify-commits", "--exec", gate, "base..HEAD")
			cmd.Dir = wt
			out, err := cmd.CombinedOutput()
			outs[w], errs[w] = string(out), err
		}()
	}
	wg.Wait()
	for w := range runs {
		if errs[w] != nil {
			t.Fatalf("run %d: %v\n%s", w, errs[w], outs[w])
		}
	}
	spec := gatecache.Spec(gate, "")
	for tr := range trees {
		note := gittest.Git(t, dir, "notes", "--ref", gatecache.NotesRef, "show", tr)
		if r, ok := gatecache.Latest(tr, spec, []byte(note)); !ok || r.Status != gatecache.Pass {
			t.Errorf("tree %s: note %q has no pass", tr, note)
		}
	}
	if len(trees) != 6+runs {
		t.Errorf("%d trees, want %d", len(trees), 6+runs)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, ".git", "crucible", "gates", "pending")); len(left) != 0 {
		t.Errorf("%d results left pending", len(left))
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
