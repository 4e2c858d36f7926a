package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// walkParallel walks the default spec with Yes at max-parallel n.
func walkParallel(t *testing.T, e *Engine, n int) WalkResult {
	t.Helper()
	res, err := e.Walk(t.Context(), WalkOptions{Spec: mustDefault(t), Yes: true, MaxParallel: n})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWalkParallel: at max-parallel 2 the plan's independent tasks 1 and
// 3 have their implementers running at once (each sleeps a second: both
// dispatches start before either finishes), each committed on the branch
// at the level's end, task 2 after them; every task's check and review
// run, and the phases close as in a serial walk.
func TestWalkParallel(t *testing.T) {
	e, log := sampleEngine(t, "parallel")
	if res := walkParallel(t, e, 2); res.Status != WalkDone {
		t.Fatalf("walk: %+v", res)
	}
	want := []ledger.Status{ledger.Pass, ledger.Pass, ledger.Complete, ledger.Pass}
	if got := statuses(t, e); !equalStatuses(got, want) {
		t.Errorf("ledger %v, want %v", got, want)
	}
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The implementers' dispatches, in the chain's order: start or finish, and the task.
	seqTask := map[int]string{}
	var order []string
	for _, ev := range events {
		switch ev.Type {
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			if err := pipeline.DecodeData(ev, &d); err != nil {
				t.Fatal(err)
			}
			if d.Step == "implement" {
				seqTask[d.Seq] = d.TaskID
				order = append(order, "start "+d.TaskID)
			}
		case pipeline.TypeDispatchFinish:
			var d pipeline.DispatchFinish
			if err := pipeline.DecodeData(ev, &d); err != nil {
				t.Fatal(err)
			}
			if id, ok := seqTask[d.Seq]; ok {
				order = append(order, "finish "+id)
			}
		}
	}
	if len(order) != 6 || !slices.Equal(sorted(order[:2]), []string{"start 1", "start 3"}) ||
		!slices.Equal(sorted(order[2:4]), []string{"finish 1", "finish 3"}) || !slices.Equal(order[4:], []string{"start 2", "finish 2"}) {
		t.Errorf("the implementers ran %q, want 1 and 3 at once, then 2", order)
	}
	steps, err := pipeline.StepsOf(events)
	if err != nil {
		t.Fatal(err)
	}
	for task, check := range map[string]string{"1": "exit 0: sh test/unit.sh", "2": "exit 0: sh test/unit.sh", "3": "skipped: no fast gate"} {
		for step, result := range map[string]string{"implement": "committed ", "task-check": check, "task-review": ""} {
			s := steps[pipeline.Point{Phase: ledger.Execute, Step: step, Task: task}]
			if s.Status != pipeline.StepDone || !strings.HasPrefix(s.Result, result) {
				t.Errorf("task %s's %s: %s %q", task, step, s.Status, s.Result)
			}
		}
	}
	commits := gittest.Git(t, e.Workdir, "log", "--format=%s|%(trailers:key=Crucible-Phase,key=Crucible-Task,valueonly,separator=%x2C)")
	// Phases 1 and 2 committed their work as they ended: no commit of
	// what they left is needed before the tasks' worktrees start.
	if want := "Test the name argument (task 2)|3,2\nDocument the name argument (task 3)|3,3\nTake the name argument (task 1)|3,1\n" +
		"Phase 2 (Plan) of pipeline " + e.ID + ": docs/plan.md|2\n" +
		"Phase 1 (Design) of pipeline " + e.ID + ": docs/design.md, test/acceptance.sh|1\nsample|"; commits != want {
		t.Errorf("commits:\n%s\nwant\n%s", commits, want)
	}
	if st := gittest.Git(t, e.Workdir, "status", "--porcelain"); st != "" {
		t.Errorf("the work tree is not the branch's:\n%s", st)
	}
	if got := implementersRan(t, log); got != "[task=1 round= task=2 round= task=3 round=]" {
		t.Errorf("implementers %s, want each task's once", got)
	}
	if problems, err := e.Service.Verify(t.Context(), e.ID); err != nil || len(problems) != 0 {
		t.Errorf("verify: %v %v", problems, err)
	}
}

// implementersRan are the Phase 3 implementers the scripted agent's log
// says ran, sorted.
func implementersRan(t *testing.T, log string) string {
	t.Helper()
	var ran []string
	for _, l := range logLines(t, log) {
		if _, rest, ok := strings.Cut(l, " implementer phase=3 "); ok {
			ran = append(ran, rest)
		}
	}
	return fmt.Sprint(sorted(ran))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestWalkParallelTaskFails: a task whose implementer fails in a parallel
// level stops the walk at its implement step once the tasks that do not
// depend on it are done; a resume runs it again (and only it).
func TestWalkParallelTaskFails(t *testing.T) {
	e, log := sampleEngine(t, "parallel-fails")
	res := walkParallel(t, e, 2)
	want := pipeline.Point{Phase: ledger.Execute, Step: "implement", Task: "3"}
	// Tasks 1 and 3 start together: either may be dispatch 11.
	if res.Status != WalkFailed || res.Point != want || !regexp.MustCompile(`^task 3: dispatch 1[12] failed: it reports failure: the usage cannot be documented$`).MatchString(res.Reason) {
		t.Fatalf("walk: %+v, want failed at %+v", res, want)
	}
	if got := gittest.Git(t, e.Workdir, "log", "-2", "--format=%s"); got != "Test the name argument (task 2)\nTake the name argument (task 1)" {
		t.Errorf("commits:\n%s", got)
	}
	// The implementer of task 3 does better the second time.
	conf := filepath.Join(e.Service.Repo.GitDir, "crucible", "agents.toml")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	write(t, conf, strings.Replace(string(b), `"parallel-fails"`, `"parallel"`, 1))
	if e.Agents, err = agent.Load(t.Context(), e.Service.Repo); err != nil {
		t.Fatal(err)
	}
	if res := walkParallel(t, e, 2); res.Status != WalkDone {
		t.Fatalf("resume: %+v", res)
	}
	if got := gittest.Git(t, e.Workdir, "log", "-1", "--format=%s"); got != "Document the name argument (task 3)" {
		t.Errorf("the resume's commit: %s", got)
	}
	if got := implementersRan(t, log); got != "[task=1 round= task=2 round= task=3 round= task=3 round=]" {
		t.Errorf("implementers %s, want task 3's twice, the others' once", got)
	}
}

// TestWalkKeepsPhase3Serial: a Phase 3 begun one task at a time goes on so
// when resumed at max-parallel 2: no task run begins, and task 1's fast
// gate, which the breaks scenario fails, escalates again where it was.
func TestWalkKeepsPhase3Serial(t *testing.T) {
	e, _ := sampleEngine(t, "breaks")
	first := walkParallel(t, e, 1)
	if first.Status != WalkEscalated || first.Point.Step != "task-check" {
		t.Fatalf("walk: %+v", first)
	}
	if again := walkParallel(t, e, 2); again.Status != WalkEscalated || again.Point != first.Point {
		t.Fatalf("resume: %+v, want escalated at %+v", again, first.Point)
	}
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Type == pipeline.TypeDAGRun {
			t.Fatal("the resume began a task run")
		}
	}
}
