package engine

import (
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/rounds"
)

// chainView is what the walk needs of its pipeline's chain, brought up to
// date one event at a time as the chain grows (see walker.refresh). It
// keeps no event, and forgets the dispatches of a point once the point is
// done, so that what a walk holds does not grow with each step it takes,
// and a refresh costs what the new commits hold, not the whole chain.
type chainView struct {
	// status is each point's last step status, keyed by the point
	// without its round, but for a task's steps done; endPos the position
	// of that step event. result is its result, kept only for points
	// outside tasks, whose number does not grow with the plan: the walk
	// reads no task's.
	status map[pipeline.Point]string
	endPos map[pipeline.Point]int
	result map[pipeline.Point]string
	// taskDone holds a task's steps done, a bit each (bit i is
	// taskSteps[i]'s), by task: a plan's tasks are most of a chain's
	// points, nearly all done, and map entries of whole points took a
	// megabyte at 1,000 tasks. The walk asks where a step ended only of
	// steps not done.
	taskDone  map[string]uint64
	taskSteps []stepAt
	// open are the dispatches at points not done, every round, in seq
	// order, keyed by the point without its round; pointOf finds a seq's.
	open    map[pipeline.Point][]pipeline.Record
	pointOf map[int]pipeline.Point
	// finished are the dispatches finished since takeFinished last ran.
	finished  []pipeline.Record
	handedOff map[ledger.Phase]bool
	// taskBase is HEAD when each task's first checkpoint was taken.
	taskBase map[string]string
	// pos counts the events seen; finishPos is the position of the finish
	// of each dispatch in open, decisionPos that of each decision's
	// newest event: a decision follows a finish when its position is
	// higher.
	pos         int
	finishPos   map[int]int
	decisionPos map[[2]string]int
	// replay is the session of the newest replay, "" when none; replaced
	// are the dispatches replays ran again, the newest by where it ran
	// (set by the walk, from pipeline.Live); replayed says add met a
	// replay, which changes what came before it: the walk reads the
	// chain again.
	replay   string
	replaced map[replayedAt]int
	replayed bool
	// dagRun says Phase 3 began as a task DAG (a dag.run event).
	dagRun bool
	// baseline is the known-failing baseline the build began on, nil
	// when it began on a passing one.
	baseline *pipeline.BaselineData
}

// stepAt is a step of a phase.
type stepAt struct {
	phase ledger.Phase
	step  string
}

// replayedAt is where a dispatch ran: its point and role.
type replayedAt struct {
	p    pipeline.Point
	role string
}

func newChainView() *chainView {
	return &chainView{status: map[pipeline.Point]string{}, endPos: map[pipeline.Point]int{}, result: map[pipeline.Point]string{}, taskDone: map[string]uint64{},
		open: map[pipeline.Point][]pipeline.Record{}, pointOf: map[int]pipeline.Point{},
		handedOff: map[ledger.Phase]bool{}, taskBase: map[string]string{}, finishPos: map[int]int{},
		decisionPos: map[[2]string]int{}}
}

// add brings the view past event ev, the chain's next one.
func (v *chainView) add(ev pipeline.Event) error {
	v.pos++
	switch ev.Type {
	case pipeline.TypeDAGRun:
		v.dagRun = true
	case pipeline.TypeBaseline:
		var d pipeline.BaselineData
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		v.baseline = &d
	case pipeline.TypeStep:
		var d pipeline.StepData
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		p := pipeline.Point{Phase: d.Phase, Step: d.Step, Task: d.Task}
		v.setStatus(p, d.Status)
		if d.Task == "" {
			v.result[p] = d.Result
		}
		if _, ok := v.taskBase[d.Task]; !ok && d.Task != "" && strings.HasPrefix(d.Result, headPrefix) {
			v.taskBase[d.Task] = strings.TrimPrefix(d.Result, headPrefix)
		}
		if d.Status == pipeline.StepDone { // the walk never looks at its dispatches again
			for _, r := range v.open[p] {
				delete(v.pointOf, r.Seq)
				delete(v.finishPos, r.Seq)
			}
			delete(v.open, p)
		}
	case pipeline.TypeDispatchStart:
		var d pipeline.DispatchStart
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		if d.Step == "" {
			return nil // a dispatch the engine did not start: the walk never looks at it
		}
		r := d.Record()
		p := r.Point
		p.Round = 0
		v.open[p] = append(v.open[p], r)
		v.pointOf[r.Seq] = p
	case pipeline.TypeDispatchFinish:
		var d pipeline.DispatchFinish
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		p, ok := v.pointOf[d.Seq]
		if !ok {
			return nil // a dispatch the engine did not start
		}
		recs := v.open[p]
		for i := range recs {
			if recs[i].Seq == d.Seq {
				recs[i].Settle(d)
				v.finished = append(v.finished, recs[i])
			}
		}
		v.finishPos[d.Seq] = v.pos
	case pipeline.TypeDecision:
		var d pipeline.DecisionData
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		v.decisionPos[[2]string{d.Type, d.Choice}] = v.pos
	case pipeline.TypeHandoff:
		var d pipeline.HandoffData
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		v.handedOff[d.From] = true
	case pipeline.TypeReplay:
		var d pipeline.ReplayData
		if err := pipeline.DecodeData(ev, &d); err != nil {
			return err
		}
		v.replay, v.replayed = d.Session, true
	}
	return nil
}

// setStatus records status as the step at p's, ended at the current
// position.
func (v *chainView) setStatus(p pipeline.Point, status string) {
	bit, ok := v.taskBit(p, true)
	if !ok {
		v.status[p], v.endPos[p] = status, v.pos
		return
	}
	done := v.taskDone[p.Task]
	if status == pipeline.StepDone {
		v.taskDone[p.Task] = done | bit
		delete(v.status, p)
		delete(v.endPos, p)
		return
	}
	if done&bit != 0 {
		if done &^= bit; done == 0 {
			delete(v.taskDone, p.Task)
		} else {
			v.taskDone[p.Task] = done
		}
	}
	v.status[p], v.endPos[p] = status, v.pos
}

// taskBit is the bit of taskDone for p's step, a task's, given one when
// it has none and add; false outside tasks, or past 64 steps, which the
// status map keeps as it does the rest.
func (v *chainView) taskBit(p pipeline.Point, add bool) (uint64, bool) {
	if p.Task == "" {
		return 0, false
	}
	at := stepAt{p.Phase, p.Step}
	i := slices.Index(v.taskSteps, at)
	if i < 0 {
		if !add || len(v.taskSteps) == 64 {
			return 0, false
		}
		i = len(v.taskSteps)
		v.taskSteps = append(v.taskSteps, at)
	}
	return 1 << i, true
}

// stepStatus is how the step at p (its round ignored) last ended, "" when
// it has not.
func (v *chainView) stepStatus(p pipeline.Point) string {
	p.Round = 0
	if bit, ok := v.taskBit(p, false); ok && v.taskDone[p.Task]&bit != 0 {
		return pipeline.StepDone
	}
	return v.status[p]
}

// takeFinished returns the dispatches finished since it last ran.
func (v *chainView) takeFinished() []pipeline.Record {
	out := v.finished
	v.finished = nil
	return out
}

// unfinished lists the dispatches at points not done that have no
// finish, in seq order.
func (v *chainView) unfinished() []pipeline.Record {
	var out []pipeline.Record
	for _, recs := range v.open {
		for _, r := range recs {
			if !r.Finished() {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b pipeline.Record) int { return a.Seq - b.Seq })
	return out
}

// at lists the dispatches recorded at p's step and task, every round,
// while that step is not done.
func (v *chainView) at(p pipeline.Point) []pipeline.Record {
	p.Round = 0
	return v.open[p]
}

// replayOf is the dispatch a replay replaced at p for role, nil when none:
// a new dispatch there is its replay.
func (v *chainView) replayOf(p pipeline.Point, role string) *int {
	if seq, ok := v.replaced[replayedAt{p, role}]; ok {
		return &seq
	}
	return nil
}

// journalledSince reports whether a decision of type typ and choice is in
// the chain after the last end of the step at q, its round ignored (or
// anywhere, when it never ended).
func (v *chainView) journalledSince(q pipeline.Point, typ, choice string) bool {
	q.Round = 0
	pos, ok := v.decisionPos[[2]string{typ, choice}]
	return ok && pos > v.endPos[q]
}

// decided reports whether decision d is in the chain after the finish of
// dispatch seq, a dispatch at a point not done.
func (v *chainView) decided(seq int, d rounds.JournalEntry) bool {
	finish, ok := v.finishPos[seq]
	return ok && v.decisionPos[[2]string{d.Type, d.Choice}] > finish
}
