package taskdag

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

func TestCommitLevel(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			r, _ := repo(t, format)
			if err := os.WriteFile("keep.txt", []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, ".", "add", ".")
			gittest.Git(t, ".", "commit", "-q", "-m", "keep")
			base := gittest.Git(t, ".", "rev-parse", "HEAD")
			runner := New(r, 2, func(_ context.Context, job Job, dir string) ([]byte, error) {
				switch job.Task.ID {
				case "add":
					os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
				case "edit":
					os.WriteFile(filepath.Join(dir, "base.txt"), []byte("edited\n"), 0o644)
				case "delete":
					os.Remove(filepath.Join(dir, "keep.txt"))
				case "broken":
					os.WriteFile(filepath.Join(dir, "broken.txt"), nil, 0o644)
					return []byte("status: failed\nerror: no\n"), nil
				}
				return []byte(completed), nil
			})
			res, err := runner.RunLevel(context.Background(), base, jobs("add", "broken", "explore", "edit", "delete"))
			if err != nil {
				t.Fatal(err)
			}
			commits, head, err := runner.CommitLevel(context.Background(), base, Units(PerTask, nil, res), func(u Unit) string {
				return "task " + u.Results[0].ID + "\n\nCrucible-Pipeline: p1\n"
			})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range commits {
				ids = append(ids, c.Task)
				if (c.SHA == "") != (c.Task == "explore") {
					t.Fatalf("commit %+v", c)
				}
			}
			if !reflect.DeepEqual(ids, []string{"add", "explore", "edit", "delete"}) {
				t.Fatalf("committed %q", ids)
			}
			if got := gittest.Git(t, ".", "log", "--format=%s", base+".."+head); got != "task delete\ntask edit\ntask add" {
				t.Fatalf("log:\n%s", got)
			}
			if got := gittest.Git(t, ".", "log", "-1", "--format=%(trailers:key=Crucible-Pipeline,valueonly)", head); got != "p1" {
				t.Fatalf("trailer %q", got)
			}
			for commit, want := range map[string]string{
				commits[0].SHA: "a.txt\nbase.txt\nkeep.txt",
				commits[2].SHA: "a.txt\nbase.txt\nkeep.txt",
				head:           "a.txt\nbase.txt",
			} {
				if got := gittest.Git(t, ".", "ls-tree", "--name-only", commit); got != want {
					t.Fatalf("%s holds %q, want %q", commit, got, want)
				}
			}
			if got := gittest.Git(t, ".", "show", head+":base.txt"); got != "edited" {
				t.Fatalf("base.txt at head: %q", got)
			}
			if got := gittest.Git(t, ".", "show", commits[0].SHA+":base.txt"); got != "base" {
				t.Fatalf("base.txt after add: %q", got)
			}
		})
	}
}

func TestUnits(t *testing.T) {
	results := []Result{
		{ID: "a", Passed: true, Changed: []string{"shared", "a.go"}},
		{ID: "b", Passed: true, Changed: []string{"b.go"}},
		{ID: "x", Passed: false, Changed: []string{"shared", "x.go"}},
		{ID: "c", Passed: true, Changed: []string{"shared"}},
		{ID: "e", Passed: true},
		{ID: "d", Passed: true, Changed: []string{"d.go"}},
	}
	groups := map[string]string{"a": "g1", "c": "g1", "d": "g2", "e": "g2"}
	show := func(units []Unit) string {
		var b strings.Builder
		for _, u := range units {
			for i, r := range u.Results {
				fmt.Fprintf(&b, "%s%v", r.ID, u.Paths[i])
			}
			b.WriteString(" | ")
		}
		return b.String()
	}
	for _, c := range []struct{ strategy, want string }{
		{PerTask, "a[a.go] | b[b.go] | c[shared] | e[] | d[d.go] | "},
		{"", "a[a.go] | b[b.go] | c[shared] | e[] | d[d.go] | "},
		{Grouped, "a[a.go]c[shared] | b[b.go] | e[]d[d.go] | "},
		{Single, "a[a.go]b[b.go]c[shared]e[]d[d.go] | "},
	} {
		if got := show(Units(c.strategy, func(id string) string { return groups[id] }, results)); got != c.want {
			t.Errorf("%s: %s, want %s", c.strategy, got, c.want)
		}
	}
	// A shared path goes to the last task; a unit left with none is empty.
	units := Units(PerTask, nil, []Result{{ID: "a", Passed: true, Changed: []string{"f"}}, {ID: "b", Passed: true, Changed: []string{"f"}}})
	if !units[0].empty() || units[1].empty() {
		t.Fatalf("units %+v", units)
	}
}

// TestCommitLevelGrouped: a group's tasks share one commit holding each
// one's paths from its own tree; a unit whose paths all went to a later
// task makes no commit, its task recording "".
func TestCommitLevelGrouped(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			r, _ := repo(t, format)
			base := gittest.Git(t, ".", "rev-parse", "HEAD")
			runner := New(r, 2, func(_ context.Context, job Job, dir string) ([]byte, error) {
				os.WriteFile(filepath.Join(dir, job.Task.ID+".txt"), []byte(job.Task.ID+"\n"), 0o644)
				if job.Task.ID == "solo" {
					return []byte(completed), nil
				}
				os.WriteFile(filepath.Join(dir, "shared.txt"), []byte(job.Task.ID+"\n"), 0o644)
				return []byte("status: completed\nfiles-modified: []\ndeviations:\n  - type: files_not_in_plan\n    description: shared.txt\n"), nil
			})
			res, err := runner.RunLevel(context.Background(), base, jobs("g1", "solo", "g2", "late"))
			if err != nil {
				t.Fatal(err)
			}
			res[3].Changed = []string{"shared.txt"} // late: shared.txt only, so g1 and g2 lose it
			group := func(id string) string { return map[string]string{"g1": "g", "g2": "g"}[id] }
			commits, head, err := runner.CommitLevel(context.Background(), base, Units(Grouped, group, res), func(u Unit) string {
				return strings.Join(u.Tasks(), "+") + "\n"
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := gittest.Git(t, ".", "log", "--format=%s", base+".."+head); got != "late\nsolo\ng1+g2" {
				t.Fatalf("log:\n%s", got)
			}
			want := []string{"g1", "g2", "solo", "late"}
			for i, c := range commits {
				if c.Task != want[i] {
					t.Fatalf("commits %+v", commits)
				}
			}
			if commits[0].SHA != commits[1].SHA || commits[0].SHA == commits[2].SHA || commits[3].SHA != head {
				t.Fatalf("commits %+v", commits)
			}
			if got := gittest.Git(t, ".", "diff-tree", "-r", "--name-only", "--no-commit-id", commits[0].SHA); got != "g1.txt\ng2.txt" {
				t.Fatalf("the group's commit changes %q", got)
			}
			if got := gittest.Git(t, ".", "show", head+":shared.txt"); got != "late" {
				t.Fatalf("shared.txt: %q", got)
			}
			// All of the level in one commit, and a level whose only
			// paths went elsewhere: no commit, "" for its task.
			_, single, err := runner.CommitLevel(context.Background(), base, Units(Single, nil, res), func(u Unit) string { return "level\n" })
			if err != nil {
				t.Fatal(err)
			}
			if got := gittest.Git(t, ".", "rev-list", "--count", base+".."+single); got != "1" {
				t.Fatalf("single: %s commits", got)
			}
			if gittest.Git(t, ".", "rev-parse", single+"^{tree}") != gittest.Git(t, ".", "rev-parse", head+"^{tree}") {
				t.Fatal("single's tree is not the per-unit commits' end")
			}
			empty := Units(PerTask, nil, []Result{res[0], res[3]})
			empty[0].Paths[0] = nil
			commits, _, err = runner.CommitLevel(context.Background(), base, empty[:1], func(Unit) string { return "none\n" })
			if err != nil || len(commits) != 1 || commits[0].SHA != "" {
				t.Fatalf("empty unit: %+v, %v", commits, err)
			}
		})
	}
}
