package gitext

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestWriteIndexTreeAsGit: the tree of an index written in process is git
// write-tree's, in each index version and object format, with entries
// added with intent to add, skipped the worktree, in subdirectories, of
// every mode; an index with an unmerged entry is git's to refuse.
func TestWriteIndexTreeAsGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		for _, version := range []string{"2", "3", "4"} {
			t.Run(format+"-v"+version, func(t *testing.T) {
				dir := formatDir(t, format)
				for _, p := range []string{"a.txt", "a-b", "a/b/c.txt", "a/b.txt", "z/deep/er/f", "exe"} {
					writeTestFile(t, filepath.Join(dir, p), p+"\n")
				}
				if err := os.Chmod(filepath.Join(dir, "exe"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
				gittest.Git(t, dir, "add", "-A")
				gittest.Git(t, dir, "commit", "-q", "-m", "base")
				writeTestFile(t, filepath.Join(dir, "later.txt"), "later\n")
				gittest.Git(t, dir, "add", "-N", "later.txt")
				gittest.Git(t, dir, "update-index", "--skip-worktree", "a.txt")
				gittest.Git(t, dir, "update-index", "--index-version", version)
				r := discoverIn(t, dir)
				data, err := os.ReadFile(filepath.Join(r.GitDir, "index"))
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := r.parseIndex(data); !ok {
					t.Fatal("the index is left to git")
				}
				got, err := r.WriteIndexTree(context.Background())
				if want := gittest.Git(t, dir, "write-tree"); err != nil || got != want {
					t.Fatalf("WriteIndexTree = %s, %v; git write-tree %s", got, err, want)
				}
				// Unmerged: git refuses it.
				blob := gittest.Git(t, dir, "rev-parse", "HEAD:a.txt")
				gittest.GitInput(t, dir, "100644 "+blob+" 1\tu.txt\n100644 "+blob+" 2\tu.txt\n", "update-index", "--index-info")
				if _, err := r.WriteIndexTree(context.Background()); err == nil {
					t.Fatal("an unmerged index made a tree")
				}
			})
		}
	}
}

// FuzzIndexTree: any index file (its checksum made right) is read without
// a panic; one read in process makes the tree git write-tree makes of it,
// and none git refuses, but for its checks of its cache of trees.
func FuzzIndexTree(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzIndexTree (indexes git wrote, their checksums cut: versions 2 to 4, both formats, extensions, unmerged).
	repos := fuzzRepos(f)
	f.Fuzz(func(t *testing.T, body []byte, sha256 bool) {
		r := &Repo{Format: map[bool]string{false: "sha1", true: "sha256"}[sha256]}
		h := r.newHash()
		h.Write(body)
		data := h.Sum(bytes.Clone(body))
		tree, ok, _, err := r.indexTree(data, func(kind string, data []byte) (string, error) { return r.HashObject(kind, data), nil })
		if !ok || err != nil {
			return
		}
		index := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(index, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "write-tree", "--missing-ok")
		// Objects of its own: git reads an index otherwise once it has the
		// trees an earlier input's write-tree wrote.
		cmd.Dir, cmd.Env = repos[sha256], append(os.Environ(), "GIT_INDEX_FILE="+index, "GIT_OBJECT_DIRECTORY="+t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, gerr := cmd.Output()
		if gerr != nil && strings.Contains(stderr.String(), "cache-tree") {
			return // git checks its cache of trees (the TREE extension), which we do not read
		}
		if gerr != nil || strings.TrimSpace(string(out)) != tree {
			t.Fatalf("we make %s, git write-tree %q (%v: %s)", tree, out, gerr, stderr.String())
		}
	})
}

// TestWriteIndexTreeRefusesDotGit: an index written by hand with a path
// git would not check out makes no tree, whether read in process or left
// to git write-tree (which takes it).
func TestWriteIndexTreeRefusesDotGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		for _, c := range []struct{ staged, forged string }{
			{"xgit/hooks/pre-commit", ".git/hooks/pre-commit"},
			{"d/XGIT/config", "d/.GIT/config"},
			{"d/xgit. /config", "d/.git. /config"},
			{"d/xxx/f", "d/../f"},
		} {
			t.Run(format+"/"+c.forged, func(t *testing.T) {
				dir := formatDir(t, format)
				writeTestFile(t, filepath.Join(dir, c.staged), "x\n")
				gittest.Git(t, dir, "add", "-A")
				r := discoverIn(t, dir)
				index := filepath.Join(r.GitDir, "index")
				data, err := os.ReadFile(index)
				if err != nil {
					t.Fatal(err)
				}
				body := bytes.Replace(data[:len(data)-r.HashLen()], []byte(c.staged), []byte(c.forged), 1)
				h := r.newHash()
				h.Write(body)
				if err := os.WriteFile(index, h.Sum(body), 0o644); err != nil {
					t.Fatal(err)
				}
				if got := gittest.Git(t, dir, "ls-files"); got != c.forged {
					t.Fatalf("the forged index holds %q", got)
				}
				var refused *RefusedPathError
				if _, err := r.WriteIndexTree(context.Background()); !errors.As(err, &refused) || refused.Path != c.forged {
					t.Fatalf("in process: %v, want the path %q refused", err, c.forged)
				}
				if c.forged == ".git/hooks/pre-commit" {
					// Past indexTreeMax git writes the tree; the paths are read here all the same.
					for i := range indexTreeMax {
						writeTestFile(t, filepath.Join(dir, "many", strconv.Itoa(i)), "")
					}
					gittest.Git(t, dir, "add", "many")
					data, err := os.ReadFile(index)
					if err != nil {
						t.Fatal(err)
					}
					if _, ok, checked, _ := r.indexTree(data, r.WriteObject); ok || !checked {
						t.Fatalf("an index of %d entries: built %v, checked %v", indexTreeMax+1, ok, checked)
					}
					if _, err := r.WriteIndexTree(context.Background()); !errors.As(err, &refused) || refused.Path != c.forged {
						t.Fatalf("past indexTreeMax: %v, want the path %q refused", err, c.forged)
					}
				}
				t.Setenv("GIT_INDEX_FILE", index) // left to git write-tree
				if _, err := r.WriteIndexTree(context.Background()); !errors.As(err, &refused) || refused.Path != c.forged {
					t.Fatalf("through git: %v, want the path %q refused", err, c.forged)
				}
			})
		}
	}
}
