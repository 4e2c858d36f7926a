package gatecache

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/git-crucible/git-crucible/internal/wtpool"
)

// slots are the gate's worktrees: detached, under the git dir, at the
// same path every run, so that build caches kept in them stay warm.
func (s *Store) slots() wtpool.Pool {
	return wtpool.Pool{Repo: s.repo, Dir: filepath.Join(s.dir, "slots")}
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
	slot, err := s.slots().Hold(n)
	if err != nil {
		return err
	}
	defer slot.Release()
	for c := range todo {
		if _, err := slot.Checkout(ctx, c.Commit); err != nil {
			return err
		}
		if err := s.test(ctx, slot.Dir, o.Gate.Command, o.Spec, c.Tree, o.Mode); err != nil {
			return err
		}
	}
	return nil
}
