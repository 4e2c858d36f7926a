package gatecache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

// marker is what a run under way leaves in the worktree's git dir, beside
// the rebase it runs: enough to put the branch back and keep what was
// tested if the run is killed.
type marker struct {
	Run       string   `json:"run"`    // the run's directory: gate, todo, results, logs
	Head      string   `json:"head"`   // HEAD's commit before the rebase
	Branch    string   `json:"branch"` // the ref HEAD was on, "" when detached
	Base      string   `json:"base"`
	Gate      Gate     `json:"gate"`
	Spec      string   `json:"spec"`
	Mode      Mode     `json:"mode"`
	KeepGoing bool     `json:"keep_going"`
	Commits   []Commit `json:"commits"` // the range, by the index the results name
}

func markerPath(repo *gitext.Repo) string {
	return filepath.Join(repo.GitDir, "crucible-verify-commits")
}

func (m marker) write(repo *gitext.Repo) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(markerPath(repo), b, 0o644)
}

func readMarker(repo *gitext.Repo) (marker, bool, error) {
	var m marker
	b, err := os.ReadFile(markerPath(repo))
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: %w", markerPath(repo), err)
	}
	return m, true, nil
}

func removeMarker(repo *gitext.Repo) { _ = os.Remove(markerPath(repo)) }

// abortRebase aborts the rebase a run left under way, which puts the
// branch back. One git cannot abort (a file in the way) stays, with the
// run's marker and directory, for verify-commits --abort to finish.
func (s *Store) abortRebase(ctx context.Context) error {
	if s.repo.Operation() != "rebase" {
		return nil
	}
	if _, err := s.repo.GitEnv(context.WithoutCancel(ctx), s.repo.WorkTree, nil, "rebase", "--abort"); err != nil {
		return outcome.WithHints(fmt.Errorf("cannot abort the rebase: %w", err),
			"move what git names out of the way, then: git crucible verify-commits --abort")
	}
	return nil
}

// cleanUp removes run's directory and the marker, unless its rebase is
// still under way: --abort and --continue need them to put it back.
func (s *Store) cleanUp(run string) {
	if s.repo.Operation() == "rebase" {
		return
	}
	removeMarker(s.repo)
	os.RemoveAll(run)
}

// lockWorktree makes sure one run at a time rebases in this worktree (a
// second would abort the first's rebase as its own); the kernel releases
// the lock when its holder dies.
func lockWorktree(repo *gitext.Repo) (unlock func(), err error) {
	unlock, err = fsutil.TryLock(markerPath(repo)+".lock", []byte(gitext.Owner()))
	var held *fsutil.HeldError
	if errors.As(err, &held) {
		return nil, &outcome.Refused{Err: errors.New("another verify-commits is running in this worktree")}
	}
	return unlock, err
}

// errInterrupted says a run was killed here, and how to go on.
func errInterrupted(err error) error {
	if err != nil {
		return err
	}
	return outcome.WithHints(&outcome.Refused{Err: errors.New("a verify-commits run was interrupted in this worktree; its rebase may still be under way")},
		"keep what it tested and run again: git crucible verify-commits --continue",
		"or put everything back as it was: git crucible verify-commits --abort")
}

// Interrupted is a killed run, recovered: the branch back as it was, the
// results it had recorded kept. Options run it again.
type Interrupted struct {
	Options Options
	Head    string
	Branch  string
	Kept    int // results the killed run had, now recorded
}

// Interrupted reports whether a run was killed in this worktree, for
// Recover to put back.
func (s *Store) Interrupted() (bool, error) {
	_, ok, err := readMarker(s.repo)
	return ok, err
}

// Recover puts back a run that was killed mid-way (a stale rebase-merge
// directory and the run's marker): it records the results the run's exec
// lines had written, aborts the rebase, checks that HEAD and its branch are
// what they were, and forgets the run. A rebase that verify-commits did
// not start is left alone.
func (s *Store) Recover(ctx context.Context) (*Interrupted, error) {
	unlock, err := lockWorktree(s.repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, ok, err := readMarker(s.repo)
	if err != nil {
		return nil, err
	}
	if !ok {
		if op := s.repo.Operation(); op != "" {
			return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("the %s under way was not started by verify-commits", op)},
				"see: git status")
		}
		return nil, &outcome.Refused{Err: errors.New("no interrupted verify-commits run in this worktree")}
	}
	commits := append([]Commit(nil), m.Commits...)
	if err := s.collect(m.Run, m.Spec, commits); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	kept := 0
	for _, c := range commits {
		if c.Status != "" {
			kept++
		}
	}
	if _, err := s.Flush(ctx); err != nil {
		return nil, err
	}
	if s.repo.Operation() == "rebase" {
		if _, err := s.repo.GitEnv(ctx, s.repo.WorkTree, nil, "rebase", "--abort"); err != nil {
			return nil, fmt.Errorf("cannot abort the rebase: %w", err)
		}
	}
	if err := s.checkRestored(m); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(m.Run); err != nil {
		return nil, err
	}
	removeMarker(s.repo)
	return &Interrupted{Head: m.Head, Branch: m.Branch, Kept: kept,
		Options: Options{Base: m.Base, Gate: m.Gate, Spec: m.Spec, Mode: m.Mode, KeepGoing: m.KeepGoing}}, nil
}

// checkRestored makes sure HEAD is back on the branch at the commit it
// was on: the rebase moves the branch only when it finishes, so the abort
// restores it, and anything else is said, not papered over.
func (s *Store) checkRestored(m marker) error {
	branch, err := s.repo.ReadSymref("HEAD")
	if err != nil {
		return err
	}
	head, err := s.repo.HeadCommit()
	if err != nil {
		return err
	}
	if branch != m.Branch || head != m.Head {
		where := m.Head
		if m.Branch != "" {
			where = m.Branch + " at " + m.Head
		}
		return outcome.WithHints(fmt.Errorf("HEAD is not back where the run found it (%s)", where),
			"see: git reflog")
	}
	return nil
}
