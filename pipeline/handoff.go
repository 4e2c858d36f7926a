package pipeline

import (
	"context"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
)

// TypeHandoff records a phase handoff document.
const TypeHandoff = "handoff.write"

// HandoffData is the payload of handoff.write and import.handoff: what the
// document says beyond what the pipeline already knows (goal, mode, time).
// Its types are the event's own, not the handoff file codec's: an event is
// stored forever, a file format may change.
type HandoffData struct {
	From        ledger.Phase      `json:"from"`
	To          ledger.Phase      `json:"to"`
	Path        string            `json:"path"`
	Inputs      []HandoffInput    `json:"inputs,omitempty"`
	Decisions   []HandoffDecision `json:"decisions,omitempty"`
	Constraints []string          `json:"constraints,omitempty"`
	Shed        []HandoffShed     `json:"shed,omitempty"`
}

// HandoffInput is one named input for the next phase.
type HandoffInput struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HandoffDecision is one decision carried forward: ID is "DEC-N" or "".
type HandoffDecision struct {
	ID     string `json:"id,omitempty"`
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
}

// HandoffShed is one item of the shed receipt: what was dropped, and where
// it went ("" when the receipt does not say).
type HandoffShed struct {
	What  string `json:"what"`
	Where string `json:"where"`
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

// HandoffRenderer writes the handoff document of d for a pipeline in
// state st, recorded at time at.
type HandoffRenderer func(d HandoffData, st *State, at string) []byte

// WriteHandoff records the handoff out of phase d.From and keeps the
// document render writes in the chain's tree.
func (s *Service) WriteHandoff(ctx context.Context, id string, d HandoffData, render HandoffRenderer) (*State, []byte, error) {
	d.To, d.Path = d.From+1, HandoffPath(d.From)
	var doc []byte
	st, _, err := s.Update(ctx, id, func(st *State, now string) (*Change, error) {
		doc = render(d, st, now)
		return &Change{Drafts: []Draft{{Type: TypeHandoff, Data: d}}, Files: map[string][]byte{d.Path: doc}}, nil
	})
	return st, doc, err
}
