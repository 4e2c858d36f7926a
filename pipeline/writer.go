package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/refs"
)

// Writer identifies this clone as an event writer. Its id orders concurrent
// events from different clones; its name and email sign chain commits.
type Writer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

func writerPath(r *gitext.Repo) string { return filepath.Join(r.CrucibleDir(), "writer.json") }

// LoadWriter reads this clone's writer, or returns nil when init has not run.
func LoadWriter(r *gitext.Repo) (*Writer, error) {
	b, err := fsutil.ReadNoPoll(writerPath(r)) // a hook's hot path
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var w Writer
	if err := json.Unmarshal(b, &w); err != nil || w.ID == "" {
		return nil, fmt.Errorf("%s is damaged; remove it and run 'git crucible init'", writerPath(r))
	}
	return &w, nil
}

// Init sets the repository up for git-crucible: a writer id for this clone
// and the identity that signs chain commits. It keeps an existing writer id
// and refreshes the identity, so it is safe to run any number of times.
func Init(ctx context.Context, r *gitext.Repo) (w *Writer, created bool, err error) {
	w, err = LoadWriter(r)
	if err != nil {
		return nil, false, err
	}
	if w == nil {
		// Distinct per clone is all that is needed; see refs.NewID.
		w, created = &Writer{ID: fmt.Sprintf("w-%08x", rand.Uint32())}, true
	}
	if w.Name, w.Email, err = r.Committer(ctx); err != nil {
		return nil, false, err
	}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, false, err
	}
	if err := fsutil.WriteAtomic(writerPath(r), append(b, '\n'), 0o644); err != nil {
		return nil, false, err
	}
	return w, created, nil
}

// identity is who signs the next chain commit: git's committer variables
// when set, else the identity recorded by init.
func (w *Writer) identity() refs.Identity {
	id := refs.Identity{Name: w.Name, Email: w.Email}
	if v := os.Getenv("GIT_COMMITTER_NAME"); v != "" {
		id.Name = v
	}
	if v := os.Getenv("GIT_COMMITTER_EMAIL"); v != "" {
		id.Email = v
	}
	return id
}
