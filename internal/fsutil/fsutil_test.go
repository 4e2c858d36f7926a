package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWriteAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b.txt")
	for _, content := range []string{"first", "second, longer"} {
		if err := WriteAtomic(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v", got, err)
		}
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := WriteAtomic(filepath.Join(path, "under-a-file"), nil, 0o644); err == nil {
		t.Fatal("writing below a file succeeded")
	}
}

// TestLock: a second holder waits for the first to unlock.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "x.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	done := make(chan struct{})
	go func() {
		defer close(done)
		unlock2, err := Lock(path)
		if err != nil {
			t.Error(err)
			return
		}
		note("second")
		unlock2()
	}()
	time.Sleep(100 * time.Millisecond)
	note("first unlocks")
	unlock()
	<-done
	if strings.Join(order, ", ") != "first unlocks, second" {
		t.Errorf("order: %v", order)
	}
}
