// Package wtpool keeps a pool of detached linked worktrees at stable
// paths under a directory, each held by one user at a time through a lock
// file beside it. A slot is reused from one commit to the
// next by a checkout rather than a new worktree, so set-up stays cheap
// and build caches kept in it stay warm. verify-commits' gate slots and the
// task DAG's task worktrees both use it.
package wtpool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Pool is the slots under Dir of Repo's worktrees.
type Pool struct {
	Repo *gitext.Repo
	Dir  string
	// Hidden: Dir is in a work tree, and holds a .gitignore that makes
	// git ignore it whole, so that git status there never shows the slots.
	Hidden bool
}

// ignoreAll is the .gitignore of a hidden pool.
const ignoreAll = "# git-crucible: worktrees its agents work in\n*\n"

// Path is slot n's work tree.
func (p Pool) Path(n int) string {
	return filepath.Join(p.Dir, "slot-"+strconv.Itoa(n))
}

// Slot is one slot, held until Release.
type Slot struct {
	N      int
	Dir    string
	pool   Pool
	repo   *gitext.Repo // nil until the first Checkout
	unlock func()
}

// Hold waits for slot n's lock and takes it. The lock is an flock, so a
// killed holder never blocks the next.
func (p Pool) Hold(n int) (*Slot, error) {
	dir := p.Path(n)
	if p.Hidden {
		if err := p.hide(); err != nil {
			return nil, err
		}
	}
	unlock, err := fsutil.Lock(dir + ".lock")
	if err != nil {
		return nil, err
	}
	return &Slot{N: n, Dir: dir, pool: p, unlock: unlock}, nil
}

// Reopen holds the slot whose work tree is dir and opens the worktree
// its last holder left there as it is, without a checkout: false (and
// nothing held) when dir is none of the pool's slots or holds no
// worktree of the repository.
func (p Pool) Reopen(dir string) (*Slot, *gitext.Repo, bool, error) {
	num, isSlot := strings.CutPrefix(filepath.Base(dir), "slot-")
	n, err := strconv.Atoi(num)
	if !isSlot || err != nil || n < 1 || filepath.Clean(dir) != p.Path(n) {
		return nil, nil, false, nil
	}
	if _, ok := p.worktreeGitDir(dir); !ok {
		return nil, nil, false, nil // nothing to hold: Hold would make the pool's directory
	}
	s, err := p.Hold(n)
	if err != nil {
		return nil, nil, false, err
	}
	gitDir, ok := p.worktreeGitDir(s.Dir)
	if !ok { // removed while we waited for its lock
		s.Release()
		return nil, nil, false, nil
	}
	s.repo = p.worktree(gitDir, s.Dir)
	return s, s.repo, true, nil
}

// hide makes Dir, ignored by git, before anything is put in it.
func (p Pool) hide() error {
	ignore := filepath.Join(p.Dir, ".gitignore")
	if _, err := os.Lstat(ignore); err == nil {
		return nil
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return err
	}
	return fsutil.WriteAtomic(ignore, []byte(ignoreAll), 0o644)
}

// Release lets the slot go to its next holder.
func (s *Slot) Release() { s.unlock() }

// Checkout puts the slot's work tree at commit, detached, forcing away
// changes to tracked files, and returns the worktree's repository. The
// first checkout of a hold reuses the worktree a previous holder left, or
// adds it (again, when git forgot it).
func (s *Slot) Checkout(ctx context.Context, commit string) (*gitext.Repo, error) {
	if s.repo != nil {
		if err := locking(s.repo).CheckoutDetached(ctx, commit); err != nil {
			return nil, fmt.Errorf("slot %d: %w", s.N, err)
		}
		return s.repo, nil
	}
	repo, err := s.pool.open(ctx, s.Dir, commit)
	if err != nil {
		return nil, err
	}
	s.repo = repo
	return repo, nil
}

func (p Pool) open(ctx context.Context, dir, commit string) (*gitext.Repo, error) {
	if gitDir, ok := p.worktreeGitDir(dir); ok {
		slot := p.worktree(gitDir, dir)
		if err := locking(slot).CheckoutDetached(ctx, commit); err == nil {
			return slot, nil
		}
	}
	// git worktree add updates state every slot shares: one at a time.
	unlock, err := fsutil.Lock(filepath.Join(p.Dir, "add.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	// Git may still list a slot whose directory went away, or one a killed
	// git worktree add left locked: WorktreeAdd replaces them.
	if err := locking(p.Repo).WorktreeAdd(ctx, dir, commit); err != nil {
		return nil, err
	}
	gitDir, ok := p.worktreeGitDir(dir)
	if !ok {
		return nil, fmt.Errorf("%s: git worktree add left no .git file", dir)
	}
	return p.worktree(gitDir, dir), nil
}

// locking is repo running git that takes its locks (a worktree's HEAD and
// index, the worktrees' shared records) in a process group of its own.
func locking(repo *gitext.Repo) *gitext.Repo { return repo.With(gitext.Exec{Group: true}) }

func (p Pool) worktree(gitDir, dir string) *gitext.Repo {
	return &gitext.Repo{GitDir: gitDir, CommonDir: p.Repo.CommonDir, WorkTree: dir, Format: p.Repo.Format}
}

// worktreeGitDir is the git dir of the slot worktree at dir: the one its
// .git file names, only if that is one of this repository's worktrees
// whose own record points back at dir. The .git file is in the tree an
// agent edits, so it may name anything — the main repository's git dir,
// whose HEAD and index a checkout there would overwrite.
func (p Pool) worktreeGitDir(dir string) (string, bool) {
	dotGit := filepath.Join(dir, ".git")
	b, err := fsutil.ReadRegular(dotGit, 4096, errNotSlot)
	if err != nil {
		return "", false
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || filepath.Dir(filepath.Clean(gitDir)) != filepath.Join(p.Repo.CommonDir, "worktrees") {
		return "", false
	}
	back, err := fsutil.ReadRegular(filepath.Join(gitDir, "gitdir"), 4096, errNotSlot)
	if err != nil || filepath.Clean(strings.TrimSpace(string(back))) != filepath.Clean(dotGit) {
		return "", false
	}
	return gitDir, true
}

// errNotSlot refuses a .git or gitdir file that is not a regular file.
var errNotSlot = errors.New("not a slot worktree's own file")

// Slots are the numbers of the pool's slots that have a directory, in
// order.
func (p Pool) Slots() ([]int, error) {
	entries, err := os.ReadDir(p.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var slots []int
	for _, d := range entries {
		num, ok := strings.CutPrefix(d.Name(), "slot-")
		if n, err := strconv.Atoi(num); ok && err == nil && n > 0 && d.IsDir() && d.Name() == "slot-"+strconv.Itoa(n) {
			slots = append(slots, n)
		}
	}
	slices.Sort(slots)
	return slots, nil
}

// Worktree opens slot n's worktree as its last holder left it, without
// holding it; false when the slot holds no worktree of the repository.
func (p Pool) Worktree(n int) (*gitext.Repo, bool) {
	gitDir, ok := p.worktreeGitDir(p.Path(n))
	if !ok {
		return nil, false
	}
	return p.worktree(gitDir, p.Path(n)), true
}

// Remove removes slot n, held meanwhile: its worktree (git worktree
// remove --force: what is in it goes, uncommitted changes too; the
// caller decides they may), or its directory when it holds none of the
// repository's, and its lock file.
func (p Pool) Remove(ctx context.Context, n int) error {
	s, err := p.Hold(n)
	if err != nil {
		return err
	}
	defer os.Remove(s.Dir + ".lock")
	defer s.Release()
	if _, ok := p.worktreeGitDir(s.Dir); ok {
		unlock, err := fsutil.Lock(filepath.Join(p.Dir, "add.lock"))
		if err != nil {
			return err
		}
		defer unlock()
		if err := locking(p.Repo).WorktreeRemove(ctx, s.Dir); err != nil {
			return fmt.Errorf("slot %d: %w", n, err)
		}
	}
	return os.RemoveAll(s.Dir)
}

// Prune forgets the worktrees whose directories are gone (git worktree
// prune) and, when the pool has no slot left, removes its directory.
func (p Pool) Prune(ctx context.Context) error {
	if err := locking(p.Repo).WorktreePrune(ctx); err != nil {
		return err
	}
	slots, err := p.Slots()
	if err != nil || len(slots) > 0 {
		return err
	}
	entries, err := os.ReadDir(p.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, d := range entries {
		name := d.Name()
		if name != ".gitignore" && name != "add.lock" && !strings.HasSuffix(name, ".lock") {
			return nil // not ours: the directory stays
		}
	}
	return os.RemoveAll(p.Dir)
}
