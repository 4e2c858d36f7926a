package replay

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// CompressionState is the seed's Compression State Block that seeds the
// resumed run: goal, phase, progress kept, decisions and constraints of
// the prior session, where its state is, and the steps next.
func CompressionState(st *pipeline.State, src *Source, r *Resume, sp *pipespec.Spec) []byte {
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

// Settle finishes every dispatch of pipeline id still in flight (the
// engine's Recover settles its own first; these are an import's or an
// outside orchestrator's) as an error, interrupted: a replay starts from
// a run with nothing in flight. It returns their seqs.
func Settle(ctx context.Context, svc *pipeline.Service, id, session string) ([]int, error) {
	st, _, err := svc.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	var seqs []int
	for key := range st.Dispatch.InFlight {
		seq, err := strconv.Atoi(key)
		if err != nil {
			return seqs, fmt.Errorf("dispatch %q in flight: %w", key, err)
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		if _, err := svc.FinishDispatch(ctx, id, seq, pipeline.FinishRequest{Status: "error",
			Summary: "interrupted: settled by " + session}); err != nil {
			return seqs, err
		}
	}
	return seqs, nil
}

// Begin records replay d of src: the replay event, which reopens its
// phases, with the Compression State Block kept beside it in the tree;
// and the steps of the phases before it that src has not done (an
// imported crucible run has none) as done, kept by the replay, so that
// the walk starts at its boundary. The templates its mutations swap in
// are kept too, by name, for the experiment to be read again.
func Begin(ctx context.Context, svc *pipeline.Service, src *Source, sp *pipespec.Spec, d pipeline.ReplayData, state []byte, templates map[string][]byte) error {
	d.State = pipeline.ReplayStatePath(d.Session)
	files := map[string][]byte{d.State: state}
	for name, text := range templates {
		if err := pipeline.CheckName("template", name); err != nil {
			return err
		}
		files[pipeline.ReplayTemplatePath(d.Session, name)] = text
	}
	drafts := []pipeline.Draft{{Type: pipeline.TypeReplay, Data: d}}
	for _, ph := range sp.Phases {
		for _, st := range ph.Steps {
			if p := (pipeline.Point{Phase: ph.Number, Step: st.ID}); ph.Number < d.From && src.Steps[p].Status != pipeline.StepDone {
				drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{Phase: p.Phase, Step: p.Step,
					Status: pipeline.StepDone, Result: "kept by " + d.Session}})
			}
		}
	}
	_, _, err := svc.Update(ctx, src.Pipeline, func(*pipeline.State, string) (*pipeline.Change, error) {
		return &pipeline.Change{Files: files, Drafts: drafts}, nil
	})
	return err
}
