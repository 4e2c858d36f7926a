package leftover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
)

func TestPlan(t *testing.T) {
	engine := &pipeline.Holder{Pid: 42, Command: "git-crucible run"}
	slot := func(dirty bool) *Found {
		return &Found{Top: "/w", Slots: []Slot{{N: 1, Path: "/w/.crucible/slots/slot-1", Commit: "c1", Dirty: dirty}}}
	}
	dir := func(report bool) *Found {
		return &Found{Top: "/w", AgentDirs: []AgentDir{{Path: "/w/.crucible/runs/p/d", Pipeline: "p", Report: report}}}
	}
	backup := func(on, elsewhere bool) *Found {
		return &Found{Top: "/w", Backups: []Backup{{Branch: "backup-x-pre-dispatch", Of: "x", Commit: "c2", OnBranch: on, Elsewhere: elsewhere}}}
	}
	none := Holders{Branch: "main"}
	for _, tc := range []struct {
		name   string
		found  *Found
		h      Holders
		force  bool
		want   string // kind name remove reason (force) (lost)
		refuse bool
	}{
		{"clean slot", slot(false), none, false, "slot .crucible/slots/slot-1 remove", false},
		{"dirty slot kept", slot(true), none, false, "slot .crucible/slots/slot-1 keep it has changes that are not on the branch: an agent's unfinished work, maybe (force)", false},
		{"dirty slot forced", slot(true), none, true, "slot .crucible/slots/slot-1 remove it has changes that are not on the branch: an agent's unfinished work, maybe (force)", false},
		{"slot of a running engine", slot(false), Holders{Branch: "main", Here: engine}, true, "", true},
		{"backup only, engine here", backup(true, true), Holders{Branch: "main", Here: engine}, false, "backup backup-x-pre-dispatch remove", false},
		{"agent dir", dir(false), none, false, "agent-dir .crucible/runs/p/d remove", false},
		{"agent dir with a report", dir(true), none, false, "agent-dir .crucible/runs/p/d keep it holds an agent's report, which resuming pipeline p takes (force)", false},
		{"agent dir with a report forced", dir(true), none, true, "agent-dir .crucible/runs/p/d remove it holds an agent's report, which resuming pipeline p takes (force)", false},
		{"agent dir of a running pipeline", dir(false), Holders{Pipelines: map[string]*pipeline.Holder{"p": engine}}, true, "agent-dir .crucible/runs/p/d keep pipeline p's engine, 'git-crucible run' (pid 42), is running", false},
		{"backup on its branch", backup(true, true), none, false, "backup backup-x-pre-dispatch remove", false},
		{"backup elsewhere", backup(false, true), none, false, "backup backup-x-pre-dispatch keep its commit is not on branch 'x' (force)", false},
		{"backup elsewhere forced", backup(false, true), none, true, "backup backup-x-pre-dispatch remove its commit is not on branch 'x' (force)", false},
		{"backup alone", backup(false, false), none, false, "backup backup-x-pre-dispatch keep its commit is on no other branch or ref: removing it would lose the commit (force)", false},
		{"backup alone forced", backup(false, false), none, true, "backup backup-x-pre-dispatch remove its commit is on no other branch or ref: removing it would lose the commit (force) (lost)", false},
		{"backup of a running branch", backup(true, true), Holders{Branches: map[string]*pipeline.Holder{"x": engine}}, true, "backup backup-x-pre-dispatch keep 'git-crucible run' (pid 42) is running on branch 'x'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := Plan(tc.found, tc.h, tc.force)
			var held *HeldError
			if tc.refuse {
				if !errors.As(err, &held) || err.Error() != "branch 'main' is in use by 'git-crucible run' (pid 42): its slots and agent directories are its work" {
					t.Fatalf("got %v, %v; want it refused", items, err)
				}
				return
			}
			if err != nil || len(items) != 1 {
				t.Fatalf("got %v, %v", items, err)
			}
			if got := describe(items[0]); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func describe(it Item) string {
	s := it.Kind + " " + it.Name + " " + map[bool]string{true: "remove", false: "keep"}[it.Remove]
	if it.Reason != "" {
		s += " " + it.Reason
	}
	if it.Force {
		s += " (force)"
	}
	if it.Lost {
		s += " (lost)"
	}
	return s
}

// TestFindAndClean: with real git, Find tells a slot whose staged work is
// on the branch from one whose is not and from one with untracked files,
// and the backups by where their commits are; Clean removes what the plan
// says and git worktree list is back to one line.
func TestFindAndClean(t *testing.T) {
	gittest.Hermetic(t)
	ctx := context.Background()
	dir := gittest.Init(t)
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Chdir(t, dir)
	repo, err := gitext.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pool := taskdag.Slots(repo)
	for n := 1; n <= 3; n++ {
		s, err := pool.Hold(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Checkout(ctx, base); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Slot 1's work is committed on the branch; slot 2's is not; slot 3
	// has a file the engine never staged.
	write(filepath.Join(pool.Path(1), "a.txt"), "a\n")
	gittest.Git(t, pool.Path(1), "add", "-A")
	write(filepath.Join(dir, "a.txt"), "a\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "a")
	write(filepath.Join(pool.Path(2), "b.txt"), "b\n")
	gittest.Git(t, pool.Path(2), "add", "-A")
	write(filepath.Join(pool.Path(3), "c.txt"), "c\n")

	lost := gittest.Git(t, dir, "commit-tree", "-m", "lost", gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	gittest.Git(t, dir, "branch", "backup-main-pre-dispatch", base)
	gittest.Git(t, dir, "branch", "backup-gone-pre-dispatch", base)
	gittest.Git(t, dir, "branch", "backup-lost-pre-dispatch", lost)
	gittest.Git(t, dir, "branch", "not-a-backup", lost)
	gittest.Git(t, dir, "branch", "mine-pre-dispatch", lost)

	f, err := Find(ctx, repo, Options{Dirty: true, Reach: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Slots {
		got = append(got, filepath.Base(s.Path)+map[bool]string{true: " dirty", false: ""}[s.Dirty])
	}
	for _, b := range f.Backups {
		got = append(got, b.Branch+" of "+b.Of+map[bool]string{true: " on", false: ""}[b.OnBranch]+map[bool]string{true: " elsewhere", false: ""}[b.Elsewhere])
	}
	want := "slot-1|slot-2 dirty|slot-3 dirty|backup-gone-pre-dispatch of gone elsewhere|backup-lost-pre-dispatch of lost elsewhere|backup-main-pre-dispatch of main on elsewhere"
	if strings.Join(got, "|") != want {
		t.Fatalf("found\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}

	h, err := HoldersOf(repo, f)
	if err != nil {
		t.Fatal(err)
	}
	items, err := Plan(f, h, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Clean(ctx, repo, items); err != nil {
		t.Fatal(err)
	}
	if wt := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 3 {
		t.Errorf("after a clean, the dirty slots are left:\n%s", wt)
	}
	if b := gittest.Git(t, dir, "branch", "--list", "backup-*", "--format=%(refname:short)"); b != "backup-gone-pre-dispatch\nbackup-lost-pre-dispatch" {
		t.Errorf("backups left: %q", b)
	}
	if f, err = Find(ctx, repo, Options{Dirty: true, Reach: true}); err != nil {
		t.Fatal(err)
	}
	if items, err = Plan(f, h, true); err != nil {
		t.Fatal(err)
	}
	if _, err := Clean(ctx, repo, items); err != nil {
		t.Fatal(err)
	}
	if wt := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("after clean --force, worktrees are left:\n%s", wt)
	}
	if b := gittest.Git(t, dir, "branch", "--list", "backup-*"); b != "" {
		t.Errorf("after clean --force, backups are left: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".crucible")); !os.IsNotExist(err) {
		t.Errorf(".crucible is left: %v", err)
	}
}
