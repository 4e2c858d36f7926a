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
		prefix, err := repo.Git(ctx, "rev-parse", "--show-prefix")
		if err != nil {
			return "", err
		}
		rel = path.Join(strings.TrimSpace(string(prefix)), filepath.ToSlash(file))
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
	out, err := repo.Git(ctx, "-C", repo.WorkTree, "--literal-pathspecs", "ls-files", "-s", "--full-name", "--", rel)
	if err != nil {
		return nil, err
	}
	mode, _, _ := strings.Cut(string(out), " ")
	_, listed, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\t")
	switch {
	case len(out) == 0:
		return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s is not tracked: only a tracked file needs trust", rel)},
			untracked)
	case listed != rel:
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is not a file", rel)}
	case mode == "120000":
		return nil, &outcome.Refused{Err: fmt.Errorf("%s is tracked as a symbolic link: only a regular file can be trusted", rel)}
	case mode != "100644" && mode != "100755":
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
