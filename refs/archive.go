package refs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// ArchivePrefix holds the pipelines put aside (a stale one, say): each
// chain renamed out of PipelinePrefix, whole, never deleted. An archive ref
// is also this clone's tombstone: a chain of that id fetched from a clone
// that still has it active is not taken in again (Integrate's Archived).
const ArchivePrefix = "refs/crucible/archive/"

// ArchiveRef is the ref holding archived pipeline id's chain.
func ArchiveRef(id string) string { return ArchivePrefix + id }

// ErrArchived refuses to bring back, or write to, a pipeline archived here.
var ErrArchived = errors.New("the pipeline is archived")

// Archive renames pipeline id's ref to ArchiveRef(id) in one transaction,
// with compare-and-swap on both, after clearing branch's active marker when
// it names id ("" for no branch). It returns the archived tip.
func (s *Store) Archive(ctx context.Context, id, branch string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	if old, err := s.repo.ReadRef(ArchiveRef(id)); err != nil || old != "" {
		if err == nil {
			err = fmt.Errorf("%w: %s was archived before (%s)", ErrArchived, id, ArchiveRef(id))
		}
		return "", err
	}
	if _, err := s.Tip(id); err != nil {
		return "", err
	}
	// The marker goes first: a crash after it leaves an inactive pipeline,
	// never a marker naming a ref that is gone.
	wasActive := false
	if branch != "" {
		if active, err := s.Active(branch); err != nil {
			return "", err
		} else if active == id {
			if err := s.repo.DeleteSymref(ActiveRef(branch), PipelineRef(id)); err != nil {
				return "", err
			}
			wasActive = true
		}
	}
	var tip string
	err := gitext.RetryCAS(ctx, func() error {
		var err error
		if tip, err = s.Tip(id); err != nil {
			return err
		}
		return s.repo.UpdateRefs(ctx, "crucible: archive "+id,
			gitext.RefUpdate{Name: PipelineRef(id), Old: tip},
			gitext.RefUpdate{Name: ArchiveRef(id), New: tip})
	})
	if err != nil && wasActive {
		// Nothing was renamed: it stays active, unless another became so.
		s.SetActive(branch, id, "")
	}
	return tip, err
}

// ListArchived returns every archived pipeline id, sorted.
func (s *Store) ListArchived(ctx context.Context) ([]string, error) {
	list, err := s.repo.ListRefs(ctx, ArchivePrefix)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list))
	for _, r := range list {
		ids = append(ids, strings.TrimPrefix(r.Name, ArchivePrefix))
	}
	return ids, nil
}

// ArchivedHead returns archived pipeline id's tip; ErrNoPipeline when it
// is not archived.
func (s *Store) ArchivedHead(ctx context.Context, id string) (*Head, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	oid, err := s.repo.ReadRef(ArchiveRef(id))
	if err != nil {
		return nil, err
	}
	if oid == "" {
		return nil, fmt.Errorf("%w: %s is not archived", ErrNoPipeline, id)
	}
	return s.headAt(ctx, id, oid)
}

// IsArchived reports whether id is archived here.
func (s *Store) IsArchived(id string) (bool, error) {
	oid, err := s.repo.ReadRef(ArchiveRef(id))
	return oid != "", err
}
