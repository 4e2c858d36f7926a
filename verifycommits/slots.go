package verifycommits

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
// run at a time. Unless KeepGoing, nothing past the first failure is
// tested, as the rebase would not reach it: a fix rewrites what follows.
func (s *Store) prefill(ctx context.Context, o Options, commits []Commit) ([]string, error) {
	var todo []Commit
	for _, c := range commits {
		if c.Status == Fail && !o.KeepGoing {
			break
		}
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
		c, at, ok := deal.next(n)
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
		if o.KeepGoing {
			continue
		}
		if r, ok, err := s.Lookup(c.Tree, o.Spec); err != nil {
			return err
		} else if ok && r.Status == Fail {
			deal.cut(at)
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
	todo  []Commit
	left  [][2]int // slot i's stretch: todo[left[i][0]:left[i][1]]
	dealt []string // the trees dealt out, in order
}

func newStretches(todo []Commit, n int) *stretches {
	st := &stretches{todo: todo, left: make([][2]int, n)}
	for i := range n {
		st.left[i] = [2]int{i * len(todo) / n, (i + 1) * len(todo) / n}
	}
	return st
}

// next is slot i's next commit and its index in the list: false when none
// is left.
func (st *stretches) next(i int) (Commit, int, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	size := func(l [2]int) int { return l[1] - l[0] }
	if size(st.left[i]) == 0 {
		longest := i
		for j, l := range st.left {
			if size(l) > size(st.left[longest]) {
				longest = j
			}
		}
		l := st.left[longest]
		mid := l[0] + size(l)/2
		st.left[longest], st.left[i] = [2]int{l[0], mid}, [2]int{mid, l[1]}
	}
	at := st.left[i][0]
	if at == st.left[i][1] {
		return Commit{}, 0, false
	}
	st.left[i][0]++
	st.dealt = append(st.dealt, st.todo[at].Tree)
	return st.todo[at], at, true
}

// cut deals nothing more from the list's index at on.
func (st *stretches) cut(at int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, l := range st.left {
		end := min(l[1], at)
		st.left[i] = [2]int{min(l[0], end), end}
	}
}
