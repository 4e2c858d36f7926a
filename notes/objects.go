package notes

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/gitext"
)

// objects reads a repository's objects for one operation: loose and packed
// ones in process, the rest (an alternate's) through a git cat-file started
// only when first needed.
// Trees are kept decoded by id (a tree's content never changes), so a
// retried write does not read them twice.
type objects struct {
	repo  *gitext.Repo
	batch *gitext.ObjectReader
	trees map[string][]gitext.TreeEntry
}

func newObjects(repo *gitext.Repo) *objects {
	return &objects{repo: repo, trees: map[string][]gitext.TreeEntry{}}
}

func (o *objects) close() error {
	if o.batch == nil {
		return nil
	}
	return o.batch.Close()
}

// read returns object oid's content, which must be of type kind.
func (o *objects) read(ctx context.Context, oid, kind string) ([]byte, error) {
	k, data, err := o.repo.ReadStored(oid)
	if errors.Is(err, gitext.ErrMissing) {
		if o.batch == nil {
			if o.batch, err = o.repo.NewObjectReader(context.WithoutCancel(ctx)); err != nil {
				return nil, err
			}
		}
		k, data, err = o.batch.Read(oid)
	}
	if err != nil {
		return nil, err
	}
	if k != kind {
		return nil, fmt.Errorf("%s is a %s, not a %s", oid, k, kind)
	}
	return data, nil
}

func (o *objects) tree(ctx context.Context, oid string) ([]gitext.TreeEntry, error) {
	if entries, ok := o.trees[oid]; ok {
		return entries, nil
	}
	data, err := o.read(ctx, oid, "tree")
	if err != nil {
		return nil, err
	}
	entries, err := gitext.DecodeTree(data, o.repo.HashLen())
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", oid, err)
	}
	o.trees[oid] = entries
	return entries, nil
}

// commitTree returns the tree of notes commit oid.
func (o *objects) commitTree(ctx context.Context, oid string) (string, error) {
	data, err := o.read(ctx, oid, "commit")
	if err != nil {
		return "", err
	}
	c, err := gitext.DecodeCommit(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", oid, err)
	}
	return c.Tree, nil
}
