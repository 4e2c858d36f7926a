package gitext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// ours signs the reflog entries MoveRef writes itself; git signs its own
// with the committer (Ada Tester), which tells the two paths apart.
const ours = "Here Tester <here@example.com> 1795341600 +0000"

// lastLog is the last line of ref's reflog.
func lastLog(t *testing.T, dir, ref string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".git", "logs", filepath.FromSlash(ref)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	return lines[len(lines)-1]
}

// xRef is the ref the tests move, made by movableRepo.
const xRef = "refs/notes/x"

// movableRepo is a repository with RefsHere, two commits, and xRef made
// by git at the first.
func movableRepo(t *testing.T) (r *Repo, dir, c1, c2 string) {
	t.Helper()
	r, dir = openRepo(t)
	r.RefsHere = true
	c1 = gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	c2 = gittest.Git(t, dir, "rev-parse", "HEAD")
	if err := r.UpdateRefs(context.Background(), "test: create", RefUpdate{Name: xRef, New: c1}); err != nil {
		t.Fatal(err)
	}
	return r, dir, c1, c2
}

// TestMoveRef: a loose ref moves in process as git would move it — git
// reads the value, the reflog line is git's, nothing is left beside the
// ref — and a stale old value loses the race with nothing changed.
func TestMoveRef(t *testing.T) {
	r, dir, c1, c2 := movableRepo(t)
	ctx := context.Background()
	const ref = xRef
	if !r.MovableHere(ref) {
		t.Fatal("a loose ref in a plain repository is not movable here")
	}
	if err := r.MoveRef(ctx, "test:  here\n", ours, RefUpdate{Name: ref, Old: c1, New: c2}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "rev-parse", ref); got != c2 {
		t.Fatalf("git reads %s", got)
	}
	if got, want := lastLog(t, dir, ref), c1+" "+c2+" "+ours+"\ttest: here"; got != want {
		t.Fatalf("reflog line %q, want %q", got, want)
	}
	if got := gittest.Git(t, dir, "reflog", "show", "--format=%gs", ref); got != "test: here\ntest: create" {
		t.Fatalf("git reads the reflog as %q", got)
	}
	entries, err := os.ReadDir(filepath.Join(dir, ".git", "refs", "notes"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("beside the ref: %v, %v", entries, err)
	}
	err = r.MoveRef(ctx, "test: stale", ours, RefUpdate{Name: ref, Old: c1, New: c1})
	if !errors.Is(err, ErrRefChanged) {
		t.Fatalf("stale old value: %v, want ErrRefChanged", err)
	}
	if got := gittest.Git(t, dir, "rev-parse", ref); got != c2 || !strings.Contains(lastLog(t, dir, ref), "test: here") {
		t.Fatalf("a lost race moved the ref to %s or logged it", got)
	}
	gittest.Git(t, dir, "fsck", "--no-progress")
}

// TestMoveRefLeavesToGit: whatever git would do beyond lock, compare, log
// and rename is git's to do, and the move still happens (or fails as git
// fails it).
func TestMoveRefLeavesToGit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, r *Repo, dir string)
		fails   bool
		movable bool // the ref is; what git must do is about the new value
	}{
		{name: "not asked for", setup: func(t *testing.T, r *Repo, dir string) {
			r.RefsHere = false
		}},
		{name: "packed ref", setup: func(t *testing.T, r *Repo, dir string) {
			gittest.Git(t, dir, "pack-refs", "--all", "--prune")
		}},
		{name: "reference-transaction hook", setup: func(t *testing.T, r *Repo, dir string) {
			hook := filepath.Join(dir, ".git", "hooks", "reference-transaction")
			if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"$1\" >>\"$(git rev-parse --git-dir)/ran\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "shared repository", setup: func(t *testing.T, r *Repo, dir string) {
			gittest.Git(t, dir, "config", "core.sharedRepository", "group")
		}},
		{name: "fsync", setup: func(t *testing.T, r *Repo, dir string) {
			gittest.Git(t, dir, "config", "core.fsync", "reference")
		}},
		{name: "hooks elsewhere", setup: func(t *testing.T, r *Repo, dir string) {
			gittest.Git(t, dir, "config", "core.hooksPath", "elsewhere")
		}},
		{name: "no reflogs of ours", setup: func(t *testing.T, r *Repo, dir string) {
			r.NoReflogs = true
		}},
		{name: "new value not loose", movable: true, setup: func(t *testing.T, r *Repo, dir string) {
			gittest.Git(t, dir, "repack", "-q", "-a", "-d")
		}},
		{name: "quarantine", fails: true, setup: func(t *testing.T, r *Repo, dir string) {
			t.Setenv("GIT_QUARANTINE_PATH", filepath.Join(dir, ".git", "objects"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir, c1, c2 := movableRepo(t)
			ctx := context.Background()
			const ref = xRef
			tc.setup(t, r, dir)
			if r.MovableHere(ref) != tc.movable {
				t.Errorf("movable here: %v", !tc.movable)
			}
			err := r.MoveRef(ctx, "test: moved", ours, RefUpdate{Name: ref, Old: c1, New: c2})
			got := gittest.Git(t, dir, "rev-parse", ref)
			if tc.fails {
				if err == nil || got != c1 {
					t.Fatalf("moved to %s (%v), want git's refusal", got, err)
				}
				return
			}
			if err != nil || got != c2 {
				t.Fatalf("moved to %s, %v", got, err)
			}
			if log := lastLog(t, dir, ref); strings.Contains(log, ours) || !strings.HasSuffix(log, "\ttest: moved") {
				t.Fatalf("reflog %q: not git's", log)
			}
			if ran, err := os.ReadFile(filepath.Join(dir, ".git", "ran")); tc.name == "reference-transaction hook" && !strings.Contains(string(ran), "committed") {
				t.Fatalf("the hook saw %q (%v)", ran, err)
			}
		})
	}
}

// TestMoveRefRaces: writers in process and git's update-ref, each adding a
// commit on top of the ref's tip by compare-and-swap, lose no commit.
func TestMoveRefRaces(t *testing.T) {
	r, dir := openRepo(t)
	r.RefsHere = true
	ctx := context.Background()
	const ref = "refs/notes/chain"
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	if err := r.UpdateRefs(ctx, "test: create", RefUpdate{Name: ref, New: base}); err != nil {
		t.Fatal(err)
	}
	const perWriter = 15
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				errs <- RetryCAS(ctx, func() error {
					tip, err := r.ReadRef(ref)
					if err != nil {
						return err
					}
					c := Commit{Tree: tree, Parents: []string{tip}, Author: ours, Committer: ours, Message: fmt.Sprintf("here %d %d\n", w, i)}
					oid, err := r.WriteObject("commit", c.Encode())
					if err != nil {
						return err
					}
					return r.MoveRef(ctx, "test: here", ours, RefUpdate{Name: ref, Old: tip, New: oid})
				})
			}
		}()
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; {
				git := func(args ...string) (string, error) {
					out, err := exec.Command("git", args...).Output()
					return strings.TrimSpace(string(out)), err
				}
				tip, err := git("rev-parse", ref)
				if err != nil {
					errs <- err
					return
				}
				oid, err := git("commit-tree", "-p", tip, "-m", fmt.Sprintf("git %d %d", w, i), tree)
				if err != nil {
					errs <- err
					return
				}
				if _, err := git("update-ref", "-m", "test: git", ref, oid, tip); err == nil {
					i++
				}
			}
		}()
	}
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := gittest.Git(t, dir, "rev-list", "--count", ref); got != fmt.Sprint(1+6*perWriter) {
		t.Fatalf("%s commits on the chain, want %d", got, 1+6*perWriter)
	}
	if got := gittest.Git(t, dir, "reflog", "show", "--format=%gs", ref); strings.Count(got, "\n")+1 != 1+6*perWriter {
		t.Fatalf("%d reflog entries, want %d", strings.Count(got, "\n")+1, 1+6*perWriter)
	}
}
