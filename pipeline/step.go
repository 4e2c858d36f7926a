package pipeline

import (
	"fmt"
	"slices"

	"github.com/git-crucible/git-crucible/ledger"
)

// TypeStep records that a step of the engine's walk ended: where the
// walk is, so that a resumed engine starts at the first step not done.
const TypeStep = "step"

// Step statuses: done lets the walk go on; the others stop it there.
const (
	StepDone      = "done"
	StepFailed    = "failed"
	StepEscalated = "escalated"
	StepWaiting   = "waiting" // for a person: an approval, a manual agent
)

// StepStatuses are the statuses a step event may carry.
var StepStatuses = []string{StepDone, StepFailed, StepEscalated, StepWaiting}

// StepData is the payload of step: the spec's point (phase, step id, task
// id, round) and how the step ended.
type StepData struct {
	Phase  ledger.Phase `json:"phase"`
	Step   string       `json:"step"`
	Task   string       `json:"task,omitempty"`
	Round  int          `json:"round,omitempty"`
	Status string       `json:"status"`
	Result string       `json:"result,omitempty"` // short: a gate's verdict, a run's exit
	// Baseline says a test step is done against the known-failing
	// baseline: its command failed, but only as it did before the build.
	Baseline bool `json:"baseline,omitempty"`
}

func (d *StepData) check() error {
	switch {
	case !d.Phase.Valid():
		return fmt.Errorf("step %q: invalid phase %d", d.Step, d.Phase)
	case CheckName("step", d.Step) != nil:
		return CheckName("step", d.Step)
	case d.Round < 0:
		return fmt.Errorf("step %q: invalid round %d", d.Step, d.Round)
	case !slices.Contains(StepStatuses, d.Status):
		return fmt.Errorf("step %q: invalid status %q", d.Step, d.Status)
	}
	return nil
}

// where is the step and its task: "review of task t-2".
func (d *StepData) where() string {
	if d.Task != "" {
		return d.Step + " of task " + d.Task
	}
	return d.Step
}

func (d *StepData) describe() string {
	where := d.where()
	if d.Round > 0 {
		where += fmt.Sprintf(" round %d", d.Round)
	}
	if d.Baseline && d.Status == StepDone {
		return fmt.Sprintf("step %s done against the known-failing baseline", where)
	}
	return fmt.Sprintf("step %s %s", where, d.Status)
}
