package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// outputsTo gives cmd its stdout and stderr: the file named for each, when
// one is (it outlives us, for a successor to read if we die), else a pipe
// of our own, so that Wait returns when the agent exits even if something
// it started still holds it. collect, once the agent ended, closes them,
// waits at most wait for the pipes to drain, and returns what each kept:
// head and tail, at most limit bytes; a file refused is a *Failure.
func outputsTo(cmd *exec.Cmd, limit int, stdoutFile, stderrFile string) (collect func(wait time.Duration) (stdout, stderr Captured, err error), err error) {
	files := [2]string{stdoutFile, stderrFile}
	var writers, readers []*os.File
	var captures [2]*capture
	var wg sync.WaitGroup
	for i, name := range files {
		var w *os.File
		if name != "" {
			w, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		} else {
			var rd *os.File
			if rd, w, err = os.Pipe(); err == nil {
				readers = append(readers, rd)
				captures[i] = newCapture(limit)
				wg.Go(func() { io.Copy(captures[i], rd) })
			}
		}
		if err != nil {
			for _, f := range append(writers, readers...) {
				f.Close()
			}
			wg.Wait()
			return nil, err
		}
		writers = append(writers, w)
	}
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	return func(wait time.Duration) (stdout, stderr Captured, err error) {
		for _, f := range writers {
			f.Close() // the child has its own copies
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(wait):
		}
		for _, f := range readers {
			f.Close()
		}
		<-done
		var kept [2]Captured
		var refused error
		for i, c := range captures {
			if c != nil {
				kept[i] = c.result()
				continue
			}
			var f *Failure
			if kept[i], err = readCaptured(files[i], limit); errors.As(err, &f) && refused == nil {
				refused = f
			} else if err != nil && f == nil {
				return Captured{}, Captured{}, err
			}
		}
		return kept[0], kept[1], refused
	}, nil
}

// readCaptured keeps of the file at path what a capture of limit bytes
// keeps of the same stream: its head and tail. No file is an empty stream
// (an agent that never started). It reads only a regular file, refusing
// anything else with a *Failure: the agent could put anything there.
func readCaptured(path string, limit int) (Captured, error) {
	if path == "" {
		return Captured{}, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Captured{}, nil
	} else if errors.Is(err, syscall.ELOOP) {
		return Captured{}, &Failure{Kind: BadOutput, Detail: "the agent's output " + path + " is a symbolic link; not read"}
	} else if err != nil {
		return Captured{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Captured{}, err
	}
	if !fi.Mode().IsRegular() {
		return Captured{}, &Failure{Kind: BadOutput, Detail: "the agent's output " + path + " is not a regular file; not read"}
	}
	half, size := int64(max(limit/2, 1)), fi.Size()
	headSize := min(size, half)
	tailSize := min(size-headSize, half)
	head, err := readAt(f, 0, headSize)
	if err != nil {
		return Captured{}, err
	}
	tail, err := readAt(f, size-tailSize, tailSize)
	if err != nil {
		return Captured{}, err
	}
	return Captured{Head: head, Tail: tail, Cut: size - headSize - tailSize}, nil
}

// readAt reads n bytes of f at off: nil for none, as a capture keeps.
func readAt(f *os.File, off, n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading the agent's output %s: %w", f.Name(), err)
	}
	return b, nil
}
