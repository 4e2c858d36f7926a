package record

import (
	"testing"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// leftOf reads, from a task run's chain, each task's newest dispatch at
// the run's step and the worktree it ran in, the task dispatched there
// after it, and the retry a task pending with a reason is owed, once.
func TestLeftOf(t *testing.T) {
	dispatched := func(task, wt string) pipeline.DAGTaskData {
		return pipeline.DAGTaskData{Task: task, Status: "dispatched", Level: 1, Worktree: wt}
	}
	start := func(seq int, step, task string) pipeline.DispatchStart {
		return pipeline.DispatchStart{Seq: seq, Role: "implementer", Phase: 3, Template: "task", Step: step, TaskID: task}
	}
	var c chain
	c = c.add(t, pipeline.TypeDAGTask, dispatched("a", "/s/slot-1"))
	c = c.add(t, pipeline.TypeDispatchStart, start(1, "task", "a"))
	c = c.add(t, pipeline.TypeDAGTask, dispatched("b", "/s/slot-2"))
	c = c.add(t, pipeline.TypeDispatchStart, start(2, "task", "b"))
	c = c.add(t, pipeline.TypeDispatchStart, start(3, "critique", "")) // another step's
	c = c.add(t, pipeline.TypeDAGTask, dispatched("c", "/s/slot-1"))   // a's slot, taken
	c = c.add(t, pipeline.TypeDispatchStart, start(4, "task", "c"))
	c = c.add(t, pipeline.TypeDAGTask, pipeline.DAGTaskData{Task: "b", Status: "pending", Reason: "dispatch 2 completed, but its worktree /s/slot-2 is gone"})
	c = c.add(t, pipeline.TypeDAGTask, pipeline.DAGTaskData{Task: "c", Status: "pending"})
	// b's retry is owed through a kill after its next dispatched record,
	// before its dispatch: the resume makes it pending again with no reason.
	c = c.add(t, pipeline.TypeDAGTask, dispatched("b", "/s/slot-2"))
	c = c.add(t, pipeline.TypeDAGTask, pipeline.DAGTaskData{Task: "b", Status: "pending"})
	l, err := leftOf(c.events(t), "task")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]leftTask{
		"a": {worktree: "/s/slot-1", seq: 1, last: 1, reused: "c"},
		"b": {worktree: "/s/slot-2", last: 2, retry: "dispatch 2 completed, but its worktree /s/slot-2 is gone"},
		"c": {worktree: "/s/slot-1", seq: 4, last: 4},
	} {
		if got := *l.tasks[id]; got != want {
			t.Errorf("task %s: %+v, want %+v", id, got, want)
		}
	}
	if of, why := l.retry("b"); of == nil || *of != 2 || why != "dispatch 2 completed, but its worktree /s/slot-2 is gone" {
		t.Errorf("b's retry: %v %q", of, why)
	}
	if of, _ := l.retry("b"); of != nil {
		t.Errorf("b's retry taken twice: %d", *of)
	}
	if of, _ := l.retry("c"); of != nil {
		t.Errorf("c, pending with no reason, retries %d", *of)
	}
	l.saw(taskdag.Event{Task: "c", Status: manifest.Failed, Reason: "no output.yaml"})
	if of, _ := l.retry("c"); of != nil {
		t.Errorf("c, failed, retries %d", *of)
	}
	// A task made pending with a reason while the run goes on is owed its retry too.
	l.saw(taskdag.Event{Task: "a", Status: manifest.Pending, Reason: "dispatch 1 completed, but task c was dispatched in its worktree /s/slot-1 before its work was committed"})
	if of, why := l.retry("a"); of == nil || *of != 1 || why == "" {
		t.Errorf("a's retry: %v %q", of, why)
	}
}
