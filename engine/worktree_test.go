package engine

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestWorkTreeOwnership: a path dirty before the walk, or made dirty
// between two dispatches, is the user's; what a dispatch changes is the
// engine's, but a user's file, which it leaves with a warning; a resumed
// walk knows it all; the marker is there while the walk holds the work
// tree; HEAD moved by a commit, or put on another branch, stops the walk.
func TestWorkTreeOwnership(t *testing.T) {
	e := newEngine(t, shAgent("true"))
	dir, ctx := e.Workdir, t.Context()
	write(t, filepath.Join(dir, "tracked.txt"), "v1\n")
	gittest.Git(t, dir, "add", "tracked.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "tracked")
	write(t, filepath.Join(dir, "before.txt"), "mine\n")

	hold := func() (*walker, func()) {
		t.Helper()
		w := &walker{e: e}
		release, err := w.holdWorkTree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return w, release
	}
	w, release := hold()
	if m, err := enforce.ReadEngineMarker(e.Service.Repo.GitDir); err != nil || m == nil || !m.Admits(w.wt.token) {
		t.Fatalf("no marker admitting the walk's token while it holds the work tree: %+v, %v", m, err)
	}
	// A dispatch: its agent adds new.txt, edits tracked.txt and the user's before.txt.
	if err := w.beforeDispatch(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	write(t, filepath.Join(dir, "tracked.txt"), "v2\n")
	write(t, filepath.Join(dir, "before.txt"), "the agent's\n")
	if err := w.settle(ctx); err != nil {
		t.Fatal(err)
	}
	// Between dispatches the user makes between.txt; the next dispatch changes nothing.
	write(t, filepath.Join(dir, "between.txt"), "mine too\n")
	if err := w.beforeDispatch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.settle(ctx); err != nil {
		t.Fatal(err)
	}
	if len(w.wt.warnings) != 1 || !strings.Contains(w.wt.warnings[0], "changed before.txt, which was yours") {
		t.Errorf("warnings %q", w.wt.warnings)
	}
	release()
	if m, _ := enforce.ReadEngineMarker(e.Service.Repo.GitDir); m != nil {
		t.Errorf("the marker outlives the walk: %+v", m)
	}

	w, release = hold() // a resumed walk
	defer release()
	got, err := w.engineChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"new.txt", "tracked.txt"}; !slices.Equal(got, want) {
		t.Errorf("the engine's changes %q, want %q", got, want)
	}
	if users := slices.Sorted(maps.Keys(w.wt.state.User)); !slices.Equal(users, []string{"before.txt", "between.txt"}) {
		t.Errorf("the user's paths %q", users)
	}

	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "another's")
	var moved *ForeignCommitError
	if err := w.checkHead(ctx); !errors.As(err, &moved) || moved.Subject != "another's" || moved.Branch != "" {
		t.Errorf("after another's commit: %v", err)
	}
	w.wt.head = gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "checkout", "-q", "-b", "other")
	if err := w.checkHead(ctx); !errors.As(err, &moved) || moved.Branch != "other" {
		t.Errorf("on another branch: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "between.txt")); string(b) != "mine too\n" {
		t.Errorf("between.txt: %q, %v", b, err)
	}
}

// TestPendingNote: a walk killed between the engine's commit and its note
// writes the note as it resumes; one killed before the commit writes none.
func TestPendingNote(t *testing.T) {
	e := newEngine(t, shAgent("true"))
	dir, ctx := e.Workdir, t.Context()
	for _, committed := range []bool{false, true} {
		w := &walker{e: e}
		release, err := w.holdWorkTree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		base := w.wt.head
		w.wt.state.Note = &pendingNote{Was: base, Parent: base, Line: `{"pipeline":"` + testID + `"}`}
		if err := writeJSON(w.workFile(), w.wt.state); err != nil {
			t.Fatal(err)
		}
		if committed {
			gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "the engine's")
		}
		release() // killed

		w = &walker{e: e}
		release, err = w.holdWorkTree(ctx)
		if err != nil {
			t.Fatal(err)
		}
		release()
		note, _ := exec.Command("git", "-C", dir, "notes", "--ref=crucible/provenance", "show", "HEAD").Output()
		if got := strings.Contains(string(note), testID); got != committed || w.wt.state.Note != nil {
			t.Errorf("committed %v: HEAD's note %q, pending %+v", committed, note, w.wt.state.Note)
		}
	}
}

// BenchmarkWorkTreeGuard is what the engine adds to a dispatch in the work
// tree to keep the user's files apart: HEAD checked, the work tree's
// state kept before it (git status, lstat of what is dirty) and compared
// after it, in a work tree of 200 tracked files and 20 untracked ones.
// Compare it with BenchmarkDispatch, the engine's own cost of a dispatch.
func BenchmarkWorkTreeGuard(b *testing.B) {
	e := newEngine(b, shAgent("true"))
	dir := e.Workdir
	for i := range 220 {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if i == 199 {
			gittest.Git(b, dir, "add", "-A")
			gittest.Git(b, dir, "commit", "-q", "-m", "tracked")
		}
	}
	w := &walker{e: e}
	release, err := w.holdWorkTree(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer release()
	for b.Loop() {
		if err := w.beforeDispatch(b.Context()); err != nil {
			b.Fatal(err)
		}
		if err := w.settle(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
