package replay

import (
	"bytes"
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/spec"
)

// CompressionState is the seed's Compression State Block that seeds the
// resumed run: goal, phase, progress kept, decisions and constraints of
// the prior session, where its state is, and the steps next.
func CompressionState(st *pipeline.State, src *Source, r *Resume, sp *spec.Spec) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "===COMPRESSION_STATE===\n")
	fmt.Fprintf(&b, "Goal: %s\n", pipeline.LedgerGoal(st.Goal))
	fmt.Fprintf(&b, "Skill: %s\n", src.Skill)
	fmt.Fprintf(&b, "Phase: %d\n", r.Phase)
	fmt.Fprintf(&b, "Health: GREEN (reset on resume)\n")
	fmt.Fprintf(&b, "Progress:\n")
	if r.Phase > 1 {
		fmt.Fprintf(&b, "- Phases 1 through %d completed in prior session\n", r.Phase-1)
	} else {
		fmt.Fprintf(&b, "- No phase kept from the prior session\n")
	}
	fmt.Fprintf(&b, "- Resuming from %s via replay\n", r.Boundary.Reason)
	for _, ps := range r.Phases[:r.Phase-1] {
		fmt.Fprintf(&b, "- Phase %d: %d dispatches, %s\n", ps.Phase, ps.Dispatches, st.Gates.Ledger.Entry(ps.Phase).Status)
	}
	fmt.Fprintf(&b, "Key Decisions (prior session):\n")
	for _, d := range st.View.Journal.Decisions {
		fmt.Fprintf(&b, "- %s: %s", d.Type, pipeline.LedgerGoal(d.Choice))
		if d.Reason != "" {
			fmt.Fprintf(&b, " (%s)", pipeline.LedgerGoal(d.Reason))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Active Constraints:\n")
	for _, c := range st.View.Journal.Constraints {
		fmt.Fprintf(&b, "- %s\n", pipeline.LedgerGoal(c))
	}
	if r.Phase > 1 {
		fmt.Fprintf(&b, "- Replay session -- prior work verified through Phase %d\n", r.Phase-1)
	} else {
		fmt.Fprintf(&b, "- Replay session -- no prior work kept\n")
	}
	fmt.Fprintf(&b, "Files Modified:\n- see git log\n")
	fmt.Fprintf(&b, "Scratch State:\n- Location: %s\n", src.Path)
	fmt.Fprintf(&b, "- Recovery: git crucible status, git crucible handoff show, git crucible dispatch list\n")
	fmt.Fprintf(&b, "Next Steps:\n")
	n := 0
	for _, l := range sp.Walk() {
		if l.Phase >= r.Phase && l.Parent == nil {
			n++
			fmt.Fprintf(&b, "%d. Phase %d, step %s (%s)\n", n, l.Phase, l.Step.ID, l.Step.Kind)
		}
	}
	fmt.Fprintf(&b, "===END_COMPRESSION_STATE===\n")
	return b.Bytes()
}

// Begin records replay d of pipeline id: the replay event, which reopens
// its phases, and the Compression State Block kept beside it in the tree.
func Begin(ctx context.Context, svc *pipeline.Service, id string, d pipeline.ReplayData, state []byte) error {
	d.State = pipeline.ReplayStatePath(d.Session)
	_, _, err := svc.Update(ctx, id, func(*pipeline.State, string) (*pipeline.Change, error) {
		return &pipeline.Change{Files: map[string][]byte{d.State: state},
			Drafts: []pipeline.Draft{{Type: pipeline.TypeReplay, Data: d}}}, nil
	})
	return err
}
