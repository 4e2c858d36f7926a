package notes

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// Outcome says what Merge did.
type Outcome int

const (
	UpToDate    Outcome = iota // theirs was already contained in the ref
	FastForward                // the ref moved to theirs
	Merged                     // a merge commit joins both
)

func (o Outcome) String() string {
	return [...]string{"up to date", "fast-forward", "merged"}[o]
}

// MergeResult is what Merge did and where the ref now points.
type MergeResult struct {
	Outcome Outcome
	Commit  string
}

// Merge brings the notes commit theirs (an object id or a full ref name,
// such as a fetched refs/crucible-remote/<remote>/notes/...) into notesRef:
// nothing when it is already contained, a fast-forward when possible, else
// a merge commit with both parents whose notes are the union of both sides'
// lines (ours first, then theirs not already present). No line is lost.
// The ref moves by compare-and-swap; a lost race merges again.
func Merge(ctx context.Context, repo *gitext.Repo, notesRef, theirs string) (MergeResult, error) {
	if err := checkRef(notesRef); err != nil {
		return MergeResult{}, err
	}
	their, err := resolve(repo, theirs)
	if err != nil {
		return MergeResult{}, err
	}
	o := newObjects(repo)
	defer o.close()
	theirTree, err := o.commitTree(ctx, their)
	if err != nil {
		return MergeResult{}, fmt.Errorf("%s: %w", theirs, err)
	}
	sig, err := signature()
	if err != nil {
		return MergeResult{}, err
	}
	var res MergeResult
	err = update(ctx, repo, notesRef, sig, func(tip string) (string, error) {
		res = MergeResult{Outcome: UpToDate, Commit: tip}
		base := ""
		if tip != "" && tip != their {
			var err error
			if base, err = repo.MergeBase(ctx, tip, their); err != nil {
				return "", err
			}
		}
		switch {
		case tip == their || base == their:
			return "", nil
		case tip == "" || base == tip:
			res = MergeResult{Outcome: FastForward, Commit: their}
			return their, nil
		}
		ourTree, err := o.commitTree(ctx, tip)
		if err != nil {
			return "", err
		}
		tree, err := unionTrees(ctx, o, ourTree, theirTree)
		if err != nil {
			return "", err
		}
		msg := fmt.Sprintf("Notes merged by 'git crucible'\n\nMerged notes from %s into %s.\n", theirs, notesRef)
		c, err := o.commit(tree, sig, msg, tip, their)
		res = MergeResult{Outcome: Merged, Commit: c}
		return c, err
	})
	if err != nil {
		return MergeResult{}, err
	}
	return res, nil
}

// resolve turns a ref name or object id into an object id.
func resolve(repo *gitext.Repo, rev string) (string, error) {
	if checkObject(repo, rev) == nil {
		return rev, nil
	}
	if !strings.HasPrefix(rev, "refs/") {
		return "", fmt.Errorf("not a full ref name or object id: %q", rev)
	}
	oid, err := repo.ReadRef(rev)
	if err == nil && oid == "" {
		err = fmt.Errorf("no such ref: %s", rev)
	}
	return oid, err
}

// unionTrees returns a notes tree holding every note of both trees, the
// notes on one object joined line by line. Subtrees the two share are not
// read.
func unionTrees(ctx context.Context, o *objects, ours, theirs string) (string, error) {
	ov, err := newView(ctx, o, ours)
	if err != nil {
		return "", err
	}
	tv, err := newView(ctx, o, theirs)
	if err != nil {
		return "", err
	}
	if err := reconcile(ctx, ov, tv); err != nil {
		return "", err
	}
	var added []item
	changed := false
	for _, t := range tv.items {
		i := ov.find(t.key)
		switch {
		case i < 0:
			added, changed = append(added, t), true
		case ov.items[i].oid != t.oid:
			// Two notes: differing subtrees were read by reconcile.
			if ov.items[i].oid, err = ov.combine(ctx, ov.items[i].oid, t.oid); err != nil {
				return "", err
			}
			changed = true
		}
	}
	paths := map[string]bool{}
	for _, e := range ov.other {
		paths[e.Name] = true
	}
	for _, e := range tv.other {
		if !paths[e.Name] {
			ov.other, changed = append(ov.other, e), true
		}
	}
	if !changed {
		return ours, nil
	}
	ov.items = append(ov.items, added...)
	return ov.write(ctx)
}

// reconcile reads subtrees of a and b until every item of one is either
// identical to an item of the other (same key and object) or unrelated to
// all of them (no key a prefix of the other), so that they compare by key.
func reconcile(ctx context.Context, a, b *view) error {
	for {
		ea, eb := overlaps(a, b), overlaps(b, a)
		moreA, err := a.expand(ctx, ea)
		if err != nil {
			return err
		}
		moreB, err := b.expand(ctx, eb)
		if err != nil || !moreA && !moreB {
			return err
		}
	}
}

// overlaps returns the keys of x's subtrees that an item of y lies under,
// or that y has with other content.
func overlaps(x, y *view) map[string]bool {
	trees := map[string]string{}
	for _, it := range x.items {
		if it.tree {
			trees[it.key] = it.oid
		}
	}
	out := map[string]bool{}
	for _, it := range y.items {
		for n := 2; n < len(it.key); n += 2 {
			if _, ok := trees[it.key[:n]]; ok {
				out[it.key[:n]] = true
			}
		}
		if oid, ok := trees[it.key]; ok && oid != it.oid {
			out[it.key] = true
		}
	}
	return out
}
