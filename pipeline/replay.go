package pipeline

import (
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
)

// TypeReplay starts a replay of a pipeline from a phase boundary: the
// ledger reopens that phase and the later ones, and the steps and
// dispatches of those phases recorded before it are replaced (Live): a
// walk runs them again, appending to the same chain.
const TypeReplay = "replay"

// ReplayData is the payload of replay.
type ReplayData struct {
	Session    string       `json:"session"` // replay_session of its dispatches
	From       ledger.Phase `json:"from"`    // the phase boundary it resumes at
	Checkpoint string       `json:"checkpoint,omitempty"`
	// Mutations are the templates it swaps, "orig.md -> repl.md".
	Mutations   []string `json:"mutations,omitempty"`
	TemplateRef string   `json:"template_ref,omitempty"` // the revision its templates are read from
	// Head is the branch's commit when it began: the code the run before
	// it ended with, which a replay diff compares.
	Head string `json:"head,omitempty"`
	// State is where the Compression State Block is kept in the chain's tree.
	State string `json:"state,omitempty"`
}

// ReplayStatePath is where replay session's Compression State Block is
// kept in the chain's tree.
func ReplayStatePath(session string) string { return replayDir + "/" + session + ".md" }

// ReplayTemplatePath is where replay session keeps the template it swapped
// in for template name.
func ReplayTemplatePath(session, name string) string {
	return replayDir + "/" + session + "/" + name + ".md"
}

func (d *ReplayData) check() error {
	switch {
	case !d.From.Valid():
		return fmt.Errorf("replay: invalid phase %d", d.From)
	case CheckName("replay session", d.Session) != nil:
		return CheckName("replay session", d.Session)
	case d.State != "" && d.State != ReplayStatePath(d.Session):
		return fmt.Errorf("replay %s: state kept at %q, not %q", d.Session, d.State, ReplayStatePath(d.Session))
	}
	return nil
}

// applyReplay is State.Apply of a replay: its phases reopen in the ledger.
func (s *State) applyReplay(e Event, d *ReplayData) error {
	if err := d.check(); err != nil {
		return err
	}
	if len(s.Dispatch.InFlight) > 0 {
		return errors.New("a replay cannot start while a dispatch is in flight: settle it first")
	}
	_, err := s.Gates.Apply(ledger.Action{Kind: ledger.Reopen, Phase: d.From, Seq: e.Seq, Time: e.Time})
	return err
}

// Live is the part of a chain's events that the current run stands on:
// each replay replaces the step, handoff and dispatch events of its phase
// and the later ones recorded before it (a dispatch's finish goes with its
// start). Replaced holds the dispatch starts it left out, oldest first:
// what a replay's dispatches are replays of. One pass each way, whatever
// the number of replays.
func Live(events []Event) (live []Event, replaced []DispatchStart, err error) {
	// from[i] is the earliest phase a replay after event i reopens.
	from := make([]ledger.Phase, len(events))
	least := ledger.Completion + 1
	for i := len(events) - 1; i >= 0; i-- {
		from[i] = least
		if events[i].Type == TypeReplay {
			var d ReplayData
			if err := DecodeData(events[i], &d); err != nil {
				return nil, nil, err
			}
			least = min(least, d.From)
		}
	}
	if least > ledger.Completion {
		return events, nil, nil // never replayed
	}
	gone := map[int]bool{}
	live = make([]Event, 0, len(events))
	for i, e := range events {
		var phase ledger.Phase
		switch e.Type {
		case TypeStep:
			var d StepData
			if err := DecodeData(e, &d); err != nil {
				return nil, nil, err
			}
			phase = d.Phase
		case TypeHandoff:
			var d HandoffData
			if err := DecodeData(e, &d); err != nil {
				return nil, nil, err
			}
			phase = d.From
		case TypeDispatchStart:
			var d DispatchStart
			if err := DecodeData(e, &d); err != nil {
				return nil, nil, err
			}
			if d.Phase >= from[i] {
				gone[d.Seq] = true
				replaced = append(replaced, d)
				continue
			}
		case TypeDispatchFinish:
			var d DispatchFinish
			if err := DecodeData(e, &d); err != nil {
				return nil, nil, err
			}
			if gone[d.Seq] {
				continue
			}
		}
		if phase != 0 && phase >= from[i] {
			continue
		}
		live = append(live, e)
	}
	return live, replaced, nil
}
