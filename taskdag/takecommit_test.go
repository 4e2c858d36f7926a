package taskdag

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// TestTakeCommit takes a CI job's task commit as a collector does, and
// refuses what a hostile remote's job could record: a commit on another
// parent, one whose message (its trailers) is not the task's, one that
// changed a file outside the task's plan unreported, one whose evidence
// file is not in its tree, an object that is not there.
func TestTakeCommit(t *testing.T) {
	r, base := repo(t, "sha1")
	dir := "."
	message := func(u Unit) string {
		return "Task " + u.Results[0].ID + "\n\nCrucible-Pipeline: p1\nCrucible-Task: 1\n"
	}
	task := manifest.Task{ID: "a", Files: []string{"a.txt"}}
	commit := func(parent, msg string, files map[string]string) string {
		t.Helper()
		gittest.Git(t, dir, "reset", "-q", "--hard", parent)
		gittest.Git(t, dir, "clean", "-fdq")
		for f, content := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gittest.Git(t, dir, "add", "-A")
		tree := gittest.Git(t, dir, "write-tree")
		return gittest.GitInput(t, dir, msg, "commit-tree", tree, "-p", parent, "-F", "-")
	}
	good := message(Unit{Results: []Result{{ID: "a"}}})
	other := commit(base, "elsewhere\n", map[string]string{"o.txt": "o\n"})
	evidence := "status: completed\nfiles-modified: [a.txt]\ndeviations: []\nverification-summary:\n  level: automated\n  evidence-files: [proof.txt]\n"
	for _, c := range []struct {
		name, commit, report, reason string
	}{
		{"good", commit(base, good, map[string]string{"a.txt": "a\n"}), completed, ""},
		{"parent", commit(other, good, map[string]string{"a.txt": "a\n"}), completed, "its parent is not " + base[:12]},
		{"message", commit(base, "Task a\n\nCrucible-Pipeline: p2\nCrucible-Task: 1\n", map[string]string{"a.txt": "a\n"}), completed, "its message is not the task's commit message"},
		{"outside", commit(base, good, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}), completed, "modified b.txt outside its plan"},
		{"evidence", commit(base, good, map[string]string{"a.txt": "a\n"}), evidence, "evidence file proof.txt is not in the work tree"},
		{"missing", strings.Repeat("1", 40), completed, "not a commit this clone has"},
	} {
		res, err := New(r, 1, nil).takeCommit(context.Background(), task, Finished{Commit: c.commit, Report: []byte(c.report), Status: "completed"}, base, message)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.reason == "" {
			if !res.Passed || res.Reason != "" || strings.Join(res.Changed, " ") != "a.txt" {
				t.Errorf("%s: %+v, want it passed, a.txt changed", c.name, res)
			}
			continue
		}
		if res.Passed || !strings.Contains(res.Reason, c.reason) {
			t.Errorf("%s: passed %v, %q; want it failed: %s", c.name, res.Passed, res.Reason, c.reason)
		}
	}
}
