package refs

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/gitext"
)

// Outcome says what Integrate did to a local chain.
type Outcome string

// Outcomes of Integrate.
const (
	UpToDate    Outcome = "up-to-date"   // theirs was already contained
	Created     Outcome = "created"      // the pipeline was new here
	FastForward Outcome = "fast-forward" // ours was contained in theirs
	Merged      Outcome = "merged"       // a merge commit joins both
	Archived    Outcome = "archived"     // archived here: not taken in again
)

// MergeFunc builds the merge commit of two divergent chain tips: ours is the
// local head, theirs the other clone's. The batch records no events of its
// own; its files replace ours in the merged tree.
type MergeFunc func(ours, theirs *Head) (*Batch, error)

// Integrate brings commit theirs — another clone's tip of pipeline id — into
// the local chain: it creates the ref, fast-forwards it, or writes a merge
// commit with parents (ours, theirs) built by merge. Every move is a
// compare-and-swap; when the local chain moves meanwhile, it starts over.
func (s *Store) Integrate(ctx context.Context, id, theirs string, who Identity, merge MergeFunc) (Outcome, *Head, error) {
	if err := ValidateID(id); err != nil {
		return "", nil, err
	}
	ref := PipelineRef(id)
	var outcome Outcome
	var next *Head
	err := gitext.RetryCAS(ctx, func() (err error) {
		outcome, next, err = s.integrateOnce(ctx, ref, id, theirs, who, merge)
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return outcome, next, nil
}

func (s *Store) integrateOnce(ctx context.Context, ref, id, theirs string, who Identity, merge MergeFunc) (Outcome, *Head, error) {
	ours, err := s.repo.ReadRef(ref)
	if err != nil {
		return "", nil, err
	}
	var outcome Outcome
	switch {
	case ours == theirs:
		outcome = UpToDate
	case ours == "":
		if archived, err := s.IsArchived(id); err != nil || archived {
			return Archived, nil, err
		}
		outcome = Created
	default:
		if contained, err := s.IsAncestor(ctx, theirs, ours); err != nil {
			return "", nil, err
		} else if contained {
			outcome = UpToDate
		} else if behind, err := s.IsAncestor(ctx, ours, theirs); err != nil {
			return "", nil, err
		} else if behind {
			outcome = FastForward
		} else {
			outcome = Merged
		}
	}
	switch outcome {
	case UpToDate:
		h, err := s.headAt(ctx, id, ours)
		return outcome, h, err
	case Created, FastForward:
		h, err := s.readHead(ctx, id, theirs)
		if err != nil {
			return "", nil, err
		}
		if err := s.repo.UpdateRefs(ctx, "crucible: integrate "+theirs, gitext.RefUpdate{Name: ref, Old: ours, New: theirs}); err != nil {
			return "", nil, err
		}
		s.writeCache(h)
		return outcome, h, nil
	}
	oursHead, err := s.headAt(ctx, id, ours)
	if err != nil {
		return "", nil, err
	}
	theirsHead, err := s.readHead(ctx, id, theirs)
	if err != nil {
		return "", nil, err
	}
	batch, err := merge(oursHead, theirsHead)
	if err != nil {
		return "", nil, err
	}
	if len(batch.Events) != 0 {
		return "", nil, errors.New("a merge commit records no events of its own")
	}
	next, tb, err := s.writeCommit(ctx, oursHead, batch, who, theirs)
	if err != nil {
		return "", nil, err
	}
	if err := s.repo.UpdateRefs(ctx, "crucible: merge "+theirs, gitext.RefUpdate{Name: ref, Old: ours, New: next.Commit}); err != nil {
		return "", nil, err
	}
	s.writeCache(next)
	tb.saveListings()
	// No git gc --auto here: a merge follows the git fetch that brought
	// theirs, which runs auto maintenance itself.
	return Merged, next, nil
}

// IsAncestor reports whether commit a is reachable from commit b.
func (s *Store) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	return s.repo.IsAncestor(ctx, a, b)
}

// MergeBase is gitext.Repo.MergeBase on the store's repository.
func (s *Store) MergeBase(ctx context.Context, a, b string) (string, error) {
	return s.repo.MergeBase(ctx, a, b)
}

// HeadAt reads pipeline id's chain at commit oid, which need not be its tip.
func (s *Store) HeadAt(ctx context.Context, id, oid string) (*Head, error) {
	return s.readHead(ctx, id, oid)
}

// Files lists every file of a chain commit's tree by path, with its blob id.
func (s *Store) Files(ctx context.Context, commit string) (map[string]string, error) {
	list, err := s.repo.ListTree(ctx, commit)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, f := range list {
		if f.Type != "blob" {
			return nil, fmt.Errorf("chain commit %s holds a %s at %s", short(commit), f.Type, f.Path)
		}
		files[f.Path] = f.OID
	}
	return files, nil
}
