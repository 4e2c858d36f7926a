package record

import (
	"context"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// A level's commits get one provenance line per task (two tasks of a
// group share a commit) when the level is seen, none before; seeing the
// level again, as a resumed run would, changes nothing.
func TestTaskProvenance(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	repo := e.Service.Repo
	group := gittest.Git(t, ".", "commit-tree", "-p", "HEAD", "-m", "group", "HEAD^{tree}")
	solo := gittest.Git(t, ".", "commit-tree", "-p", group, "-m", "solo", "HEAD^{tree}")
	prov := &provenance{e: e, phase: 1, role: "implementer", number: map[string]int{"a": 1, "b": 2, "c": 3, "x": 4}, made: map[string][]int{}}
	level := func() string {
		for _, ev := range []taskdag.Event{
			{Task: "x", Status: manifest.Failed, Level: 1},
			{Task: "a", Status: manifest.Committed, CommitSHA: group, Level: 1},
			{Task: "b", Status: manifest.Committed, CommitSHA: group, Level: 1},
			{Task: "c", Status: manifest.Committed, CommitSHA: solo, Level: 1},
			{Task: "e", Status: manifest.Committed, Level: 1}, // changed nothing
		} {
			if err := prov.saw(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		if len(prov.made) != 2 {
			t.Fatalf("made %v", prov.made)
		}
		if err := prov.saw(ctx, taskdag.Event{Level: 1, Boundary: "HEAD", Head: solo}); err != nil {
			t.Fatal(err)
		}
		tip, err := repo.ReadRef(notes.ProvenanceRef)
		if err != nil {
			t.Fatal(err)
		}
		return tip
	}
	first := level()
	for commit, tasks := range map[string]string{group: `"task":1 "task":2`, solo: `"task":3`} {
		note, ok, err := notes.Read(ctx, repo, notes.ProvenanceRef, commit)
		if err != nil || !ok {
			t.Fatalf("no note on %s: %v", commit, err)
		}
		lines := strings.Split(strings.TrimSpace(string(note)), "\n")
		want := strings.Fields(tasks)
		if len(lines) != len(want) {
			t.Fatalf("note on %s:\n%s", commit, note)
		}
		for i, l := range lines {
			if !strings.Contains(l, want[i]) || !strings.Contains(l, `"pipeline":"`+e.ID+`"`) || !strings.Contains(l, `"phase":1`) {
				t.Fatalf("note on %s:\n%s", commit, note)
			}
		}
	}
	if again := level(); again != first {
		t.Fatalf("the notes ref moved from %s to %s on a second sight", first, again)
	}
}
