package checkpoint

import (
	"bytes"
	"fmt"
	"strings"
)

// parseStatus reads `git status --porcelain=v2 -z` and returns the paths
// whose work-tree side differs from the index (modified, deleted, type
// changed, unmerged) and the untracked ones, in git's order. What differs
// only between the index and HEAD is left out: the index already has it.
// A nested repository is an untracked path ending in "/".
func parseStatus(out []byte) ([]string, error) {
	var paths []string
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		rec := string(fields[i])
		if rec == "" {
			continue
		}
		var n int // fields before the path
		switch rec[0] {
		case '#', '!': // headers; ignored files are never asked for
			continue
		case '?':
			path, ok := strings.CutPrefix(rec, "? ")
			if !ok || path == "" {
				return nil, fmt.Errorf("unexpected git status record %q", rec)
			}
			paths = append(paths, path)
			continue
		case '1':
			n = 8
		case '2':
			n = 9
			i++ // the rename's source follows; it is gone from the index
		case 'u':
			n = 10
		default:
			return nil, fmt.Errorf("unexpected git status record %q", rec)
		}
		parts := strings.SplitN(rec, " ", n+1)
		if len(parts) != n+1 || len(parts[1]) != 2 || parts[n] == "" {
			return nil, fmt.Errorf("unexpected git status record %q", rec)
		}
		if parts[1][1] != '.' || rec[0] == 'u' {
			paths = append(paths, parts[n])
		}
	}
	return paths, nil
}
