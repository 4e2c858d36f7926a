package notes

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// queue puts a queue file for commit as the post-commit hook file does:
// the line, then the HEAD commit-msg saw.
func queue(t *testing.T, dir, commit, line, head string) {
	t.Helper()
	q := filepath.Join(dir, ".git", queueDir)
	if err := os.MkdirAll(q, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(q, commit), []byte(line+"\n"+head+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFlush(t *testing.T) {
	repo, dir := setup(t)
	commit := func(msg string) string {
		gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
		return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	}
	root := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD")) // the first commit
	a := commit("a")
	b := commit("b")
	gittest.Git(t, dir, "commit", "-q", "--amend", "--allow-empty", "-m", "b amended")
	amended := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	rec := func(phase string) string { return `{"pipeline":"p1","phase":` + phase + `}` }

	queue(t, dir, root, rec("1"), "")         // the first commit: no HEAD before it
	queue(t, dir, a, rec("2"), root)          // made on HEAD
	queue(t, dir, amended, rec("3"), b)       // an amend of b: b's parent
	queue(t, dir, b, rec("4"), root)          // checked on root, made on a: not checked for it
	queue(t, dir, key(1), rec("1"), root)     // no such commit
	queue(t, dir, key(2), "not a record", "") // no record
	foreign := filepath.Join(dir, ".git", queueDir, "README")
	os.WriteFile(foreign, []byte("mine\n"), 0o644)
	linked := filepath.Join(dir, ".git", queueDir, key(3))
	os.Symlink(foreign, linked)

	if got := Queued(repo); got != 7 {
		t.Fatalf("Queued = %d, want 7 (every entry named by an id)", got)
	}
	n, err := Flush(ctx, repo)
	if err != nil || n != 3 {
		t.Fatalf("Flush = %d, %v; want 3 notes written", n, err)
	}
	for c, want := range map[string]string{root: rec("1"), a: rec("2"), amended: rec("3"), b: ""} {
		note, ok, err := Read(ctx, repo, ProvenanceRef, c)
		if err != nil || string(note) != want+map[bool]string{true: "\n"}[ok] {
			t.Errorf("note on %.7s = %q, %v, %v; want %q", c, note, ok, err, want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".git", queueDir))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"README", key(3)}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left in the queue: %v, want only what the hook did not write: %v", left, want)
	}

	// Killed after the notes commit and before the files went: the lines
	// are there already, and a second flush adds none.
	tip := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", ProvenanceRef))
	queue(t, dir, a, rec("2"), root)
	if n, err := Flush(ctx, repo); err != nil || n != 1 {
		t.Fatalf("second Flush = %d, %v", n, err)
	}
	if again := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", ProvenanceRef)); again != tip {
		t.Errorf("a flush of a line already noted moved the notes ref")
	}
}

func TestNext(t *testing.T) {
	repo, dir := setup(t)
	if err := SetNext(repo, []byte(`{"pipeline":"p1","phase":1}`), "abc"); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, ".git", queueDir, nextEntry)
	if data, _ := os.ReadFile(next); string(data) != "{\"pipeline\":\"p1\",\"phase\":1}\nabc\n" {
		t.Errorf("next = %q", data)
	}
	ClearNext(repo)
	if fi, err := os.Lstat(next); err != nil || fi.Size() != 0 {
		t.Errorf("ClearNext left %v, %v", fi, err)
	}
	if err := SetNext(repo, []byte("two\nlines"), ""); err == nil {
		t.Error("SetNext took a line with a newline")
	}

	// A planted link is neither followed nor written through.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o644)
	os.Remove(next)
	os.Symlink(victim, next)
	ClearNext(repo)
	if err := SetNext(repo, []byte("{}"), ""); err == nil {
		t.Error("SetNext wrote through a symbolic link")
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep\n" {
		t.Errorf("the link's target became %q", data)
	}
}

// FuzzParseQueued: a queue file anyone could have written yields one
// record on one line, and the head that followed it, or nothing.
func FuzzParseQueued(f *testing.F) {
	f.Add([]byte("{\"pipeline\":\"p1\",\"phase\":1}\n\n"))
	f.Add([]byte("{\"pipeline\":\"p1\",\"phase\":2,\"ledger_head\":\"ab\"}\n0123456789012345678901234567890123456789\n"))
	f.Add([]byte("{\"pipeline\":\"p1\",\"phase\":1}\n{\"pipeline\":\"p2\",\"phase\":1}\n"))
	f.Add([]byte("{\"pipeline\":\"p1\",\"phase\":1}"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		line, head, ok := parseQueued(data)
		if !ok {
			return
		}
		if bytes.IndexByte(line, '\n') >= 0 || strings.Contains(head, "\n") {
			t.Fatalf("line %q, head %q hold a newline", line, head)
		}
		if recs, errs := ParseProvenance(line); len(recs) != 1 || len(errs) != 0 {
			t.Fatalf("accepted %q: %d records, %v", line, len(recs), errs)
		}
		if !bytes.HasPrefix(data, append(append(line, '\n'), head+"\n"...)) {
			t.Fatalf("%q is not the file's first two lines", line)
		}
	})
}
