package gitext

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AddOptions narrow what AddAll stages.
type AddOptions struct {
	// IgnoreErrors stages what git can and skips the rest (a file it
	// cannot read), rather than staging nothing.
	IgnoreErrors bool
	Exclude      []string // paths (from the top) left as they are
}

// AddAll stages the whole work tree as it is, deletions included (git add
// -A), but the paths o excludes.
func (r *Repo) AddAll(ctx context.Context, o AddOptions) error {
	args := []string{"add", "-A"}
	if o.IgnoreErrors {
		args = append(args, "--ignore-errors")
	}
	args = append(args, "--", ":/")
	for _, p := range o.Exclude {
		args = append(args, ":(exclude,top,literal)"+p)
	}
	_, err := run(ctx, r, nil, args...)
	return err
}

// AddPaths stages paths (from the top) as the work tree has them,
// deletions included, each a path and never a pattern. No paths stage
// nothing: git add --all given an empty pathspec file would stage the
// whole work tree, untracked files too.
func (r *Repo) AddPaths(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := run(ctx, r, nulTerminated(paths), "--literal-pathspecs", "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// nulTerminated is paths each ended by a NUL, as git's -z input takes them.
func nulTerminated(paths []string) []byte {
	var b []byte
	for _, p := range paths {
		b = append(append(b, p...), 0)
	}
	return b
}

// RefreshIndex brings the index's stat data up to date with the work tree
// (git update-index --refresh), quietly: a file that differs is no error.
func (r *Repo) RefreshIndex(ctx context.Context) error {
	_, err := run(ctx, r, nil, "update-index", "-q", "--refresh")
	return err
}

// UpdateIndexInfo puts entries in the index as they are: mode, type and
// object of each path (git update-index --index-info). Mode "0" removes
// the path.
func (r *Repo) UpdateIndexInfo(ctx context.Context, entries []TreeFile) error {
	var info bytes.Buffer
	for _, e := range entries {
		if e.Mode == "0" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", r.HashLen()*2), e.Path)
			continue
		}
		fmt.Fprintf(&info, "%s %s %s\t%s\x00", e.Mode, e.Type, e.OID, e.Path)
	}
	_, err := run(ctx, r, info.Bytes(), "update-index", "-z", "--index-info")
	return err
}

// UpdateIndexPaths brings paths (from where git runs) in the index up to
// the work tree: added, changed, or removed when the work tree has them no
// more (git update-index --add --remove --replace).
func (r *Repo) UpdateIndexPaths(ctx context.Context, paths []string) error {
	_, err := run(ctx, r, nulTerminated(paths), "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

// IndexEntry is one entry of the index: a path's mode, object and stage.
type IndexEntry struct{ Mode, OID, Stage, Path string }

// LsFiles lists the entries of the index, paths from the top (git ls-files
// -s).
func (r *Repo) LsFiles(ctx context.Context) ([]IndexEntry, error) {
	return r.lsFiles(ctx, "--", ":/")
}

// LsFilesAt lists the index's entries at path, from the top of the work
// tree, taken literally (no pathspec magic): the file's own entry, or
// those of the files under a directory; none when git tracks nothing
// there.
func (r *Repo) LsFilesAt(ctx context.Context, path string) ([]IndexEntry, error) {
	return r.With(Exec{Dir: r.WorkTree, Env: []string{"GIT_LITERAL_PATHSPECS=1"}}).lsFiles(ctx, "--", path)
}

// ShowPrefix is the caller's directory from the top of the work tree,
// "" at the top, else with a trailing slash (git rev-parse --show-prefix).
func (r *Repo) ShowPrefix(ctx context.Context) (string, error) {
	out, err := run(ctx, r, nil, "rev-parse", "--show-prefix")
	return strings.TrimSpace(string(out)), err
}

// lsFiles is git ls-files -s -z --full-name with args.
func (r *Repo) lsFiles(ctx context.Context, args ...string) ([]IndexEntry, error) {
	out, err := run(ctx, r, nil, append([]string{"ls-files", "-s", "-z", "--full-name"}, args...)...)
	if err != nil {
		return nil, err
	}
	var entries []IndexEntry
	err = eachEntry(out, func(f [4]string) {
		entries = append(entries, IndexEntry{Mode: f[0], OID: f[1], Stage: f[2], Path: f[3]})
	})
	if err != nil {
		return nil, fmt.Errorf("ls-files: %w", err)
	}
	return entries, nil
}

// RemoveCached takes paths (from the top) out of the index, the work
// tree's files left where they are (git rm --cached).
func (r *Repo) RemoveCached(ctx context.Context, paths []string) error {
	_, err := run(ctx, r, nil, append([]string{"rm", "-q", "--cached", "--"}, literal(paths)...)...)
	return err
}

// ResetIndex makes the index HEAD's tree, every path, the work tree
// untouched and HEAD where it is (git reset -q HEAD -- :/).
func (r *Repo) ResetIndex(ctx context.Context) error {
	_, err := run(ctx, r, nil, "reset", "-q", "HEAD", "--", ":/")
	return err
}

// IndexStamp is the index file as it was when stamped: its file, size and
// modification time. Git writes an index by renaming a new file over it,
// so a stamp taken after any git wrote it differs.
type IndexStamp struct{ info os.FileInfo }

// StampIndex stamps r's index as it is now (not one an Exec names); false
// when it cannot be read.
func (r *Repo) StampIndex() (IndexStamp, bool) {
	info, err := os.Lstat(filepath.Join(r.GitDir, "index"))
	return IndexStamp{info}, err == nil
}

// Same reports whether s and t are of the same index file, unwritten
// between them.
func (s IndexStamp) Same(t IndexStamp) bool {
	return s.info != nil && t.info != nil && os.SameFile(s.info, t.info) && s.info.Size() == t.info.Size() &&
		s.info.ModTime().Equal(t.info.ModTime())
}
