package gitext

import (
	"bytes"
	"context"
	"strings"
)

// literal is paths (from the top, with "/") as pathspecs that match only
// themselves, wherever git runs.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(top,literal)" + p
	}
	return out
}

// ChangedPaths are the paths that differ between commits a and b.
func (r *Repo) ChangedPaths(ctx context.Context, a, b string) ([]string, error) {
	out, err := run(ctx, r, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--end-of-options", a, b)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	return paths, nil
}

// NameStatus is a path that differs between two trees, and how: "A"
// added, "D" deleted, "M" modified, "T" type changed.
type NameStatus struct{ Status, Path string }

// TreeChanges lists what differs from tree a to tree b, limited to paths
// when any are given (git diff-tree -r --name-status, renames as a
// deletion and an addition).
func (r *Repo) TreeChanges(ctx context.Context, a, b string, paths []string) ([]NameStatus, error) {
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--name-status", "--end-of-options", a, b, "--"}
	out, err := run(ctx, r, nil, append(args, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	var changes []NameStatus
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		changes = append(changes, NameStatus{Status: fields[i], Path: fields[i+1]})
	}
	return changes, nil
}

// TreePatch is the patch from tree a to tree b, binary files included,
// with full object ids, renames as a deletion and an addition.
func (r *Repo) TreePatch(ctx context.Context, a, b string) ([]byte, error) {
	return r.diffTree(ctx, a, b, "-p", "--binary")
}

// TreeDiffstat is git's diffstat from tree a to tree b.
func (r *Repo) TreeDiffstat(ctx context.Context, a, b string) ([]byte, error) {
	return r.diffTree(ctx, a, b, "--stat")
}

func (r *Repo) diffTree(ctx context.Context, a, b string, format ...string) ([]byte, error) {
	args := append([]string{"diff-tree", "-r", "--no-renames", "--full-index"}, format...)
	return run(ctx, r, nil, append(args, "--end-of-options", a, b, "--")...)
}

// WorkTreePatch is the patch from commit from to the work tree, or from
// the index when from is "" (git diff, no external diff program).
func (r *Repo) WorkTreePatch(ctx context.Context, from string) ([]byte, error) {
	args := []string{"diff", "--no-color", "--no-ext-diff", "--end-of-options"}
	if from != "" {
		args = append(args, from)
	}
	return run(ctx, r, nil, append(args, "--")...)
}

// DiffQuiet reports whether the index (cached) or the work tree has paths
// (every path when none are given) otherwise than commit has them (git
// diff --quiet, which looks past stat data that changed alone).
func (r *Repo) DiffQuiet(ctx context.Context, commit string, cached bool, paths ...string) (bool, error) {
	args := []string{"diff", "--quiet", "--no-ext-diff", "--no-renames"}
	if cached {
		args = append(args, "--cached")
	}
	return differs(run(ctx, r, nil, append(append(args, "--end-of-options", commit, "--"), literal(paths)...)...))
}

// DiffIndexQuiet is DiffQuiet of every path with git diff-index, which
// writes nothing, not even the index's refreshed stat data: a file whose
// stat data alone changed differs from commit unless RefreshIndex ran
// before.
func (r *Repo) DiffIndexQuiet(ctx context.Context, commit string, cached bool) (bool, error) {
	args := []string{"diff-index", "--quiet"}
	if cached {
		args = append(args, "--cached")
	}
	return differs(run(ctx, r, nil, append(args, "--end-of-options", commit, "--")...))
}

// differs reads git's --quiet answer: exit status 1 is a difference.
func differs(_ []byte, err error) (bool, error) {
	if IsExit(err, 1) {
		return true, nil
	}
	return false, err
}
