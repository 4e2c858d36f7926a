package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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

// TestTryLock: a second taker is refused at once with what the holder
// wrote; once released, the next takes it and replaces the record.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "engine-lock")
	unlock, err := TryLock(path, []byte("first holder, a longer record\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(path, []byte("second\n"))
	held, ok := err.(*HeldError)
	if !ok || held.Owner != "first holder, a longer record\n" || held.Path != path {
		t.Fatalf("second TryLock: %v", err)
	}
	unlock()
	unlock, err = TryLock(path, []byte("second\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if got, _ := os.ReadFile(path); string(got) != "second\n" {
		t.Fatalf("record %q", got)
	}
}

// TestReadFileRefuses: a device, a FIFO, a socket and a directory are
// refused as what they are, and an oversize file by its size, before
// anything is read: /dev/zero under a limit no reader could fill returns
// at once, a FIFO with no writer does not block.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 11), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, kind string
		limit      int64
	}{
		{"/dev/zero", "a character device", math.MaxInt64},
		{fifo, "a FIFO", math.MaxInt64},
		{sock, "a socket", math.MaxInt64},
		{dir, "a directory", math.MaxInt64},
	} {
		_, err := ReadFile(c.path, c.limit)
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Kind() != c.kind || err.Error() != c.path+": not a regular file ("+c.kind+")" {
			t.Errorf("ReadFile(%s): %v", c.path, err)
		}
		if err := CheckFile(c.path, c.limit); !errors.As(err, &nr) {
			t.Errorf("CheckFile(%s): %v", c.path, err)
		}
	}
	_, err = ReadFile(big, 10)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != big+": is 11 bytes, over the 10-byte limit" {
		t.Errorf("ReadFile(big): %v", err)
	}
	if b, err := ReadFile(big, 11); err != nil || len(b) != 11 {
		t.Errorf("ReadFile(big, 11): %d bytes, %v", len(b), err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(big, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link, 11); err != nil || len(b) != 11 {
		t.Errorf("ReadFile(link): %d bytes, %v", len(b), err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(none): %v", err)
	}
}

// TestReadNoPoll reads what os.ReadFile reads, and fails as it does.
func TestReadNoPoll(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 70000} {
		path := filepath.Join(dir, fmt.Sprint(size))
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadNoPoll(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d, %v", size, len(got), err)
		}
	}
	if got, err := ReadNoPoll("/proc/self/stat"); err != nil || len(got) == 0 {
		t.Errorf("/proc/self/stat (size 0 to stat): %q, %v", got, err)
	}
	if _, err := ReadNoPoll(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	var pe *fs.PathError
	if _, err := ReadNoPoll(dir); !errors.As(err, &pe) || !errors.Is(err, syscall.EISDIR) || pe.Path != dir {
		t.Errorf("directory: %v", err)
	}
}
