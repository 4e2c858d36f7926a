package spec

import (
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
)

// Point is where a pipeline is, or resumes: a step of a phase, the task
// when the step runs per task, and the round of a gate or review loop.
type Point struct {
	Phase ledger.Phase `json:"phase"`
	Step  string       `json:"step"`
	Task  string       `json:"task,omitempty"`  // inside a tasks step's steps only
	Round int          `json:"round,omitempty"` // 1-based, gates and review loops only
}

// Check says whether p names a step of s as it is: a resume after the
// spec changed must not land on a step that moved or went away.
func (s *Spec) Check(p Point) error {
	l, ok := s.Find(p.Step)
	switch {
	case !ok:
		return fmt.Errorf("the spec has no step %q", p.Step)
	case l.Phase != p.Phase:
		return fmt.Errorf("step %q is in phase %d, not %d", p.Step, l.Phase, p.Phase)
	case (l.Parent != nil) != (p.Task != ""):
		if p.Task == "" {
			return fmt.Errorf("step %q runs per task: the point needs a task", p.Step)
		}
		return fmt.Errorf("step %q does not run per task, but the point names task %q", p.Step, p.Task)
	case p.Round < 0 || p.Round > 0 && !l.Step.Rounds():
		return fmt.Errorf("step %q has no rounds, but the point names round %d", p.Step, p.Round)
	case p.Round > l.Step.MaxRounds:
		return fmt.Errorf("step %q has at most %d rounds, not %d", p.Step, l.Step.MaxRounds, p.Round)
	}
	return nil
}
