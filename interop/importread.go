package interop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// maxImportFile bounds what import reads of any one file: crucible's files
// are kilobytes, a hostile directory could offer anything.
const maxImportFile = 64 << 20

// ErrOutside refuses a file that is not a regular file named directly inside
// the imported directory: a symbolic link (to ~/.ssh/id_rsa, say) would
// otherwise be read, stored in the chain and pushed.
var ErrOutside = errors.New("import reads only regular files inside the directory")

// readInside reads dir/name without following a symbolic link at name and
// only when name stays inside dir. A missing file is os.ErrNotExist; the
// content of a refused file is never read.
func readInside(dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	if !filepath.IsLocal(name) || filepath.Base(name) != name {
		return nil, fmt.Errorf("%q is outside %s: %w", name, dir, ErrOutside)
	}
	return readRegular(path, maxImportFile, ErrOutside)
}

// readRegular reads path if it is a regular file of at most limit bytes,
// without following a symbolic link at path; refusal is wrapped in the
// error that refuses a link or another kind of file. A missing file is
// os.ErrNotExist; the content of a refused file is never read.
func readRegular(path string, limit int64, refusal error) ([]byte, error) {
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
