package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatchRedraws: status --watch draws once, then again after the
// pipeline changes, and stops when its context ends.
func TestWatchRedraws(t *testing.T) {
	t.Chdir(gittest.Init(t))
	if code, _, stderr := runAll([]string{"git-crucible", "start", "watched", "--id", "build-20261122-100000-watch1"}); code != 0 {
		t.Fatal(stderr)
	}
	var out syncBuffer
	s, err := openSession(context.Background(), &out, &out, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- watchStatus(ctx, s) }()
	waitFor := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), what); {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in:\n%s", what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("Phase:    Phase 1 (Design) — NOT_STARTED")
	if code, _, stderr := runAll([]string{"git-crucible", "ledger", "begin", "1"}); code != 0 {
		t.Fatal(stderr)
	}
	waitFor("Phase:    Phase 1 (Design) — IN_PROGRESS")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "Pipeline: build-20261122-100000-watch1"); n != 2 {
		t.Fatalf("drew %d times, want 2:\n%s", n, out.String())
	}
}
