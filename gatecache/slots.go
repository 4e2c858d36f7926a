package gatecache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// slotDir is slot n's work tree: a detached worktree under the git dir,
// at the same path every run, so that build caches kept in it stay warm.
func (s *Store) slotDir(n int) string {
	return filepath.Join(s.dir, "slots", "slot-"+strconv.Itoa(n))
}

// prefill runs the gate at the commits the cache cannot answer in o.Jobs
// slots at once, recording each result, so that the rebase that follows
// only replays hits; it returns the trees it tested. Slot i is held by one
// run at a time.
func (s *Store) prefill(ctx context.Context, o Options, commits []Commit) ([]string, error) {
	todo := make(chan Commit)
	errs := make([]error, o.Jobs)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for n := range o.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[n] = s.slotWorker(ctx, n+1, o, todo)
			if errs[n] != nil {
				cancel()
			}
		}()
	}
	var fresh []string
feed:
	for _, c := range commits {
		if c.Status != "" {
			continue
		}
		select {
		case todo <- c:
			fresh = append(fresh, c.Tree)
		case <-ctx.Done():
			break feed
		}
	}
	close(todo)
	wg.Wait()
	return fresh, errors.Join(errs...)
}

func (s *Store) slotWorker(ctx context.Context, n int, o Options, todo <-chan Commit) error {
	dir := s.slotDir(n)
	unlock, err := fsutil.Lock(dir + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	var slot *gitext.Repo
	for c := range todo {
		if slot == nil {
			if slot, err = s.openSlot(ctx, dir, c.Commit); err != nil {
				return err
			}
		} else if _, err := slot.Git(ctx, "checkout", "-q", "--detach", "--force", c.Commit); err != nil {
			return fmt.Errorf("slot %d: %w", n, err)
		}
		if err := s.test(ctx, dir, o.Gate.Command, o.Spec, c.Tree, o.Mode); err != nil {
			return err
		}
	}
	return nil
}

// openSlot returns the slot worktree at dir checked out at commit, adding
// it (or adding it again, when git forgot it) as needed.
func (s *Store) openSlot(ctx context.Context, dir, commit string) (*gitext.Repo, error) {
	gitDir, ok := slotGitDir(dir)
	if ok {
		slot := &gitext.Repo{GitDir: gitDir, CommonDir: s.repo.CommonDir, WorkTree: dir, Format: s.repo.Format}
		if _, err := slot.Git(ctx, "checkout", "-q", "--detach", "--force", commit); err == nil {
			return slot, nil
		}
	}
	// git worktree add updates state every slot shares: one at a time.
	unlock, err := fsutil.Lock(filepath.Join(filepath.Dir(dir), "add.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	// --force: git may still list a slot whose directory went away.
	if _, err := s.repo.Git(ctx, "worktree", "add", "-q", "--force", "--detach", dir, commit); err != nil {
		return nil, err
	}
	if gitDir, ok = slotGitDir(dir); !ok {
		return nil, fmt.Errorf("%s: git worktree add left no .git file", dir)
	}
	return &gitext.Repo{GitDir: gitDir, CommonDir: s.repo.CommonDir, WorkTree: dir, Format: s.repo.Format}, nil
}

// slotGitDir reads the git dir a worktree's .git file names, when it
// still exists.
func slotGitDir(dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", false
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		return "", false
	}
	return gitDir, true
}
