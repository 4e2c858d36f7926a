package gitext

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestEditTreeAsGit: EditTree writes the tree git writes from an index of
// the same tree with the same edits (git update-index --index-info, git
// write-tree), D/F replacements, no-op removals and emptied directories
// included, and ChangedPaths lists what git diff-tree lists between them;
// the paths git ignores, it ignores.
func TestEditTreeAsGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := formatDir(t, format)
			for path, content := range map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n", "dir/sub/c.txt": "c\n", "exe.sh": "#!/bin/sh\n", "z/y/x": "x\n"} {
				writeTestFile(t, filepath.Join(dir, path), content)
			}
			if err := os.Chmod(filepath.Join(dir, "exe.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, dir, "add", "-A")
			gittest.Git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+gittest.Git(t, dir, "hash-object", "-t", "commit", "--literally", "--stdin")+",mod")
			gittest.Git(t, dir, "commit", "-q", "-m", "base")
			base := gittest.Git(t, dir, "rev-parse", "HEAD")
			r := discoverIn(t, dir)
			blob := gittest.GitInput(t, dir, "new\n", "hash-object", "-w", "--stdin")
			file := func(path string) TreeEdit { return TreeEdit{Path: path, Entry: TreeEntry{Mode: "100644", OID: blob}} }
			gone := func(path string) TreeEdit { return TreeEdit{Path: path} }
			withMode := func(e TreeEdit, mode string) TreeEdit { e.Entry.Mode = mode; return e }
			objects := r.NewObjects()
			defer objects.Close()
			for _, c := range []struct {
				name  string
				edits []TreeEdit
			}{
				{"change", []TreeEdit{file("a.txt")}},
				{"add deep", []TreeEdit{file("new/deep/f.txt"), file("dir/sub/d.txt")}},
				{"remove empties its directories", []TreeEdit{gone("dir/sub/c.txt"), gone("z/y/x")}},
				{"remove a directory's path: nothing", []TreeEdit{gone("dir"), gone("nope/x"), gone("a.txt/x")}},
				{"file replaces a directory", []TreeEdit{file("dir")}},
				{"directory replaces a file", []TreeEdit{file("a.txt/x"), gone("a.txt")}},
				{"modes", []TreeEdit{withMode(file("exe.sh"), "100664"), withMode(file("a.txt"), "100775"), withMode(file("l2"), "120000")}},
				{"submodule", []TreeEdit{withMode(file("mod"), "160000"), gone("link")}},
				{"everything goes", []TreeEdit{gone("a.txt"), gone("dir/b.txt"), gone("dir/sub/c.txt"), gone("exe.sh"), gone("z/y/x"), gone("link"), gone("mod")}},
				{".git", []TreeEdit{file(".git/hooks/pre-commit")}},
				{".GIT", []TreeEdit{file("dir/.GIT")}},
				{"dot dot", []TreeEdit{file("dir/../a")}},
				{"empty part", []TreeEdit{file("dir//a")}},
			} {
				got, err := objects.EditTree(context.Background(), base, c.edits)
				want, gitErr := gitEditTree(t, dir, r, base, c.edits)
				switch {
				case err != nil || gitErr != nil:
					t.Errorf("%s: EditTree %v, git %v", c.name, err, gitErr)
				case got != want:
					t.Errorf("%s: EditTree wrote\n%s\ngit\n%s", c.name, gittest.Git(t, dir, "ls-tree", "-r", got), gittest.Git(t, dir, "ls-tree", "-r", want))
				default:
					paths, err := objects.ChangedPaths(context.Background(), base, got)
					diff := gittest.Git(t, dir, "-c", "core.quotePath=false", "diff-tree", "-r", "--name-only", "--no-renames", base, got)
					if err != nil || strings.Join(paths, "\n") != diff {
						t.Errorf("%s: ChangedPaths %q, %v; git diff-tree %q", c.name, paths, err, diff)
					}
				}
			}
			gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
		})
	}
}

// gitEditTree is git's tree for EditTree(base, edits): base read into an
// index of its own, the edits made by update-index --index-info, the tree
// written by write-tree.
func gitEditTree(t *testing.T, dir string, r *Repo, base string, edits []TreeEdit) (string, error) {
	t.Helper()
	own := r.With(Exec{Index: filepath.Join(t.TempDir(), "index")})
	if err := own.ReadTree(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	var files []TreeFile
	for _, e := range edits {
		f := TreeFile{Mode: "0", Path: e.Path}
		if e.Entry.Mode != "" {
			f = TreeFile{Mode: e.Entry.Mode, Type: "blob", OID: e.Entry.OID, Path: e.Path}
			if e.Entry.Mode == "160000" {
				f.Type = "commit"
			}
		}
		files = append(files, f)
	}
	if err := own.UpdateIndexInfo(context.Background(), files); err != nil {
		return "", err
	}
	return own.WriteTree(context.Background())
}

// formatDir makes a hermetic repository in the given object format, with
// no commit, and returns its directory.
func formatDir(t *testing.T, format string) string {
	t.Helper()
	gittest.Hermetic(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main", "--object-format="+format)
	return dir
}

// discoverIn is the repository at dir, the test's directory from now on.
func discoverIn(t *testing.T, dir string) *Repo {
	t.Helper()
	t.Chdir(dir)
	r, err := Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
