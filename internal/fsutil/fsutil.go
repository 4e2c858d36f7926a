// Package fsutil reads and writes files safely: a write is never seen half
// done, even after a kill; a read never follows a planted symbolic link; a
// lock never outlives its holder.
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	b, err := readOpened(f, path, limit)
	var other *NotRegularError
	if errors.As(err, &other) {
		return nil, fmt.Errorf("%s: is not a regular file; %w", path, refusal)
	}
	return b, err
}

// ReadFile reads the file a person named (on the command line, say),
// following symbolic links as any command does: a regular file of at most
// limit bytes, read once. Anything else is a *NotRegularError and an
// oversize file a *TooLargeError, both judged on the opened file before
// any of its content is read. A missing file is os.ErrNotExist.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, path, limit)
}

// CheckFile opens path as ReadFile does and reads nothing: for a file that
// only its name is taken of (a document agents read themselves).
func CheckFile(path string, limit int64) error {
	f, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = check(f, path, limit)
	return err
}

// open opens path for reading without blocking on a FIFO; a socket, which
// cannot be opened, is refused as what it is.
func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
		}
	}
	return f, err
}

// NotRegularError refuses a file that is not a regular file: reading a
// device, a FIFO or a socket might never end, and a directory has no text.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return e.Path + ": not a regular file (" + e.Kind() + ")"
}

// Kind names the kind of file.
func (e *NotRegularError) Kind() string {
	switch m := e.Mode; {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "another kind of file"
}

// TooLargeError refuses a file over a size limit.
type TooLargeError struct {
	Path        string
	Size, Limit int64
	Grew        bool // it grew over the limit while read
}

func (e *TooLargeError) Error() string {
	if e.Grew {
		return fmt.Sprintf("%s: grew over the %d-byte limit while read", e.Path, e.Limit)
	}
	return fmt.Sprintf("%s: is %d bytes, over the %d-byte limit", e.Path, e.Size, e.Limit)
}

// check refuses an opened file that is not regular or is over limit.
func check(f *os.File, path string, limit int64) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	return fi, nil
}

// readOpened reads an opened file that check accepts, never more than
// limit bytes (it may grow while read).
func readOpened(f *os.File, path string, limit int64) ([]byte, error) {
	if _, err := check(f, path, limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(b)), Limit: limit, Grew: true}
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

// HeldError is a lock another process holds; Owner is what it wrote in it.
type HeldError struct {
	Path  string
	Owner string
}

func (e *HeldError) Error() string { return e.Path + " is held by another process" }

// TryLock takes an exclusive flock on the file at path, as Lock does, but
// without waiting: a lock held elsewhere is a *HeldError with what its
// holder wrote. The holder writes owner into the file, so that the next
// one can say who holds it.
func TryLock(path string, owner []byte) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		held, _ := io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &HeldError{Path: path, Owner: string(held)}
		}
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt(owner, 0); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// ReadNoPoll is os.ReadFile with plain system calls. An *os.File offers
// itself to the runtime's poller: the first one sets the poller up (an
// epoll instance, an eventfd) and every one costs four fcntl and an
// epoll_ctl more, which the hot paths (ledger check, the hooks), reading
// five small files and nothing else, would pay on every run.
func ReadNoPoll(path string) ([]byte, error) {
	fd, err := ignoringEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	size := 512
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 && st.Size < 1<<30 {
		size = int(st.Size) + 1 // +1: the read that sees the end
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := ignoringEINTR(func() (int, error) { return syscall.Read(fd, b[len(b):cap(b)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

func ignoringEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// OpenNoPoll opens path for reading with a plain system call, as an
// *os.File the runtime's poller is never offered (see ReadNoPoll): for a
// hot path that reads parts of a file with ReadAt.
func OpenNoPoll(path string) (*os.File, error) {
	fd, err := ignoringEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// AppendInPlace appends data to the regular file at path with plain
// system calls (see ReadNoPoll), never following a symbolic link there.
func AppendInPlace(path string, data []byte) error {
	return writeFlags(path, data, syscall.O_WRONLY|syscall.O_APPEND, 0)
}

// WriteInPlace writes data over path (creating it with perm) with plain
// system calls, for a small file only its writer's own process reads back
// later: no temporary file to rename, no poller (see ReadNoPoll). It never
// follows a symbolic link at path nor waits on a FIFO planted there.
func WriteInPlace(path string, data []byte, perm os.FileMode) error {
	return writeFlags(path, data, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC, perm)
}

// writeFlags opens path with flags, never following a symbolic link nor
// waiting on a FIFO, and writes data.
func writeFlags(path string, data []byte, flags int, perm os.FileMode) error {
	flags |= syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	fd, err := ignoringEINTR(func() (int, error) { return syscall.Open(path, flags, uint32(perm.Perm())) })
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	for len(data) > 0 && err == nil {
		var n int
		if n, err = ignoringEINTR(func() (int, error) { return syscall.Write(fd, data) }); err == nil {
			data = data[n:]
		}
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}
