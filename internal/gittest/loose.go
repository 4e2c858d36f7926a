package gittest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LooseObjects counts the loose objects of the repository at dir: the
// files in its object directory's fan-out directories.
func LooseObjects(t testing.TB, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "[0-9a-f][0-9a-f]", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// FillSample writes loose blobs, reachable from refs/heads/blobs, until
// objects/17 — the directory git samples to decide whether gc --auto is
// due — holds at least n of them.
func FillSample(t testing.TB, dir string, n int) {
	t.Helper()
	src := t.TempDir()
	var tree strings.Builder
	for i := 0; ; {
		if names, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "17", "*")); len(names) >= n {
			break
		}
		// A batch of files hashed by one git process: 256 blobs put about
		// one in objects/17.
		var paths []string
		for end := i + 256; i < end; i++ {
			p := filepath.Join(src, fmt.Sprint(i))
			if err := os.WriteFile(p, []byte(fmt.Sprintf("blob %d\n", i)), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		oids := strings.Fields(GitInput(t, dir, strings.Join(paths, "\n")+"\n", "hash-object", "-w", "--stdin-paths"))
		for j, oid := range oids {
			fmt.Fprintf(&tree, "100644 blob %s\t%d\n", oid, i-len(oids)+j)
		}
	}
	oid := GitInput(t, dir, tree.String(), "mktree")
	Git(t, dir, "update-ref", "refs/heads/blobs", Git(t, dir, "commit-tree", oid, "-m", "blobs"))
}
