// Package fsutil reads and writes files safely: a write is never seen half
// done, even after a kill; a read never follows a planted symbolic link; a
// lock never outlives its holder.
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// WriteAtomic writes data to path through a temporary file in the same
// directory, renamed into place, creating the directory if needed.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// ReadRegular reads path if it is a regular file of at most limit bytes,
// without following a symbolic link at path; refusal is wrapped in the
// error that refuses a link or another kind of file. A missing file is
// os.ErrNotExist; the content of a refused file is never read.
func ReadRegular(path string, limit int64, refusal error) ([]byte, error) {
	// O_NONBLOCK: a FIFO planted under a known name must not hang the reader.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: is a symbolic link; %w", path, refusal)
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: is not a regular file; %w", path, refusal)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: is %d bytes, over the %d-byte limit", path, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s: grew over the %d-byte limit while read", path, limit)
	}
	return b, err
}

// Lock waits for and takes an exclusive flock on the file at path, created
// (with its directory) if need be. The kernel releases an flock when its
// holder dies, so a killed holder never blocks the next; unlock releases it.
func Lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
