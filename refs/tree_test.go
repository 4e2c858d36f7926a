package refs

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// withFiles is a build function writing files besides a JSON state.
func withFiles(event string, files map[string]string) func(*Head) (*Batch, error) {
	return func(*Head) (*Batch, error) {
		b := &Batch{Events: [][]byte{[]byte(`{"e":"` + event + `"}`)}, Files: map[string][]byte{StateFile: []byte("{}\n")}, Subject: event}
		for p, c := range files {
			b.Files[p] = []byte(c)
		}
		return b, nil
	}
}

func TestNestedFiles(t *testing.T) {
	s, dir := openStore(t)
	steps := []map[string]string{
		{"dispatch/0000/1-plan.md": "prompt 1"},
		{"dispatch/0000/1-plan.output.md": "output 1", "dispatch/0000/2-impl.md": "prompt 2"},
		{"handoffs/1-to-2.md": "handoff"},
		{"dispatch/0001/100-review.md": "prompt 100", "dispatch/0000/2-impl.md": "prompt 2, edited"},
	}
	for i, files := range steps {
		if _, err := s.Append(t.Context(), "p1", who, withFiles(string(rune('a'+i)), files)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if i == 1 {
			// The next append must still find every listing, without the cache.
			os.Remove(s.treesPath("p1"))
		}
	}
	want := strings.Join([]string{
		"dispatch/0000/1-plan.md", "dispatch/0000/1-plan.output.md", "dispatch/0000/2-impl.md",
		"dispatch/0001/100-review.md", "events.jsonl", "format", "handoffs/1-to-2.md", "state.json",
	}, "\n")
	if got := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", PipelineRef("p1")); got != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", got, want)
	}
	if got := gittest.Git(t, dir, "show", PipelineRef("p1")+":dispatch/0000/2-impl.md"); got != "prompt 2, edited" {
		t.Fatalf("edited file reads %q", got)
	}
	if got := gittest.Git(t, dir, "show", PipelineRef("p1")+"~3:dispatch/0000/1-plan.md"); got != "prompt 1" {
		t.Fatalf("history reads %q", got)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

// TestFormatOfAnEarlierChain appends to a chain an earlier version wrote
// (FormatV1): the append says FormatV2, and its commits before keep theirs.
func TestFormatOfAnEarlierChain(t *testing.T) {
	s, dir := openStore(t)
	if _, err := s.Append(t.Context(), "p1", who, withFiles("a", map[string]string{FormatFile: FormatV1})); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"b", "c"} {
		if _, err := s.Append(t.Context(), "p1", who, withFiles(e, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for rev, want := range map[string]string{"~2": FormatV1, "~1": FormatV2, "": FormatV2} {
		if got := gittest.Git(t, dir, "show", PipelineRef("p1")+rev+":"+FormatFile); got+"\n" != want {
			t.Errorf("%s: format %q, want %q", rev, got, want)
		}
	}
}

func TestReadDir(t *testing.T) {
	s, _ := openStore(t)
	h, err := s.Append(t.Context(), "p1", who, withFiles("a", map[string]string{"tasks/0000.json": "zero", "tasks/x01.json": "one"}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadDir(t.Context(), h.Tree, "tasks")
	if want := map[string][]byte{"0000.json": []byte("zero"), "x01.json": []byte("one")}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadDir = %q, %v; want %q", got, err, want)
	}
	if got, err := s.ReadDir(t.Context(), h.Tree, "none"); err != nil || got != nil {
		t.Fatalf("ReadDir of no directory = %q, %v", got, err)
	}
	if _, err := s.ReadDir(t.Context(), h.Tree, StateFile); err == nil {
		t.Fatal("ReadDir of a file succeeded")
	}
}

func TestNestedPathErrors(t *testing.T) {
	s, _ := openStore(t)
	if _, err := s.Append(t.Context(), "p1", who, withFiles("a", map[string]string{"a/b": "x"})); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"a/b/c":  "a/b is a file, not a directory",
		"a":      "a: a file and a directory would share the name",
		"x//y":   `invalid path "x//y"`,
		"../x":   `invalid path "../x"`,
		"x/./y":  `invalid path "x/./y"`,
		"/x":     `invalid path "/x"`,
		"x/y\nz": `invalid path`,
	} {
		_, err := s.Append(t.Context(), "p1", who, withFiles("b", map[string]string{p: "x"}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("path %q: err %v, want %q", p, err, want)
		}
	}
}

func TestTreesCacheFormat(t *testing.T) {
	trees := map[string][]gitext.TreeEntry{
		"aaa": {{Mode: "100644", OID: "o1", Name: "x y"}, {Mode: "40000", OID: "o2", Name: "d"}},
		"bbb": {},
	}
	if got := decodeTrees(encodeTrees(trees)); !reflect.DeepEqual(got, trees) {
		t.Fatalf("round trip: %v", got)
	}
	full := encodeTrees(trees)
	for _, bad := range [][]byte{nil, full[:len(full)-1], full[:len(full)-5], []byte(treesMagic + "\ntree x 5\nend\n")} {
		if decodeTrees(bad) != nil {
			t.Errorf("decodeTrees(%q) accepted a torn file", bad)
		}
	}
}

func FuzzDecodeTrees(f *testing.F) {
	f.Add(encodeTrees(map[string][]gitext.TreeEntry{"t": {{Mode: "100644", OID: "o", Name: "n"}}}))
	f.Add([]byte(treesMagic + "\nend\n"))
	f.Add([]byte(treesMagic + "\ntree t -1\nend\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if trees := decodeTrees(b); trees != nil {
			if again := decodeTrees(encodeTrees(trees)); !reflect.DeepEqual(again, trees) {
				t.Fatalf("%q: round trip gave %v", b, again)
			}
		}
	})
}

// TestForgedTreesCache: a listing in the trees cache that is not its tree
// (a file an agent can write) is not taken: the append lists the
// directory from the object store, and writes no file the chain never had.
func TestForgedTreesCache(t *testing.T) {
	s, dir := openStore(t)
	if _, err := s.Append(t.Context(), "p1", who, withFiles("a", map[string]string{"dispatch/a.md": "a"})); err != nil {
		t.Fatal(err)
	}
	sub := gittest.Git(t, dir, "rev-parse", PipelineRef("p1")+":dispatch")
	blob := gittest.Git(t, dir, "rev-parse", PipelineRef("p1")+":dispatch/a.md")
	forged := map[string][]gitext.TreeEntry{sub: {
		{Mode: "100644", OID: blob, Name: "a.md"},
		{Mode: "100644", OID: blob, Name: "planted.md"},
	}}
	if err := os.WriteFile(s.treesPath("p1"), encodeTrees(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	other := Open(s.repo)
	defer other.Close()
	if _, err := other.Append(t.Context(), "p1", who, withFiles("b", map[string]string{"dispatch/b.md": "b"})); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "ls-tree", "--name-only", PipelineRef("p1")+":dispatch"); got != "a.md\nb.md" {
		t.Fatalf("dispatch/ lists:\n%s\nwant a.md and b.md", got)
	}
}
