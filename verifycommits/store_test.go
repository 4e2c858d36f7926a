package verifycommits

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/repotest"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/verifycommits/results"
)

const spec = "0123456789abcdef0123456789abcdef"

// tree is a made-up tree id; notes may annotate ids the repository lacks.
func tree(i int) string {
	sum := sha1.Sum([]byte(fmt.Sprint("tree ", i)))
	return hex.EncodeToString(sum[:])
}

func TestParseLine(t *testing.T) {
	tr := tree(1)
	for _, tc := range []struct {
		line string
		want Result
		ok   bool
	}{
		{"gate1 " + spec + " pass 0 1700000000 1500", Result{Tree: tr, Spec: spec, Status: Pass, Time: time.Unix(1700000000, 0).UTC(), Duration: 1500 * time.Millisecond}, true},
		{"gate1 " + spec + " fail 2 1700000000 0", Result{Tree: tr, Spec: spec, Status: Fail, Exit: 2, Time: time.Unix(1700000000, 0).UTC()}, true},
		{"gate1 " + spec + " skip 125 1 1", Result{Tree: tr, Spec: spec, Status: Skip, Exit: 125, Time: time.Unix(1, 0).UTC(), Duration: time.Millisecond}, true},
		{"gate1 " + spec + " pass 1 1700000000 0", Result{}, false},   // status and exit disagree
		{"gate1 " + spec + " fail 256 1700000000 0", Result{}, false}, // no such exit
		{"gate1 " + spec + " fail -1 1700000000 0", Result{}, false},
		{"gate1 " + spec + " pass 0 -5 0", Result{}, false},
		{"gate1 " + spec[:31] + " pass 0 1 0", Result{}, false},
		{"gate1 " + strings.ToUpper(spec) + " pass 0 1 0", Result{}, false},
		{"gate2 " + spec + " pass 0 1 0", Result{}, false},
		{"gate1 " + spec + " pass 0 1 0 extra", Result{}, false},
		{"gate1  " + spec + " pass 0 1 0", Result{}, false},
		{"gate1 " + spec + " pass 0 01 0", Result{}, false}, // one result, one spelling
		{"gate1 " + spec + " pass +0 1 0", Result{}, false},
		{"", Result{}, false},
	} {
		got, err := results.ParseLine(tr, tc.line)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("results.ParseLine(%q) = %+v, %v; want %+v ok %v", tc.line, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.Line() != tc.line {
			t.Errorf("Line() = %q, want %q", got.Line(), tc.line)
		}
	}
}

func TestLatest(t *testing.T) {
	other := strings.Repeat("f", 32)
	note := strings.Join([]string{
		"gate1 " + spec + " fail 1 200 0",
		"gate1 " + other + " pass 0 900 0",
		"not a result",
		"gate1 " + spec + " pass 0 300 0",
		"gate1 " + spec + " fail 3 100 0", // older, though later in the note
		"gate1 " + spec + " skip 125 300 0",
	}, "\n")
	r, ok := results.Latest(tree(1), spec, []byte(note))
	if !ok || r.Status != Skip || r.Time.Unix() != 300 {
		t.Errorf("Latest = %+v, %v; want the skip at 300 (the last of the newest second)", r, ok)
	}
	if _, ok := results.Latest(tree(1), strings.Repeat("e", 32), []byte(note)); ok {
		t.Error("Latest found a result of a spec the note lacks")
	}
}

// TestStoreRoundTrip: a result recorded is found at once in the index,
// reaches the notes on Flush (once, however often flushed), and a lost
// index is rebuilt from the notes by Prime.
func TestStoreRoundTrip(t *testing.T) {
	r := repotest.Open(t)
	s := Open(r)
	res := Result{Tree: tree(1), Spec: spec, Status: Fail, Exit: 1, Time: time.Unix(1700000000, 0).UTC(), Duration: time.Second}
	if err := s.Record(Outcome{Result: res, Output: []byte("boom\n")}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Lookup(tree(1), spec); err != nil || !ok || got != res {
		t.Fatalf("Lookup = %+v, %v, %v", got, ok, err)
	}
	if b, err := os.ReadFile(s.LogPath(tree(1), spec)); err != nil || string(b) != "boom\n" {
		t.Fatalf("log = %q, %v", b, err)
	}
	for range 2 {
		if _, err := s.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	note, ok, err := notes.Read(t.Context(), r, NotesRef, tree(1))
	if err != nil || !ok || string(note) != res.Line()+"\n" {
		t.Fatalf("note = %q, %v, %v", note, ok, err)
	}
	if got := gittest.Git(t, r.WorkTree, "notes", "--ref", NotesRef, "show", tree(1)); got != res.Line() {
		t.Errorf("git notes show = %q", got)
	}
	if err := os.RemoveAll(filepath.Join(s.Dir(), "index")); err != nil {
		t.Fatal(err)
	}
	s = Open(r) // as the next process would
	if _, ok, _ := s.Lookup(tree(1), spec); ok {
		t.Fatal("Lookup found a result in a deleted index")
	}
	if n, err := s.Prime(t.Context(), spec, []string{tree(1), tree(2)}); err != nil || n != 1 {
		t.Fatalf("Prime = %d, %v; want 1", n, err)
	}
	if got, ok, err := s.Lookup(tree(1), spec); err != nil || !ok || got != res {
		t.Fatalf("after Prime: Lookup = %+v, %v, %v", got, ok, err)
	}
	// A newer result in the notes (fetched from a clone) replaces the index's.
	newer := res
	newer.Status, newer.Exit, newer.Time = Pass, 0, res.Time.Add(time.Hour)
	if err := notes.Append(t.Context(), r, NotesRef, tree(1), []byte(newer.Line())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prime(t.Context(), spec, []string{tree(1)}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Lookup(tree(1), spec); got != newer {
		t.Errorf("after a newer note: Lookup = %+v, want %+v", got, newer)
	}
}

// TestConcurrentWriters: 8 writers record results on overlapping trees
// and flush at once; the notes end with every result.
func TestConcurrentWriters(t *testing.T) {
	r := repotest.Open(t)
	const writers, perWriter = 8, 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	want := map[string][]string{}
	for w := range writers {
		for i := range perWriter {
			tr := tree(w + i) // writers w and w+1 share five trees
			res := Result{Tree: tr, Spec: spec, Status: Pass, Time: time.Unix(int64(1000*w+i), 0).UTC()}
			want[tr] = append(want[tr], res.Line())
		}
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer opens the repository as a process of its own would.
			s := Open(&gitext.Repo{GitDir: r.GitDir, CommonDir: r.CommonDir, WorkTree: r.WorkTree, Format: r.Format})
			for i := range perWriter {
				res := Result{Tree: tree(w + i), Spec: spec, Status: Pass, Time: time.Unix(int64(1000*w+i), 0).UTC()}
				if err := s.Record(Outcome{Result: res}); err != nil {
					errs[w] = err
					return
				}
				if _, err := s.Flush(t.Context()); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for tr, lines := range want {
		note, _, err := notes.Read(t.Context(), r, NotesRef, tr)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if !strings.Contains(string(note), l+"\n") {
				t.Errorf("tree %s lost result %q; note:\n%s", tr, l, note)
			}
		}
	}
	if left, _ := os.ReadDir(filepath.Join(Open(r).Dir(), "pending")); len(left) != 0 {
		t.Errorf("%d pending results left after every flush", len(left))
	}
}

// FuzzParseNote: a note on a tree comes from any clone; reading it never
// panics, and what it accepts it writes back the same.
func FuzzParseNote(f *testing.F) {
	f.Add("gate1 " + spec + " pass 0 1700000000 1500\ngate1 " + spec + " fail 1 1700000001 20\n")
	f.Add("gate1 " + spec + " skip 125 0 0")
	f.Add("gate1 x pass 0 1 1\n\n\x00")
	f.Fuzz(func(t *testing.T, note string) {
		for _, line := range strings.Split(note, "\n") {
			if r, err := results.ParseLine(tree(1), line); err == nil && r.Line() != line {
				t.Errorf("results.ParseLine(%q).Line() = %q", line, r.Line())
			}
		}
		results.Latest(tree(1), spec, []byte(note))
	})
}
