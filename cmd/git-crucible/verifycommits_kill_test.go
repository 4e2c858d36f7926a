package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestKilledVerifyCommitsLosesNothing SIGKILLs verify-commits 30 times at
// seeded random moments of a rebase over 12 commits (the git-crucible
// process alone, or its process group: either way its rebase, in a group
// of its own, lives on), each kill followed in turn by --continue,
// --abort or the same run again. After each, every commit of the branch is
// there with its id, HEAD on the branch, no rebase under way, no lock
// left, and the user's untracked file intact. Then the same with --fix
// and a fixer that repairs commit 3 of 5: the branch is as it was or as
// the finished fix leaves it.
func TestKilledVerifyCommitsLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real runs for several seconds")
	}
	dir := gittest.Init(t)
	gittest.Git(t, dir, "tag", "base")
	for i := 1; i <= 12; i++ {
		write(t, filepath.Join(dir, fmt.Sprint("f", i)), "x\n")
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprint("c", i))
	}
	write(t, filepath.Join(dir, "MYNOTES.txt"), "my notes\n")
	want := gittest.Git(t, dir, "rev-list", "base..main")
	// --force: every run rebases, the gate at every commit; slow at c6,
	// as a real gate is, for a killed run's gate to outlive the kill.
	gate := "if [ -e f6 ] && [ ! -e f7 ]; then sleep 0.4; else sleep 0.05; fi"
	run := []string{"verify-commits", "--force", "--exec", gate, "base..HEAD"}
	t0 := time.Now()
	if code, out := runCrucibleUntil(t, dir, nil, run...); code != 0 {
		t.Fatalf("a clean run exited %d:\n%s", code, out)
	}
	walk := time.Since(t0)
	rng := rand.New(rand.NewPCG(22, 22))
	check := func(k int, what string) {
		t.Helper()
		if got := gittest.Git(t, dir, "rev-list", "base..main"); got != want {
			t.Fatalf("kill %d, then %s: the branch is\n%s\nwant\n%s", k, what, got, want)
		}
		assertSettled(t, dir, k, what, "## main\n?? MYNOTES.txt")
		if b, err := os.ReadFile(filepath.Join(dir, "MYNOTES.txt")); string(b) != "my notes\n" {
			t.Fatalf("kill %d, then %s: the user's file is %q, %v", k, what, b, err)
		}
	}
	for k := range 30 {
		killVerifyCommits(t, dir, k, time.Duration(rng.Int64N(int64(walk))), run)
		what := recoverVerifyCommits(t, dir, k, run)
		check(k, what)
	}
}

// killVerifyCommits starts git-crucible args in dir and SIGKILLs it after
// delay: the git-crucible process alone when k is even, its process group
// when k is odd.
func killVerifyCommits(t *testing.T, dir string, k int, delay time.Duration, args []string) {
	t.Helper()
	cmd := exec.Command("git-crucible", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay)
	pid := cmd.Process.Pid
	if k%2 == 1 {
		pid = -pid
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Logf("kill %d after %v came too late:\n%s", k, delay, out.String())
	}
}

// recoverVerifyCommits runs, after kill k, --continue, --abort or run
// again, in turn, and fails unless it succeeds. With no run interrupted
// (killed before its rebase, or after it), --continue and --abort say so.
func recoverVerifyCommits(t *testing.T, dir string, k int, run []string) string {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, ".git", "crucible-verify-commits"))
	interrupted := err == nil
	args := [][]string{{"verify-commits", "--continue"}, {"verify-commits", "--abort"}, run}[k%3]
	what := strings.Join(args, " ")
	code, out := runCrucibleUntil(t, dir, nil, args...)
	switch {
	case !interrupted && k%3 != 2:
		if code != 1 || !strings.Contains(out, "error: no interrupted verify-commits run in this worktree\n") {
			t.Fatalf("kill %d, no run interrupted, then %s: exit %d\n%s", k, what, code, out)
		}
	case code != 0:
		t.Fatalf("kill %d, then %s: exit %d\n%s", k, what, code, out)
	}
	return what
}

// assertSettled fails unless dir has no rebase under way, no run's marker
// and no lock held or left, and git status says status.
func assertSettled(t *testing.T, dir string, k int, what, status string) {
	t.Helper()
	git := filepath.Join(dir, ".git")
	for _, name := range []string{"rebase-merge", "rebase-apply", "index.lock", "HEAD.lock", "refs/heads/main.lock", "crucible-verify-commits"} {
		if _, err := os.Stat(filepath.Join(git, name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("kill %d, then %s: .git/%s is left (%v)", k, what, name, err)
		}
	}
	unlock, err := fsutil.TryLock(filepath.Join(git, "crucible-verify-commits.lock"), nil)
	if err != nil {
		t.Fatalf("kill %d, then %s: the worktree's lock: %v", k, what, err)
	}
	unlock()
	if st := gittest.Git(t, dir, "status", "--porcelain", "-b"); st != status {
		t.Fatalf("kill %d, then %s: git status says\n%s\nwant\n%s", k, what, st, status)
	}
	if st := gittest.Git(t, dir, "status"); strings.Contains(st, "rebase") {
		t.Fatalf("kill %d, then %s: git status says\n%s", k, what, st)
	}
}
