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
	var todo []Commit
	for _, c := range commits {
		if c.Status == "" {
			todo = append(todo, c)
		}
	}
	deal := newStretches(todo, o.Jobs)
	errs := make([]error, o.Jobs)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for n := range o.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[n] = s.slotWorker(ctx, n, o, deal)
			if errs[n] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return deal.dealt, errors.Join(errs...)
}

// slotWorker tests the commits deal gives slot n+1, in order, until none
// is left or ctx ends.
func (s *Store) slotWorker(ctx context.Context, n int, o Options, deal *stretches) error {
	slot, err := s.slots().Hold(n + 1)
	if err != nil {
		return err
	}
	defer slot.Release()
	for ctx.Err() == nil {
		c, ok := deal.next(n)
		if !ok {
			return nil
		}
		if _, err := slot.Checkout(ctx, c.Commit); err != nil {
			return err
		}
		// A tree tested already (by an earlier commit of the range with
		// the same tree, in this slot or another) is not tested again.
		if err := s.test(ctx, slot.Dir, o.Gate.Command, o.Spec, c.Tree, o.Mode); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// stretches deals a range's commits to n slots: slot i gets the i-th of n
// contiguous stretches of the range, in order, as a serial run would take
// them, so that toolchain caches kept by directory (Go's build cache
// without -trimpath) find in a slot most of what its previous commit
// built. Dealt in turn, every slot built nearly every change. A slot done
// with its stretch takes the second half of the longest one left.
type stretches struct {
	mu    sync.Mutex
	left  [][]Commit
	dealt []string // the trees dealt out, in order
}

func newStretches(todo []Commit, n int) *stretches {
	st := &stretches{left: make([][]Commit, n)}
	for i := range n {
		st.left[i] = todo[i*len(todo)/n : (i+1)*len(todo)/n]
	}
	return st
}

// next is slot i's next commit: false when none is left.
func (st *stretches) next(i int) (Commit, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.left[i]) == 0 {
		longest := i
		for j, l := range st.left {
			if len(l) > len(st.left[longest]) {
				longest = j
			}
		}
		l := st.left[longest]
		st.left[longest], st.left[i] = l[:len(l)/2], l[len(l)/2:]
	}
	own := st.left[i]
	if len(own) == 0 {
		return Commit{}, false
	}
	st.left[i] = own[1:]
	st.dealt = append(st.dealt, own[0].Tree)
	return own[0], true
}
