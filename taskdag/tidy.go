package taskdag

import (
	"path"
	"slices"
	"sync"

	"github.com/git-crucible/git-crucible/gitext"
)

// tidySlots are the slots whose last task a runner snapshotted, each with
// its index as the snapshot left it. git add -A had made every file its
// agent left tracked (ignored ones aside, which git clean keeps too), so
// that the next checkout removes them as git clean would: while the index
// is that one, no git (another run's task, a critique) has used the slot
// since, and the slot's next task needs no git clean. Unless the task
// changed a .gitignore: a file it made ignored, which add -A left alone,
// is no longer ignored once the checkout puts the old one back.
type tidySlots struct {
	mu    sync.Mutex
	slots map[int]tidySlot
}

type tidySlot struct {
	wt    *gitext.Repo
	index gitext.IndexStamp
}

// left notes slot n's index once its task's snapshot is taken; changed
// are the paths the task changed.
func (t *tidySlots) left(n int, wt *gitext.Repo, changed []string) {
	stamp, ok := wt.StampIndex()
	if !ok || slices.ContainsFunc(changed, func(p string) bool { return path.Base(p) == ".gitignore" }) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.slots == nil {
		t.slots = map[int]tidySlot{}
	}
	t.slots[n] = tidySlot{wt, stamp}
}

// take reports whether slot n, held, is as its last snapshot left it, and
// forgets it: the slot is about to be checked out again.
func (t *tidySlots) take(n int) bool {
	t.mu.Lock()
	s, ok := t.slots[n]
	delete(t.slots, n)
	t.mu.Unlock()
	if !ok {
		return false
	}
	now, read := s.wt.StampIndex()
	return read && s.index.Same(now)
}
