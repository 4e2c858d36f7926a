package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestKilledVerifyCommitsLosesNothing SIGKILLs verify-commits 30 times at
// seeded random moments of a rebase over 12 commits, a merged topic of 2
// and its merge (the git-crucible
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
	commit := func(name string) {
		write(t, filepath.Join(dir, name), "x\n")
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", name)
	}
	// 12 commits on main, a topic of 2 forked at the 4th merged after the
	// 10th: the rebase resets and merges as well as picks.
	for i := 1; i <= 12; i++ {
		commit(fmt.Sprint("f", i))
		switch i {
		case 4:
			gittest.Git(t, dir, "branch", "topic")
		case 8:
			gittest.Git(t, dir, "checkout", "-q", "topic")
			commit("t1")
			commit("t2")
			gittest.Git(t, dir, "checkout", "-q", "main")
		case 10:
			gittest.Git(t, dir, "merge", "-q", "--no-ff", "-m", "merge topic", "topic")
		}
	}
	gittest.Git(t, dir, "branch", "-D", "topic")
	write(t, filepath.Join(dir, "MYNOTES.txt"), "my notes\n")
	want := gittest.Git(t, dir, "rev-list", "base..main")
	// --force: every run rebases, the gate at every commit; slow at c6,
	// as a real gate is, for a killed run's gate to outlive the kill.
	gate := "if [ -e f6 ] && [ ! -e f7 ]; then sleep 0.4; else sleep 0.05; fi"
	run := []string{"verify-commits", "--force", "--exec", gate, "base..HEAD"}
	walk, _, _ := cleanRun(t, dir, run...)
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
		what, _ := recoverVerifyCommits(t, dir, k, run, 0)
		check(k, what)
	}
}

// TestKilledVerifyCommitsFixLosesNothing SIGKILLs verify-commits --fix at
// seeded random moments of its fix of commit 3 of 5 (the scripted fixer
// defines what it uses), each kill followed in turn by --continue, --abort
// or the fix run again, the branch put back at its broken tip before each
// kill. After each, the branch is as it was, every commit with its id, or
// as the finished fix leaves it: the first two commits with their ids, the
// others with the fix's trees and messages. No rebase is under way, no
// lock is left, the user's untracked file is intact; the fix run again
// always ends fixed.
func TestKilledVerifyCommitsFixLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real runs for several seconds")
	}
	dir := gittest.Init(t)
	gittest.Git(t, dir, "tag", "base")
	// The stack of testdata/script/verify_commits_fix.txtar: c3 uses
	// gamma, which only c4 defines.
	for i, files := range [][2]string{{"a.def", "def alpha"}, {"b.def", "def beta"}, {"c.code", "use gamma"}, {"c.def", "def gamma"}, {"d.code", "use beta"}} {
		write(t, filepath.Join(dir, files[0]), files[1]+"\n")
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprint("c", i+1), "-m", fmt.Sprintf("Crucible-Task: %d", i+1))
	}
	tmp := t.TempDir()
	gate := filepath.Join(tmp, "gate.sh")
	write(t, gate, "sleep 0.03\nfor use in $(cat *.code 2>/dev/null | sed -n 's/^use //p'); do\n"+
		"\tcat *.def | grep -qx \"def $use\" || exit 1\ndone\n")
	scripted, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agent", "scripted"))
	if err != nil {
		t.Fatal(err)
	}
	// testdata/agent/scenarios/fixstack's fixer, slow to write its fix as
	// a real one is: killed, it must not write it after the recovery.
	scenario := filepath.Join(tmp, "fixstack-slow")
	write(t, scenario, "[fixer]\nsleep 0.2\nappend b.def\ndef gamma\n.\nreport\nstatus: completed\nfiles-modified: [b.def]\n"+
		"verification-summary: gamma is defined where it is first used\ndeviations: []\n.\n")
	gittest.Git(t, dir, "config", "crucible.agent.scripted.kind", "command")
	for _, word := range []string{"sh", scripted, "--scenario", scenario} {
		gittest.Git(t, dir, "config", "--add", "crucible.agent.scripted.command", word)
	}
	gittest.Git(t, dir, "config", "crucible.role.fixer", "scripted")
	write(t, filepath.Join(dir, "MYNOTES.txt"), "my notes\n")
	broken := gittest.Git(t, dir, "rev-parse", "HEAD")
	brokenIDs := gittest.Git(t, dir, "rev-list", "base..main")
	stack := func() string {
		return gittest.Git(t, dir, "log", "--format=%T %B", "base..main")
	}
	brokenStack := stack()
	// --force: every run tests the broken stack before it fixes it.
	run := []string{"verify-commits", "--fix", "--force", "--exec", "sh " + gate, "base..HEAD"}
	walk, _, out := cleanRun(t, dir, run...)
	if !strings.Contains(out, "fixed ") {
		t.Fatalf("a clean fix fixed nothing:\n%s", out)
	}
	fixedStack := stack()
	firstTwo := gittest.Git(t, dir, "rev-list", "base..main~3")
	if fixedStack == brokenStack {
		t.Fatal("the clean fix changed nothing")
	}
	rng := rand.New(rand.NewPCG(22, 23))
	for k := range 12 {
		gittest.Git(t, dir, "reset", "-q", "--hard", broken)
		killVerifyCommits(t, dir, k, time.Duration(rng.Int64N(int64(walk))), run)
		what, code := recoverVerifyCommits(t, dir, k, run, 1)
		switch st := stack(); {
		case st == brokenStack:
			if ids := gittest.Git(t, dir, "rev-list", "base..main"); ids != brokenIDs {
				t.Fatalf("kill %d, then %s: the broken stack has the ids\n%s\nwant\n%s", k, what, ids, brokenIDs)
			}
			if k%3 == 2 {
				t.Fatalf("kill %d, then %s (exit %d): the stack is not fixed", k, what, code)
			}
		case st == fixedStack:
			if ids := gittest.Git(t, dir, "rev-list", "base..main~3"); ids != firstTwo {
				t.Fatalf("kill %d, then %s: the commits before the fixed one are\n%s\nwant\n%s", k, what, ids, firstTwo)
			}
		default:
			t.Fatalf("kill %d, then %s: the stack is\n%s\nwant as it was:\n%s\nor fixed:\n%s", k, what, st, brokenStack, fixedStack)
		}
		assertSettled(t, dir, k, what, "## main\n?? MYNOTES.txt")
		if b, err := os.ReadFile(filepath.Join(dir, "MYNOTES.txt")); string(b) != "my notes\n" {
			t.Fatalf("kill %d, then %s: the user's file is %q, %v", k, what, b, err)
		}
	}
}

// killVerifyCommits runs git-crucible args in dir and SIGKILLs it after
// delay: the git-crucible process alone when k is even, its process group
// when k is odd.
func killVerifyCommits(t *testing.T, dir string, k int, delay time.Duration, args []string) {
	t.Helper()
	group, alone := time.After(delay), (<-chan time.Time)(nil)
	if k%2 == 0 {
		group, alone = nil, group
	}
	if code, out := runCrucibleKilled(t, dir, group, alone, args...); code == 0 {
		t.Logf("kill %d after %v came too late:\n%s", k, delay, out)
	}
}

// recoverVerifyCommits runs, after kill k, --continue, --abort or run
// again, in turn, and fails unless it exits 0 (--continue: or failing,
// exit up to the given one). With no run interrupted (killed before its
// rebase, or after it), --continue and --abort say so. It returns what ran
// and its exit status.
func recoverVerifyCommits(t *testing.T, dir string, k int, run []string, failing int) (string, int) {
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
	case code != 0 && (k%3 != 0 || code > failing || !strings.Contains(out, " fails the gate (exit ")):
		t.Fatalf("kill %d, then %s: exit %d\n%s", k, what, code, out)
	}
	return what, code
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
