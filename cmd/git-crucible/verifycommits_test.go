package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/verifycommits"
	"github.com/git-crucible/git-crucible/verifycommits/results"
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
	spec := fastgate.Identity(gate, "")
	for tr := range trees {
		note := gittest.Git(t, dir, "notes", "--ref", verifycommits.NotesRef, "show", tr)
		if r, ok := results.Latest(tr, spec, []byte(note)); !ok || r.Status != verifycommits.Pass {
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

// TestKilledVerifyCommits kills verify-commits with its rebase and gate
// (SIGKILL to the process group) while the gate runs at commit 3 of 5:
// the rebase is left under way, --abort puts HEAD and every ref back
// exactly and keeps the two results recorded before the kill; killed
// again, --continue puts them back and tests only the commits not tested
// yet; killed again (--force), a plain run puts them back as --continue
// does and answers every commit from the cache.
func TestKilledVerifyCommits(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Git(t, dir, "tag", "base")
	for i := 1; i <= 5; i++ {
		write(t, filepath.Join(dir, fmt.Sprint("f", i)), "x\n")
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprint("c", i))
	}
	tmp := t.TempDir()
	runs, ready, hang := filepath.Join(tmp, "runs"), filepath.Join(tmp, "ready"), filepath.Join(tmp, "hang")
	gate := filepath.Join(tmp, "gate.sh")
	// At commit 3, while $hang exists, the gate says so and hangs.
	write(t, gate, fmt.Sprintf("echo run >>%s\nif [ -e f3 ] && [ ! -e f4 ] && [ -e %s ]; then : >%s; sleep 60; fi\n", runs, hang, ready))
	refs := func() string {
		return gittest.Git(t, dir, "symbolic-ref", "HEAD") + "\n" + gittest.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags")
	}
	before := refs()
	verify := func(args ...string) (int, string) {
		cmd := exec.Command("git-crucible", append([]string{"verify-commits"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	countRuns := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run\n")
	}
	killAtCommit3 := func(args ...string) {
		t.Helper()
		os.Remove(ready)
		write(t, hang, "")
		cmd := exec.Command("git-crucible", append([]string{"verify-commits", "--exec", "sh " + gate, "base..HEAD"}, args...)...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
			if time.Now().After(deadline) {
				t.Fatal("the gate never reached commit 3")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A second run in the worktree would abort the first's rebase.
		if code, out := verify("--exec", "sh "+gate, "base..HEAD"); code != 1 || out != "error: another verify-commits is running in this worktree\n" {
			t.Errorf("a second run at once: exit %d\n%s", code, out)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		os.Remove(hang)
		if _, err := os.Stat(filepath.Join(dir, ".git", "rebase-merge")); err != nil {
			t.Fatalf("no rebase left under way: %v", err)
		}
	}

	killAtCommit3()
	code, out := verify("--abort")
	if code != 0 || !strings.HasPrefix(out, "Aborted the interrupted run: HEAD is back on main at ") || !strings.HasSuffix(out, "; 2 results it had are kept\n") {
		t.Fatalf("--abort: exit %d\n%s", code, out)
	}
	if after := refs(); after != before {
		t.Fatalf("refs after --abort:\n%s\nwant:\n%s", after, before)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("work tree after --abort: %q", st)
	}
	if code, out := verify("--abort"); code != 1 || !strings.Contains(out, "error: no interrupted verify-commits run in this worktree") {
		t.Fatalf("--abort again: exit %d\n%s", code, out)
	}

	killAtCommit3()
	n := countRuns()
	code, out = verify("--continue")
	if code != 0 || !strings.Contains(out, "Recovered the interrupted run: HEAD is back on main at ") || !strings.Contains(out, "5 commits: 3 gate runs, 2 cached") {
		t.Fatalf("--continue: exit %d\n%s", code, out)
	}
	if got := countRuns() - n; got != 3 {
		t.Errorf("--continue ran the gate %d times, want 3 (commits 3 to 5)", got)
	}
	if after := refs(); after != before {
		t.Fatalf("refs after --continue:\n%s\nwant:\n%s", after, before)
	}

	// A plain run recovers as --continue does, then runs as asked.
	killAtCommit3("--force")
	n = countRuns()
	code, out = verify("--exec", "sh "+gate, "base..HEAD")
	if code != 0 || !strings.HasPrefix(out, "Recovered the interrupted run: HEAD is back on main at ") || !strings.Contains(out, "; 2 results it had are kept\n") || !strings.HasSuffix(out, "5 commits: 0 gate runs, 5 cached\n") {
		t.Fatalf("a run over the wedged rebase: exit %d\n%s", code, out)
	}
	if got := countRuns() - n; got != 0 {
		t.Errorf("the run over the wedged rebase ran the gate %d times, want none", got)
	}
	if after := refs(); after != before {
		t.Fatalf("refs after a run over the wedged rebase:\n%s\nwant:\n%s", after, before)
	}
}
