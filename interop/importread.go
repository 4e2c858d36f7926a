package interop

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/git-crucible/git-crucible/internal/fsutil"
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
	return fsutil.ReadRegular(path, maxImportFile, ErrOutside)
}
