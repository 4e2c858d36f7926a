package engine

import (
	"testing"

	"github.com/git-crucible/git-crucible/pipespec"
)

// TestDryWalk: the build's flags that change its walk change the dry
// run's steps the same way: --design skips its writer, --yes approves the
// pause, --max-parallel above 1 makes Phase 3 a task DAG.
func TestDryWalk(t *testing.T) {
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		o      DryWalkOptions
		step   string
		action string
		detail string
	}{
		{"design written", DryWalkOptions{}, "design", "dispatch", "design-writer:  (template design-writer); skipped if docs/design.md exists"},
		{"design supplied", DryWalkOptions{Design: "my.md"}, "design", "skip", "the design is my.md (--design): not dispatched"},
		{"pause", DryWalkOptions{}, "approve", "pause", "for approval: the build stops here; --resume --yes goes on"},
		{"yes", DryWalkOptions{Yes: true}, "approve", "approve", "approved by --yes, with the commands agents wrote so far"},
		{"serial", DryWalkOptions{}, "tasks", "tasks", "each task of the plan (tasks), one at a time, each committed"},
		{"parallel", DryWalkOptions{MaxParallel: 3}, "tasks", "tasks",
			"each task of the plan (tasks) as a task DAG: up to 3 implementers at once, each in its own worktree, each task committed"},
	} {
		var found bool
		for _, d := range DryWalk(sp, nil, c.o) {
			if d.Step != c.step || d.PerTask {
				continue
			}
			found = true
			if d.Action != c.action || d.Detail != c.detail {
				t.Errorf("%s: step %s is %s %q, want %s %q", c.name, c.step, d.Action, d.Detail, c.action, c.detail)
			}
		}
		if !found {
			t.Errorf("%s: no step %s in the walk", c.name, c.step)
		}
	}
}
