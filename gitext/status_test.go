package gitext

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestStatusOfGit: on real git (staged, modified, deleted, type-changed,
// untracked, a nested repository, a renamed path, names with spaces)
// every path comes out with its two sides, a rename as a deletion and an
// addition; InWorkTree picks the work-tree side and the untracked paths.
func TestStatusOfGit(t *testing.T) {
	r, dir := openRepo(t)
	for _, f := range []string{"staged.txt", "mod.txt", "gone.txt", "link", "old name.txt"} {
		writeTestFile(t, filepath.Join(dir, f), f)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "files")
	writeTestFile(t, filepath.Join(dir, "staged.txt"), "staged change")
	gittest.Git(t, dir, "add", "staged.txt")
	writeTestFile(t, filepath.Join(dir, "mod.txt"), "modified")
	gittest.Git(t, dir, "rm", "-q", "--cached", "link")
	gittest.Git(t, dir, "mv", "old name.txt", "new name.txt")
	writeTestFile(t, filepath.Join(dir, "new dir", "u.txt"), "untracked")
	writeTestFile(t, filepath.Join(dir, "nested", "x"), "x")
	gittest.Git(t, filepath.Join(dir, "nested"), "init", "-q")
	cmd := exec.Command("git", "rm", "-q", "gone.txt")
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "gone.txt"), "back, untracked")
	ctx := context.Background()
	for _, c := range []struct {
		untracked Untracked
		want      []StatusEntry
	}{
		{UntrackedAll, []StatusEntry{{"D ", "gone.txt"}, {"D ", "link"}, {" M", "mod.txt"}, {"A ", "new name.txt"},
			{"D ", "old name.txt"}, {"M ", "staged.txt"}, {"??", "gone.txt"}, {"??", "link"}, {"??", "nested/"}, {"??", "new dir/u.txt"}}},
		{UntrackedNormal, []StatusEntry{{"D ", "gone.txt"}, {"D ", "link"}, {" M", "mod.txt"}, {"A ", "new name.txt"},
			{"D ", "old name.txt"}, {"M ", "staged.txt"}, {"??", "gone.txt"}, {"??", "link"}, {"??", "nested/"}, {"??", "new dir/"}}},
	} {
		got, err := r.Status(ctx, c.untracked)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Fatalf("Status(%s) = %q, %v\nwant %q", c.untracked, got, err, c.want)
		}
	}
	got, _ := r.Status(ctx, UntrackedAll)
	var work []string
	for _, e := range got {
		if e.InWorkTree() {
			work = append(work, e.Path)
		}
	}
	if want := []string{"mod.txt", "gone.txt", "link", "nested/", "new dir/u.txt"}; !reflect.DeepEqual(work, want) {
		t.Fatalf("in the work tree: %q, want %q", work, want)
	}
	for _, bad := range []string{"1 M.", "? ", "x y", "2 R. N... 100644 100644 100644 a b R100", "u UU sub"} {
		if _, err := parseStatus([]byte(bad + "\x00")); err == nil {
			t.Errorf("parseStatus(%q) accepted it", bad)
		}
	}
}

// FuzzParseStatus: any output is read without a panic, and every path it
// returns is non-empty and part of the output, with two status letters.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.oid (initial)\x001 .M N... 100644 100644 100644 0123 4567 a b.txt\x00? new\x00? nested/\x00"))
	f.Add([]byte("2 R. N... 100644 100644 100644 0123 4567 R100 new\x00old\x00u UU N... 1 2 3 4 h1 h2 h3 both\x00! ign\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, err := parseStatus(out)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Path == "" || !bytes.Contains(out, []byte(e.Path)) || len(e.XY) != 2 {
				t.Fatalf("returned %+v from %q", e, out)
			}
		}
	})
}

// TestDirty: the fingerprint of a path changes when its file does.
func TestDirty(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	writeTestFile(t, filepath.Join(dir, "f"), "one")
	before, err := r.Dirty(ctx, dir)
	if err != nil || len(before) != 1 || before["f"] == "" {
		t.Fatalf("Dirty = %v, %v", before, err)
	}
	writeTestFile(t, filepath.Join(dir, "f"), "three")
	after, err := r.Dirty(ctx, dir)
	if err != nil || after["f"] == before["f"] {
		t.Fatalf("the fingerprint did not change: %v, %v", after, err)
	}
}
