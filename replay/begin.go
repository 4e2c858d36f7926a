package replay

import (
	"fmt"

	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
)

// CheckBegin refuses a replay of src from r that cannot begin: on another
// branch than the run's (branch is HEAD's, "" when detached), from a
// phase the gate ledger st does not let begin, or restoring a boundary no
// checkpoint is left of (current: on the work tree as it is instead).
func CheckBegin(src *Source, st *pipeline.State, r *Resume, branch string, current bool) error {
	if src.Branch != "" && branch != src.Branch {
		return &outcome.Refused{Err: &WrongBranchError{Want: src.Branch, Have: branch}}
	}
	if b := st.Gates.CanBegin(r.Phase); b != nil {
		return outcome.WithHints(&outcome.Refused{Err: b}, "replay from an earlier phase: git crucible replay --from-phase <N>")
	}
	if !current && (r.Gone || r.Boundary.Checkpoint == "") {
		return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("no checkpoint is left to restore the Phase %d boundary (%s) from", r.Phase, r.Boundary.Reason)},
			"resume on the work tree as it is: git crucible replay --current-tree",
			"or start over: git crucible replay --from-phase 1")
	}
	return nil
}

// WrongBranchError is the replay seed's branch guard, in its words.
type WrongBranchError struct{ Want, Have string }

func (e *WrongBranchError) Error() string {
	have := e.Have
	if have == "" {
		have = "no branch (a detached HEAD)"
	}
	return fmt.Sprintf("Pipeline was running on branch %s but you are on %s. Switch to %s before resuming"+
		" — restoring a checkpoint from a different branch would contaminate your working directory.", e.Want, have, e.Want)
}
