// Package fsutil writes files so that a reader, or a kill, never sees half
// of one.
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

// What ReadRegular refuses, worded to follow the file's name.
var (
	ErrSymlink    = errors.New("is a symbolic link")
	ErrNotRegular = errors.New("is not a regular file")
)

// TooLargeError is a file larger than ReadRegular was allowed to read.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("is larger than %d bytes", e.Max) }

// ReadRegular reads the regular file at path, up to max bytes. It never
// follows a symbolic link there (whose target nobody chose), nor opens a
// FIFO or device (which could block or never end): those are ErrSymlink
// and ErrNotRegular.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, ErrSymlink
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return data, err
}
