package pipeline

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
)

// TypeHandoff records a phase handoff document.
const TypeHandoff = "handoff.write"

// HandoffData is the payload of handoff.write: what the document says
// beyond what the pipeline already knows (goal, mode, time).
type HandoffData struct {
	From        ledger.Phase              `json:"from"`
	To          ledger.Phase              `json:"to"`
	Path        string                    `json:"path"`
	Inputs      []interop.HandoffInput    `json:"inputs,omitempty"`
	Decisions   []interop.HandoffDecision `json:"decisions,omitempty"`
	Constraints []string                  `json:"constraints,omitempty"`
	Shed        []interop.HandoffShed     `json:"shed,omitempty"`
}

// HandoffPath is where the handoff out of phase from is kept in the tree.
func HandoffPath(from ledger.Phase) string {
	return fmt.Sprintf("handoffs/%d-to-%d.md", from, from+1)
}

// checkHandoff is State.Apply's rule for handoff.write: a handoff out of
// phase N only once the ledger has N PASS (COMPLETE for Execute).
func (s *State) checkHandoff(d HandoffData) error {
	if d.From < ledger.Design || d.From > ledger.Execute || d.To != d.From+1 {
		return fmt.Errorf("a handoff goes from phase N to N+1 (1 to 4), not %d to %d", d.From, d.To)
	}
	if d.Path != HandoffPath(d.From) {
		return fmt.Errorf("handoff %d to %d kept at %q, not %q", d.From, d.To, d.Path, HandoffPath(d.From))
	}
	want := ledger.Pass
	if d.From == ledger.Execute {
		want = ledger.Complete
	}
	if got := s.Gates.Ledger.Entry(d.From).Status; got != want {
		return fmt.Errorf("no handoff out of Phase %d (%s) before it is %s: it is %s", d.From, d.From.Name(), want, got)
	}
	return nil
}

// Document renders the handoff in crucible's format, with the pipeline's
// goal verbatim, its mode and the time it was recorded.
func (d HandoffData) Document(st *State, at string) []byte {
	h := interop.Handoff{From: int(d.From), To: int(d.To), Timestamp: at, Goal: st.Goal, Mode: st.Mode,
		Inputs: d.Inputs, Decisions: d.Decisions, Constraints: d.Constraints, Shed: d.Shed}
	return h.Render()
}

// WriteHandoff records the handoff out of phase d.From and keeps its
// document in the chain's tree.
func (s *Service) WriteHandoff(ctx context.Context, id string, d HandoffData) (*State, []byte, error) {
	d.To, d.Path = d.From+1, HandoffPath(d.From)
	var doc []byte
	st, _, err := s.Update(ctx, id, func(st *State, now string) (*Change, error) {
		doc = d.Document(st, now)
		return &Change{Drafts: []Draft{{Type: TypeHandoff, Data: d}}, Files: map[string][]byte{d.Path: doc}}, nil
	})
	return st, doc, err
}
