package refs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// The store's own costs, in process and without the CLI: what a hook pays
// on top of process start-up for a cached read, and what one append costs.
// Run with: go test -run '^$' -bench . -benchmem ./refs
// bench/run.sh measures the same paths as whole processes against git.

// benchRepo makes a fresh hermetic repository and opens a store on it.
func benchRepo(b *testing.B) *Store {
	b.Helper()
	b.Chdir(gittest.Init(b))
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	s := Open(repo)
	b.Cleanup(func() { s.Close() })
	return s
}

var benchWho = Identity{Name: "Bench", Email: "bench@example.com"}

// benchBatch is one event and a state.json of the size the pipeline
// package writes (about 900 bytes), different for every seq.
func benchBatch(seq int) *Batch {
	event := fmt.Sprintf(`{"seq":%d,"lamport":%d,"time":"2026-11-22T10:00:00Z","writer":"w-0123abcd",`+
		`"type":"ledger.verdict","data":{"phase":1,"verdict":"FAIL","pipeline_id":"bench"}}`, seq, seq)
	state := fmt.Sprintf(`{"format":1,"id":"bench","goal":"benchmark","mode":"feature","seq":%d,"lamport":%d,%s}`+"\n",
		seq, seq, strings.Repeat(`"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",`, 14)+`"end":true`)
	return &Batch{
		Events:  [][]byte{[]byte(event)},
		Files:   map[string][]byte{StateFile: []byte(state), "ledger.md": []byte("# ledger\n")},
		Subject: fmt.Sprintf("verdict FAIL for phase 1 (%d)", seq),
	}
}

func appendOne(b *testing.B, s *Store, id string, seq int) *Head {
	h, err := s.Append(b.Context(), id, benchWho, func(*Head) (*Batch, error) { return benchBatch(seq), nil })
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkHead is the hot-path read: the ref, then the cache beside it,
// trusted because it names the ref's commit. No git process.
func BenchmarkHead(b *testing.B) {
	s := benchRepo(b)
	want := appendOne(b, s, "bench", 1)
	if _, err := os.Stat(s.cachePath("bench")); err != nil {
		b.Fatalf("no cache after an append: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h, err := s.Head(b.Context(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if h.Commit != want.Commit {
			b.Fatalf("head %s, want %s", h.Commit, want.Commit)
		}
	}
	if s.reader != nil {
		b.Fatal("a cached read started git cat-file")
	}
}

// BenchmarkAppend is one in-process append of a one-event batch: loose
// blobs, tree and commit, the ref moved under its lock, the cache rewritten.
func BenchmarkAppend(b *testing.B) {
	s := benchRepo(b)
	appendOne(b, s, "bench", 1)
	seq := 1
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		seq++
		appendOne(b, s, "bench", seq)
	}
}
