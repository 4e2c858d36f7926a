package checkpoint

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestParseStatusOfGit: on real git output (staged, modified, deleted,
// type-changed, untracked, a nested repository, a renamed path, names with
// spaces) the work-tree side and the untracked paths come out, staged-only
// changes do not.
func TestParseStatusOfGit(t *testing.T) {
	dir := gittest.Init(t)
	for _, f := range []string{"staged.txt", "mod.txt", "gone.txt", "link", "old name.txt"} {
		writeFile(t, filepath.Join(dir, f), f)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "files")
	writeFile(t, filepath.Join(dir, "staged.txt"), "staged change")
	gittest.Git(t, dir, "add", "staged.txt")
	writeFile(t, filepath.Join(dir, "mod.txt"), "modified")
	gittest.Git(t, dir, "rm", "-q", "--cached", "link")
	gittest.Git(t, dir, "mv", "old name.txt", "new name.txt")
	writeFile(t, filepath.Join(dir, "new dir", "u.txt"), "untracked")
	writeFile(t, filepath.Join(dir, "nested", "x"), "x")
	gittest.Git(t, filepath.Join(dir, "nested"), "init", "-q")
	cmd := exec.Command("git", "rm", "-q", "gone.txt")
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "gone.txt"), "back, untracked")
	out := gittest.Git(t, dir, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--branch")
	got, err := parseStatus([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := "mod.txt | gone.txt | link | nested/ | new dir/u.txt"
	if strings.Join(got, " | ") != want {
		t.Fatalf("parseStatus:\n%s\nwant:\n%s\nfrom %q", strings.Join(got, " | "), want, out)
	}
	for _, bad := range []string{"1 M.", "? ", "x y", "2 R. N... 100644 100644 100644 a b R100", "u UU sub"} {
		if _, err := parseStatus([]byte(bad + "\x00")); err == nil {
			t.Errorf("parseStatus(%q) accepted it", bad)
		}
	}
}

// FuzzParseStatus: any output is read without a panic, and every path it
// returns is non-empty and part of the output.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.oid (initial)\x001 .M N... 100644 100644 100644 0123 4567 a b.txt\x00? new\x00? nested/\x00"))
	f.Add([]byte("2 R. N... 100644 100644 100644 0123 4567 R100 new\x00old\x00u UU N... 1 2 3 4 h1 h2 h3 both\x00! ign\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		paths, err := parseStatus(out)
		if err != nil {
			return
		}
		for _, p := range paths {
			if p == "" || !bytes.Contains(out, []byte(p)) {
				t.Fatalf("returned %q from %q", p, out)
			}
		}
	})
}

// FuzzDecodeRecords: the records file is a file anyone can damage;
// decoding never panics, and what it accepts survives being written back
// (as saveRecords writes it) and read again.
func FuzzDecodeRecords(f *testing.F) {
	c := Checkpoint{Reason: "pre-wave-1", Source: "build", Branch: "main", Head: "abc", Time: "2026-11-22T10:00:00Z", Seq: 3}
	f.Add(encodeRecords([]record{{id: "a1", tree: "t1", message: c.message()}, {id: "b2", tree: "t2", message: ""}}))
	f.Add([]byte(recordsMagic + "a t 0\n"))
	f.Add([]byte(recordsMagic + "a t 5\nab"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs := decodeRecords(b)
		if recs == nil {
			return
		}
		list := make([]record, 0, len(recs))
		for _, r := range recs {
			list = append(list, r)
		}
		sortRecords(list)
		again := decodeRecords(encodeRecords(list))
		if len(again) != len(recs) {
			t.Fatalf("%q: %d records, %d after writing back", b, len(recs), len(again))
		}
		for id, r := range recs {
			if again[id] != r {
				t.Fatalf("%q: record %q became %+v", b, id, again[id])
			}
		}
	})
}

func TestRecordsRoundTrip(t *testing.T) {
	c := Checkpoint{ID: "a1", Tree: "t1", Reason: "r: with colon", Source: "s", Branch: "main", Head: "h",
		Time: "2026-11-22T10:00:00Z", Seq: 7, Pipeline: "build-20261122-100000-abcdef"}
	recs := decodeRecords(encodeRecords([]record{{id: c.ID, tree: c.Tree, message: c.message()}}))
	if got := parse(recs["a1"]); got != c {
		t.Fatalf("round trip gave %+v", got)
	}
	for _, bad := range []string{"", "git-crucible checkpoints 2\n", recordsMagic + "a t 01\nx", recordsMagic + "a t -1\n",
		recordsMagic + "a t 3\nab", recordsMagic + "a  3\nabc", recordsMagic + "a t 0\na t 0\n"} {
		if decodeRecords([]byte(bad)) != nil {
			t.Errorf("decodeRecords(%q) accepted it", bad)
		}
	}
}
