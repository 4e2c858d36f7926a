package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/rounds"
)

func viewOf(t *testing.T, c chain) *chainView {
	t.Helper()
	v := newChainView()
	for _, ev := range c {
		if err := v.add(ev); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// TestChainViewAgreesWithRecords: the view's dispatches at a point not
// done, and its step statuses, are those Records and StepsOf read from
// the whole chain; a done point's dispatches are forgotten.
func TestChainViewAgreesWithRecords(t *testing.T) {
	review := pipeline.Point{Phase: 3, Step: "task-review", Task: "2"}
	c := chain{}.steps(t, pipeline.StepDone, 3, "1", "pre-task").
		dispatch(t, pipeline.Point{Phase: 3, Step: "implement", Task: "1"}, "implementer", "completed").
		steps(t, pipeline.StepDone, 3, "1", "implement").
		dispatch(t, pipeline.Point{Phase: 3, Step: "implement", Task: "2"}, "implementer", "failed").
		steps(t, pipeline.StepFailed, 3, "2", "implement").
		dispatch(t, pipeline.Point{Phase: 3, Step: "implement", Task: "2"}, "implementer", "").
		dispatch(t, inRound(review, 1), "reviewer", "completed").
		dispatch(t, inRound(review, 1), "implementer", "completed").
		dispatch(t, inRound(review, 2), "reviewer", "")
	v := viewOf(t, c)
	recs, err := pipeline.Records(c)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := pipeline.StepsOf(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []pipeline.Point{{Phase: 3, Step: "implement", Task: "2"}, review} {
		var want []pipeline.Record
		for _, r := range recs {
			if r.Point.Phase == p.Phase && r.Point.Step == p.Step && r.Point.Task == p.Task {
				want = append(want, r)
			}
		}
		if got := v.at(inRound(p, 2)); !reflect.DeepEqual(got, want) {
			t.Errorf("at %v:\n got %+v\nwant %+v", p, got, want)
		}
	}
	for p, d := range steps {
		if got := v.stepStatus(p); got != d.Status {
			t.Errorf("status of %v: %q, want %q", p, got, d.Status)
		}
	}
	if got := v.at(pipeline.Point{Phase: 3, Step: "implement", Task: "1"}); got != nil {
		t.Errorf("a done point's dispatches are kept: %+v", got)
	}
	if len(v.pointOf) != 5 || len(v.finishPos) != 3 {
		t.Errorf("kept %d seqs and %d finishes, want the 5 and 3 of the points not done", len(v.pointOf), len(v.finishPos))
	}
	var finished []int
	for _, r := range v.takeFinished() {
		finished = append(finished, r.Seq)
	}
	if want := []int{1, 2, 4, 5}; !reflect.DeepEqual(finished, want) || v.takeFinished() != nil {
		t.Errorf("finished %v, then again; want %v once", finished, want)
	}
}

// TestChainViewTaskSteps: a task's steps done are bits, not points; a step
// done again after another end, and steps past the 64 bits, read as the
// chain last recorded them; where a step not done ended is kept.
func TestChainViewTaskSteps(t *testing.T) {
	var many []string
	for i := range 70 {
		many = append(many, fmt.Sprintf("s%d", i))
	}
	c := chain{}.steps(t, pipeline.StepDone, 3, "1", many...).
		steps(t, pipeline.StepDone, 3, "2", "s1", "s2").
		steps(t, pipeline.StepFailed, 3, "2", "s2").
		steps(t, pipeline.StepFailed, 3, "3", "s3").
		steps(t, pipeline.StepDone, 3, "3", "s3").
		steps(t, pipeline.StepDone, 2, "", "plan")
	v := viewOf(t, c)
	for _, c := range []struct {
		p    pipeline.Point
		want string
	}{
		{pipeline.Point{Phase: 3, Step: "s0", Task: "1"}, pipeline.StepDone},
		{pipeline.Point{Phase: 3, Step: "s69", Task: "1", Round: 2}, pipeline.StepDone},
		{pipeline.Point{Phase: 3, Step: "s1", Task: "2"}, pipeline.StepDone},
		{pipeline.Point{Phase: 3, Step: "s2", Task: "2"}, pipeline.StepFailed},
		{pipeline.Point{Phase: 3, Step: "s3", Task: "3"}, pipeline.StepDone},
		{pipeline.Point{Phase: 3, Step: "s1", Task: "3"}, ""},
		{pipeline.Point{Phase: 2, Step: "s1", Task: "1"}, ""},
		{pipeline.Point{Phase: 3, Step: "s70", Task: "1"}, ""},
		{pipeline.Point{Phase: 2, Step: "plan"}, pipeline.StepDone},
	} {
		if got := v.stepStatus(c.p); got != c.want {
			t.Errorf("status of %v: %q, want %q", c.p, got, c.want)
		}
	}
	// The 6 steps of task 1 past the bits, task 2's failed one, the plan.
	if len(v.status) != 8 || len(v.endPos) != 8 {
		t.Errorf("%d statuses and %d ends kept as points, want 8", len(v.status), len(v.endPos))
	}
	if failed := (pipeline.Point{Phase: 3, Step: "s2", Task: "2"}); v.endPos[failed] != 73 {
		t.Errorf("task 2's failed step ended at %d, want 73", v.endPos[failed])
	}
}

func TestChainViewDecided(t *testing.T) {
	p := pipeline.Point{Phase: 3, Step: "task-review", Task: "1", Round: 1}
	pass := rounds.JournalEntry{Type: "review-round", Choice: "round 1: pass"}
	other := rounds.JournalEntry{Type: "review-round", Choice: "round 1: fix and run round 2"}
	before := chain{}.add(t, pipeline.TypeDecision, decisions([]rounds.JournalEntry{pass})[0].Data).dispatch(t, p, "reviewer", "completed")
	after := before.add(t, pipeline.TypeDecision, decisions([]rounds.JournalEntry{pass})[0].Data)
	for _, c := range []struct {
		name  string
		chain chain
		seq   int
		d     rounds.JournalEntry
		want  bool
	}{
		{"decided after its finish", after, 1, pass, true},
		{"only before its finish", before, 1, pass, false},
		{"another decision", after, 1, other, false},
		{"a dispatch not in the chain", after, 7, pass, false},
		{"a dispatch in flight", chain{}.dispatch(t, p, "reviewer", "").add(t, pipeline.TypeDecision, decisions([]rounds.JournalEntry{pass})[0].Data), 1, pass, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := viewOf(t, c.chain).decided(c.seq, c.d); got != c.want {
				t.Errorf("decided(%d, %q) = %v, want %v", c.seq, c.d.Choice, got, c.want)
			}
		})
	}
}

func TestChainViewTaskBaseAndHandoffs(t *testing.T) {
	c := chain{}.
		add(t, pipeline.TypeStep, pipeline.StepData{Phase: 3, Step: "pre-task", Task: "1", Status: pipeline.StepDone, Result: headPrefix + "aaa"}).
		add(t, pipeline.TypeStep, pipeline.StepData{Phase: 3, Step: "pre-task", Task: "1", Status: pipeline.StepDone, Result: headPrefix + "bbb"}).
		add(t, pipeline.TypeStep, pipeline.StepData{Phase: 3, Step: "implement", Task: "2", Status: pipeline.StepDone, Result: "dispatch 3 completed"}).
		add(t, pipeline.TypeHandoff, pipeline.HandoffData{From: 1, To: 2, Path: pipeline.HandoffPath(1)})
	v := viewOf(t, c)
	if want := map[string]string{"1": "aaa"}; !reflect.DeepEqual(v.taskBase, want) {
		t.Errorf("taskBase %v, want %v (the first checkpoint's)", v.taskBase, want)
	}
	if !v.handedOff[1] || v.handedOff[2] {
		t.Errorf("handedOff %v, want only Phase 1's", v.handedOff)
	}
}

func inRound(p pipeline.Point, round int) pipeline.Point {
	p.Round = round
	return p
}

func TestChainViewJournalledSince(t *testing.T) {
	q := pipeline.Point{Phase: 1, Step: "acceptance-red"}
	esc := pipeline.DecisionData{Type: "escalation", Choice: "acceptance-red escalated"}
	end := pipeline.StepData{Phase: 1, Step: "acceptance-red", Status: pipeline.StepEscalated}
	for _, c := range []struct {
		name  string
		chain chain
		want  bool
	}{
		{"recorded, the step never ended", chain{}.add(t, pipeline.TypeDecision, esc), true},
		{"recorded before the step's last end", chain{}.add(t, pipeline.TypeDecision, esc).add(t, pipeline.TypeStep, end), false},
		{"recorded after it", chain{}.add(t, pipeline.TypeStep, end).add(t, pipeline.TypeDecision, esc), true},
		{"another step's end", chain{}.add(t, pipeline.TypeDecision, esc).steps(t, pipeline.StepDone, 1, "", "approve"), true},
		{"not recorded", chain{}.add(t, pipeline.TypeStep, end), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := viewOf(t, c.chain).journalledSince(inRound(q, 2), esc.Type, esc.Choice); got != c.want {
				t.Errorf("journalledSince = %v, want %v", got, c.want)
			}
		})
	}
}
