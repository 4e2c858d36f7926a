package trust

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

var errOnlyRegular = errors.New("only a regular file can be trusted")

// WorkTreePath is file from the top of the work tree: relative to the
// current directory, or def when file is "".
func WorkTreePath(ctx context.Context, repo *gitext.Repo, file, def string) (string, error) {
	if file == "" {
		return def, nil
	}
	var rel string
	if filepath.IsAbs(file) {
		r, err := filepath.Rel(repo.WorkTree, file)
		if err != nil {
			return "", err
		}
		rel = filepath.ToSlash(r)
	} else {
		prefix, err := repo.ShowPrefix(ctx)
		if err != nil {
			return "", err
		}
		rel = path.Join(prefix, filepath.ToSlash(file))
	}
	rel = path.Clean(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", &outcome.Refused{Err: fmt.Errorf("%s is outside the work tree %s", file, repo.WorkTree)}
	}
	return rel, nil
}

// TrackedContent reads rel from the work tree after checking that git
// tracks it as a file and that nothing on the way is a symbolic link;
// untracked is the hint when git does not track it.
func TrackedContent(ctx context.Context, repo *gitext.Repo, rel, untracked string) ([]byte, error) {
	entries, err := repo.LsFilesAt(ctx, rel)
	if err != nil {
		return nil, err
	}
	switch {
	case len(entries) == 0:
		return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s is not tracked: only a tracked file needs trust", rel)},
			untracked)
	case entries[0].Path != rel:
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is not a file", rel)}
	case entries[0].Mode == "120000":
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is tracked as a symbolic link: only a regular file can be trusted", rel)}
	case entries[0].Mode != "100644" && entries[0].Mode != "100755":
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is not a regular file", rel)}
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if fi, err := os.Lstat(filepath.Join(repo.WorkTree, filepath.FromSlash(dir))); err != nil || !fi.IsDir() {
			return nil, &outcome.Refused{Err: fmt.Errorf("%s is under %s, which is not a directory of the work tree", rel, dir)}
		}
	}
	content, err := fsutil.ReadRegular(filepath.Join(repo.WorkTree, filepath.FromSlash(rel)), 1<<20, errOnlyRegular)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is tracked but not in the work tree", rel)}
	}
	if err != nil {
		return nil, &outcome.Refused{Err: err}
	}
	return content, nil
}
