package gitext

import (
	"context"
	"fmt"
	"strings"
)

// TreeFile is one entry of a tree listing.
type TreeFile struct{ Mode, Type, OID, Path string }

// ListTree lists every file below treeish, recursively (git ls-tree -r).
func (r *Repo) ListTree(ctx context.Context, treeish string) ([]TreeFile, error) {
	return r.lsTree(ctx, treeish, true)
}

// ListDir lists the entries of directory dir (from the top) in treeish,
// files and subtrees alike, not below them.
func (r *Repo) ListDir(ctx context.Context, treeish, dir string) ([]TreeFile, error) {
	return r.lsTree(ctx, treeish, false, strings.TrimSuffix(dir, "/")+"/")
}

// lsTree runs git ls-tree of treeish, limited to paths when given.
func (r *Repo) lsTree(ctx context.Context, treeish string, recursive bool, paths ...string) ([]TreeFile, error) {
	args := []string{"ls-tree", "-z", "--full-tree"}
	if recursive {
		args = append(args, "-r")
	}
	out, err := run(ctx, r, nil, append(append(args, "--end-of-options", treeish), paths...)...)
	if err != nil {
		return nil, err
	}
	var files []TreeFile
	err = eachEntry(out, func(f [4]string) { files = append(files, TreeFile{Mode: f[0], Type: f[1], OID: f[2], Path: f[3]}) })
	if err != nil {
		return nil, fmt.Errorf("ls-tree %s: %w", treeish, err)
	}
	return files, nil
}

// eachEntry calls fn with the three fields and the path of each record of
// a listing git gives as "a b c\tpath" NUL-terminated (ls-tree -z,
// ls-files -s -z).
func eachEntry(out []byte, fn func(fieldsAndPath [4]string)) error {
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return fmt.Errorf("unexpected entry %q", rec)
		}
		fn([4]string{fields[0], fields[1], fields[2], path})
	}
	return nil
}

// CatFile returns the content of the object rev names, which must be of
// type kind ("blob", "commit", ...; git cat-file <type>).
func (r *Repo) CatFile(ctx context.Context, kind, rev string) ([]byte, error) {
	return run(ctx, r, nil, "cat-file", kind, "--end-of-options", rev)
}

// CommitTree writes a commit of tree (or the tree of a commit) with
// parents and message as it is, and returns it (git commit-tree: the
// author and committer as git takes them from the environment and config).
func (r *Repo) CommitTree(ctx context.Context, tree string, parents []string, message string) (string, error) {
	args := []string{"commit-tree"}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := run(ctx, r, []byte(message), append(args, "-F", "-", "--end-of-options", tree)...)
	return strings.TrimSpace(string(out)), err
}

// WriteTree writes the index as a tree and returns it.
func (r *Repo) WriteTree(ctx context.Context) (string, error) {
	out, err := run(ctx, r, nil, "write-tree")
	return strings.TrimSpace(string(out)), err
}

// ReadTree makes the index treeish's tree, the work tree untouched.
func (r *Repo) ReadTree(ctx context.Context, treeish string) error {
	_, err := run(ctx, r, nil, "read-tree", "--end-of-options", treeish)
	return err
}

// ReadTreeMerge moves the index and the work tree from tree from to tree
// to, as git checkout moves them (git read-tree -m -u): a file changed in
// the work tree that the move would change stops it, and nothing moves.
func (r *Repo) ReadTreeMerge(ctx context.Context, from, to string) error {
	_, err := run(ctx, r, nil, "read-tree", "-m", "-u", "--end-of-options", from, to)
	return err
}
