package taskrun

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
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
			commits, head, err := CommitLevel(context.Background(), r, base, res, func(r Result) string {
				return "task " + r.ID + "\n\nCrucible-Pipeline: p1\n"
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
