package engine

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// chain is events as ProgressOf reads them.
type chain []pipeline.Event

func (c chain) add(t *testing.T, typ string, data any) chain {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return append(c, pipeline.Event{Seq: int64(len(c) + 1), Type: typ, Data: b})
}

// steps adds a step event of status for each step id of phase, in task.
func (c chain) steps(t *testing.T, status string, phase ledger.Phase, task string, ids ...string) chain {
	for _, id := range ids {
		c = c.add(t, pipeline.TypeStep, pipeline.StepData{Phase: phase, Step: id, Task: task, Status: status})
	}
	return c
}

// dispatch adds a dispatch at p by role, finished with status ("" for in flight).
func (c chain) dispatch(t *testing.T, p pipeline.Point, role, status string) chain {
	seq := 1
	for _, e := range c {
		if e.Type == pipeline.TypeDispatchStart {
			seq++
		}
	}
	c = c.add(t, pipeline.TypeDispatchStart, pipeline.DispatchStart{Seq: seq, Role: role, Phase: p.Phase, Template: role,
		Step: p.Step, TaskID: p.Task, Round: p.Round})
	if status != "" {
		c = c.add(t, pipeline.TypeDispatchFinish, pipeline.DispatchFinish{Seq: seq, Status: status})
	}
	return c
}

func TestProgressOf(t *testing.T) {
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	done := pipeline.StepDone
	phase1 := func(t *testing.T) chain {
		return chain{}.steps(t, done, 1, "", "pre-design", "design", "pre-design-gate", "design-gate", "acceptance-tests", "acceptance-red", "approve")
	}
	upToTasks := func(t *testing.T) chain {
		return phase1(t).steps(t, done, 2, "", "pre-plan", "plan", "plan-review", "pre-plan-gate", "plan-gate").steps(t, done, 3, "", "pre-execute")
	}
	task := func(t *testing.T, c chain, id string) chain {
		return c.steps(t, done, 3, id, "pre-task", "implement", "task-check", "task-review")
	}
	gate := pipeline.Point{Phase: 1, Step: "design-gate"}
	at := func(p pipeline.Point, round int) pipeline.Point { p.Round = round; return p }
	for _, c := range []struct {
		name       string
		events     func(t *testing.T) chain
		tasks      []string
		next       pipeline.Point
		needTasks  bool
		dispatches []int // seqs
		status     string
	}{
		{"nothing yet", func(t *testing.T) chain { return nil }, nil, pipeline.Point{Phase: 1, Step: "pre-design"}, false, nil, ""},
		{"after the design", func(t *testing.T) chain { return chain{}.steps(t, done, 1, "", "pre-design", "design") },
			nil, pipeline.Point{Phase: 1, Step: "pre-design-gate"}, false, nil, ""},
		{"a dispatch finished, its step not recorded", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design").dispatch(t, pipeline.Point{Phase: 1, Step: "design"}, "design-writer", "completed")
		}, nil, pipeline.Point{Phase: 1, Step: "design"}, false, []int{1}, ""},
		{"gate round 1 found, not fixed", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design", "design", "pre-design-gate").dispatch(t, at(gate, 1), "red-team", "completed")
		}, nil, at(gate, 1), false, []int{1}, ""},
		{"gate round 1 fixed", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design", "design", "pre-design-gate").
				dispatch(t, at(gate, 1), "red-team", "completed").dispatch(t, at(gate, 1), "fixer", "completed")
		}, nil, at(gate, 2), false, []int{1, 2}, ""},
		{"gate round 2's fix failed", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design", "design", "pre-design-gate").
				dispatch(t, at(gate, 1), "red-team", "completed").dispatch(t, at(gate, 1), "fixer", "completed").
				dispatch(t, at(gate, 2), "red-team", "completed").dispatch(t, at(gate, 2), "fixer", "failed")
		}, nil, at(gate, 2), false, []int{1, 2, 3, 4}, ""},
		{"gate escalated", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design", "design", "pre-design-gate").
				dispatch(t, at(gate, 1), "red-team", "completed").steps(t, pipeline.StepEscalated, 1, "", "design-gate")
		}, nil, at(gate, 1), false, []int{1}, pipeline.StepEscalated},
		{"done, then failed on a later try", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design").steps(t, pipeline.StepFailed, 1, "", "pre-design")
		}, nil, pipeline.Point{Phase: 1, Step: "pre-design"}, false, nil, pipeline.StepFailed},
		{"waiting for approval", func(t *testing.T) chain {
			return chain{}.steps(t, done, 1, "", "pre-design", "design", "pre-design-gate", "design-gate", "acceptance-tests", "acceptance-red").
				steps(t, pipeline.StepWaiting, 1, "", "approve")
		}, nil, pipeline.Point{Phase: 1, Step: "approve"}, false, nil, pipeline.StepWaiting},
		{"tasks, plan unknown", upToTasks, nil, pipeline.Point{Phase: 3, Step: "tasks"}, true, nil, ""},
		{"task 2 after task 1", func(t *testing.T) chain {
			c := task(t, upToTasks(t), "1").steps(t, done, 3, "2", "pre-task")
			return c.dispatch(t, pipeline.Point{Phase: 3, Step: "implement", Task: "1"}, "implementer", "completed").
				dispatch(t, pipeline.Point{Phase: 3, Step: "implement", Task: "2"}, "implementer", "")
		}, []string{"1", "2"}, pipeline.Point{Phase: 3, Step: "implement", Task: "2"}, false, []int{2}, ""},
		{"task review round 1 fixed", func(t *testing.T) chain {
			c := upToTasks(t).steps(t, done, 3, "a", "pre-task", "implement", "task-check")
			p := pipeline.Point{Phase: 3, Step: "task-review", Task: "a", Round: 1}
			return c.dispatch(t, p, "reviewer", "completed").dispatch(t, p, "implementer", "completed")
		}, []string{"a"}, pipeline.Point{Phase: 3, Step: "task-review", Task: "a", Round: 2}, false, []int{1, 2}, ""},
		{"every task done, the tasks step not", func(t *testing.T) chain { return task(t, task(t, upToTasks(t), "1"), "2") },
			[]string{"1", "2"}, pipeline.Point{Phase: 3, Step: "tasks"}, false, nil, ""},
		{"tasks done: no plan needed", func(t *testing.T) chain { return upToTasks(t).steps(t, done, 3, "", "tasks") },
			nil, pipeline.Point{Phase: 4, Step: "pre-completion"}, false, nil, ""},
		{"all done", func(t *testing.T) chain {
			return upToTasks(t).steps(t, done, 3, "", "tasks").
				steps(t, done, 4, "", "pre-completion", "acceptance-green", "test-suite", "pre-code-review", "code-review", "pre-impl-gate", "code-gate")
		}, nil, pipeline.Point{}, false, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, err := ProgressOf(sp, c.tasks, c.events(t))
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int
			for _, r := range pr.Dispatches {
				seqs = append(seqs, r.Seq)
			}
			key := c.next
			key.Round = 0
			if pr.Next != c.next || pr.NeedTasks != c.needTasks || !slices.Equal(seqs, c.dispatches) || pr.Steps[key].Status != c.status {
				t.Fatalf("next %+v needTasks %v dispatches %v status %q\nwant %+v %v %v %q",
					pr.Next, pr.NeedTasks, seqs, pr.Steps[key].Status, c.next, c.needTasks, c.dispatches, c.status)
			}
		})
	}
}

// TestRecordStep: a step recorded on the chain moves the engine's progress.
func TestRecordStep(t *testing.T) {
	e := newEngine(t, shAgent("true"))
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RecordStep(t.Context(), pipeline.Point{Phase: 1, Step: "pre-design"}, pipeline.StepDone, "checkpoint taken"); err != nil {
		t.Fatal(err)
	}
	pr, err := e.Progress(t.Context(), sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (pipeline.Point{Phase: 1, Step: "design"}); pr.Next != want || pr.Steps[pipeline.Point{Phase: 1, Step: "pre-design"}].Result != "checkpoint taken" {
		t.Fatalf("progress %+v", pr)
	}
	if err := e.RecordStep(t.Context(), pipeline.Point{Phase: 1, Step: "design"}, "finished", ""); err == nil {
		t.Fatal("a step with an unknown status was recorded")
	}
}
