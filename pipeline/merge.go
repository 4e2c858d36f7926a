package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/refs"
)

// TypeResolve clears conflicts a merge recorded, once a person has looked.
const TypeResolve = "pipeline.resolve"

// ResolveData is the payload of pipeline.resolve: the conflicts a person
// settled (by Key: exactly those that person saw, so that a conflict that
// arrives later from another clone is never swept away with them), the
// phase they were asked about (0: all) and why the current state stands.
type ResolveData struct {
	Phase     ledger.Phase `json:"phase,omitempty"`
	Conflicts []string     `json:"conflicts,omitempty"`
	Reason    string       `json:"reason"`
}

// Key names a conflict for ResolveData: its phase, type and events.
func (c Conflict) Key() string { return fmt.Sprintf("%d %s %s", c.Phase, c.Type, c.Event) }

// Resolvable returns the keys of the conflicts a resolve of phase (0: all)
// settles in st.
func (s *State) Resolvable(phase ledger.Phase) []string {
	var keys []string
	for _, c := range s.Conflicts {
		if phase == 0 || c.Phase == phase {
			keys = append(keys, c.Key())
		}
	}
	return keys
}

// Conflict is an event from one clone that could not apply on top of what
// another clone recorded, found when their chains were merged. The event
// stays in history; the state goes on without it until a person resolves
// the conflict. A conflict with a phase blocks that pipeline's gates.
type Conflict struct {
	Phase   ledger.Phase `json:"phase,omitempty"`
	Event   string       `json:"event"`
	Type    string       `json:"type"`
	Writer  string       `json:"writer,omitempty"`
	Message string       `json:"message"`
}

// Blocks reports whether the conflict is about a gate, and so blocks.
func (c Conflict) Blocks() bool { return c.Phase != 0 }

func (c Conflict) String() string {
	where := c.Type
	if c.Phase != 0 {
		where = fmt.Sprintf("Phase %d %s", c.Phase, c.Type)
	}
	if c.Writer != "" {
		where += " from writer " + c.Writer
	}
	return where + ": " + c.Message
}

// ConflictError refuses gates while a merge conflict about them is open.
type ConflictError struct {
	Pipeline  string
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "PHASE GATE BLOCKED: pipeline %s has conflicting gate records from two clones.", e.Pipeline)
	for _, c := range e.Conflicts {
		b.WriteString("\n  " + c.String())
	}
	return b.String()
}

func (s *State) applyResolve(d *ResolveData) error {
	if strings.TrimSpace(d.Reason) == "" {
		return errors.New("resolving a conflict needs a reason")
	}
	var kept []Conflict
	for _, c := range s.Conflicts {
		settled := d.Phase == 0 || c.Phase == d.Phase
		if len(d.Conflicts) > 0 {
			settled = settled && slices.Contains(d.Conflicts, c.Key())
		}
		if !settled {
			kept = append(kept, c)
		}
	}
	if len(kept) == len(s.Conflicts) {
		if d.Phase != 0 {
			return fmt.Errorf("there is no conflict to resolve in Phase %d", d.Phase)
		}
		return errors.New("there is no conflict to resolve")
	}
	s.Conflicts = kept
	return nil
}

// Side is one clone's side of a merge: its state at its tip, and the
// events it recorded since the merge base.
type Side struct {
	State  *State
	Events []Event
}

// Merged is the state where two clones' chains join: base is the state at
// their merge base. The union of both sides' events is replayed on base in
// (Lamport clock, writer, id) order, each event taking the next seq, so
// either clone computes the same state from the same sides. An event that
// cannot apply where it falls becomes a Conflict; so do different gate
// outcomes for one phase recorded on both sides — never a silent winner.
// Conflicts a side found after the base (in merges of its own) and has not
// resolved stay open. A resolve that finds nothing left to resolve (its
// conflict was settled on the way) is no conflict.
func Merged(base *State, ours, theirs Side) (*State, error) {
	if base.Seq == 0 {
		return nil, fmt.Errorf("the merge base has no %s", TypeStart)
	}
	sideOf := map[string]int{} // event id -> the sides holding it: 1 ours, 2 theirs, 3 both
	for i, side := range []Side{ours, theirs} {
		for _, e := range side.Events {
			sideOf[e.ID] |= 1 << i
		}
	}
	events := slices.Concat(ours.Events, theirs.Events)
	slices.SortFunc(events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Lamport, b.Lamport), cmp.Compare(a.Writer, b.Writer), cmp.Compare(a.ID, b.ID))
	})
	events = slices.CompactFunc(events, func(a, b Event) bool { return a.ID == b.ID })
	st := *base
	// replayedFrom[s] is the earliest phase a replay applied so far, held
	// by side s alone, reopened.
	var replayedFrom [4]ledger.Phase
	for _, e := range events {
		renumbered := e
		renumbered.Seq, renumbered.Lamport = st.Seq+1, max(e.Lamport, st.Lamport+1)
		_, err := st.Apply(renumbered)
		switch {
		case err == nil && e.Type == TypeReplay:
			var d ReplayData
			if DecodeData(e, &d) == nil {
				replayedFrom[sideOf[e.ID]] = minPhase(replayedFrom[sideOf[e.ID]], d.From)
			}
		case err == nil || e.Type == TypeResolve:
		default:
			c := conflictOf(e, err)
			// A gate record of the run the other clone's replay replaced
			// (it had not seen the replay) goes with that run: the state
			// goes on without it, as it would on that clone, no conflict.
			if from := replayedFrom[3&^sideOf[e.ID]]; c.Phase != 0 && replaced(from, 0, c.Phase) {
				continue
			}
			st.Conflicts = append(slices.Clip(st.Conflicts), c)
		}
	}
	conflicts := slices.Concat(st.Conflicts, outcomeConflicts(ours.Events, theirs.Events))
	for _, side := range []Side{ours, theirs} {
		if side.State == nil {
			continue
		}
		for _, c := range side.State.Conflicts {
			if !slices.Contains(base.Conflicts, c) {
				conflicts = append(conflicts, c)
			}
		}
	}
	// A conflict a person resolved on either side stays resolved, whichever
	// way it reached the merge.
	resolved := map[string]bool{}
	for _, e := range events {
		var d ResolveData
		if e.Type == TypeResolve && json.Unmarshal(e.Data, &d) == nil {
			for _, k := range d.Conflicts {
				resolved[k] = true
			}
		}
	}
	conflicts = slices.DeleteFunc(conflicts, func(c Conflict) bool { return resolved[c.Key()] })
	slices.SortFunc(conflicts, func(a, b Conflict) int {
		return cmp.Or(cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Event, b.Event), cmp.Compare(a.Message, b.Message))
	})
	st.Conflicts = slices.Compact(conflicts)
	return &st, nil
}

// outcome is the last gate outcome one side recorded for a phase.
type outcome struct {
	value string
	event Event
}

// gateOutcomes returns, per phase, the last verdict or closing ledger
// action among events since the last replay that reopened it, and the
// earliest phase a replay among them reopened (0: none).
func gateOutcomes(events []Event) (out map[ledger.Phase]outcome, replayed ledger.Phase) {
	closing := map[string]string{LedgerType(ledger.PassGate): "PASS", LedgerType(ledger.FailPhase): "FAIL",
		LedgerType(ledger.Skip): "SKIPPED", LedgerType(ledger.CompletePhase): "COMPLETE"}
	out = map[ledger.Phase]outcome{}
	for _, e := range events {
		if e.Type == TypeReplay {
			// The run it replaces closes nothing from its phase on.
			var d ReplayData
			if DecodeData(e, &d) == nil {
				for p := d.From; p <= ledger.Completion; p++ {
					delete(out, p)
				}
				replayed = minPhase(replayed, d.From)
			}
			continue
		}
		var d struct {
			Phase   ledger.Phase `json:"phase"`
			Verdict string       `json:"verdict"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		value := closing[e.Type]
		if e.Type == TypeVerdict {
			value = d.Verdict
		}
		if value == "" {
			continue
		}
		if prev, ok := out[d.Phase]; !ok || e.Lamport > prev.event.Lamport || e.Lamport == prev.event.Lamport && e.ID > prev.event.ID {
			out[d.Phase] = outcome{value: value, event: e}
		}
	}
	return out, replayed
}

// outcomeConflicts finds phases whose gate both sides closed differently.
func outcomeConflicts(ours, theirs []Event) []Conflict {
	a, fromA := gateOutcomes(ours)
	b, fromB := gateOutcomes(theirs)
	var out []Conflict
	for phase := ledger.Design; phase <= ledger.Completion; phase++ {
		x, okA := a[phase]
		y, okB := b[phase]
		// An outcome of the run the other side's replay replaced is no rival.
		okA = okA && !replaced(fromB, fromA, phase)
		okB = okB && !replaced(fromA, fromB, phase)
		if !okA || !okB || x.value == y.value {
			continue
		}
		if x.event.Writer > y.event.Writer || x.event.Writer == y.event.Writer && x.event.ID > y.event.ID {
			x, y = y, x // the same words whichever side merges
		}
		out = append(out, Conflict{Phase: phase, Type: "gate", Event: x.event.ID + " " + y.event.ID,
			Message: fmt.Sprintf("one clone recorded %s (writer %s), another %s (writer %s)", x.value, x.event.Writer, y.value, y.event.Writer)})
	}
	return out
}

// replaced reports whether a side's records of phase p belong to a run
// that the other side's replay, from phase other (0: none), replaced: one
// the side did not replay itself from p or earlier (own; 0: none).
func replaced(other, own, p ledger.Phase) bool {
	return other != 0 && other <= p && (own == 0 || own > p)
}

// minPhase is the earlier of two phases, 0 meaning none.
func minPhase(a, b ledger.Phase) ledger.Phase {
	if a == 0 || b < a {
		return b
	}
	return a
}

// conflictOf describes an event that a merge could not apply.
func conflictOf(e Event, err error) Conflict {
	c := Conflict{Event: e.ID, Type: e.Type, Writer: e.Writer, Message: err.Error()}
	if e.Type == TypeVerdict || strings.HasPrefix(e.Type, ledgerType) {
		var d struct {
			Phase ledger.Phase `json:"phase"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Phase.Valid() {
			c.Phase = d.Phase
		}
	}
	return c
}

// generated are the files of a chain's tree that the state determines,
// with those of TasksDir; a merge writes them anew instead of taking
// either side's.
var generated = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{refs.FormatFile: true, refs.EventsFile: true, refs.StateFile: true, LedgerFile: true}
}}

// Integration is what Integrate did.
type Integration struct {
	Outcome refs.Outcome
	State   *State // nil when Archived
	// Files both sides wrote differently: the merge kept ours; theirs stays
	// in history, as the merge commit's second parent.
	FileConflicts []string
}

// Integrate brings another clone's tip of pipeline id into the local chain
// (see refs.Store.Integrate). A merge recomputes the state from the union
// of both sides' events, and keeps every file either side kept.
func (s *Service) Integrate(ctx context.Context, id, theirs string) (*Integration, error) {
	w, err := s.writer(ctx)
	if err != nil {
		return nil, err
	}
	var files []string
	outcome, head, err := s.Store.Integrate(ctx, id, theirs, w.identity(), func(ours, their *refs.Head) (*refs.Batch, error) {
		b, conflicts, err := s.mergeBatch(ctx, ours, their)
		files = conflicts
		return b, err
	})
	if err != nil {
		return nil, err
	}
	if outcome == refs.Archived {
		return &Integration{Outcome: outcome}, nil
	}
	st, err := s.stateAt(ctx, head)
	if err != nil {
		return nil, err
	}
	if outcome != refs.Merged {
		files = nil
	}
	return &Integration{Outcome: outcome, State: st, FileConflicts: files}, nil
}

func (s *Service) mergeBatch(ctx context.Context, ours, theirs *refs.Head) (*refs.Batch, []string, error) {
	base, err := s.Store.MergeBase(ctx, ours.Commit, theirs.Commit)
	if err != nil {
		return nil, nil, err
	}
	if base == "" {
		return nil, nil, fmt.Errorf("pipeline %s: the two chains share no history", ours.ID)
	}
	baseHead, err := s.Store.HeadAt(ctx, ours.ID, base)
	if err != nil {
		return nil, nil, err
	}
	baseState, err := s.stateAt(ctx, baseHead)
	if err != nil {
		return nil, nil, err
	}
	ourEvents, err := s.eventsSince(ctx, base, ours.Commit)
	if err != nil {
		return nil, nil, err
	}
	theirEvents, err := s.eventsSince(ctx, base, theirs.Commit)
	if err != nil {
		return nil, nil, err
	}
	ourState, err := s.stateAt(ctx, ours)
	if err != nil {
		return nil, nil, err
	}
	theirState, err := s.stateAt(ctx, theirs)
	if err != nil {
		return nil, nil, err
	}
	st, err := Merged(baseState, Side{ourState, ourEvents}, Side{theirState, theirEvents})
	if err != nil {
		return nil, nil, err
	}
	ourFiles, err := s.Store.Files(ctx, ours.Commit)
	if err != nil {
		return nil, nil, err
	}
	theirFiles, err := s.Store.Files(ctx, theirs.Commit)
	if err != nil {
		return nil, nil, err
	}
	b := &refs.Batch{Files: map[string][]byte{}, Blobs: map[string]string{},
		Subject: "merge " + short(theirs.Commit) + " from another clone"}
	var conflicts []string
	for _, p := range slices.Sorted(maps.Keys(theirFiles)) {
		mine, ok := ourFiles[p]
		switch {
		case generated.Get()[p] || strings.HasPrefix(p, TasksDir+"/") || mine == theirFiles[p]:
		case !ok:
			b.Blobs[p] = theirFiles[p]
		default:
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) > 0 {
		b.Subject += "\n\nKept ours where both clones wrote a file differently:\n  " + strings.Join(conflicts, "\n  ")
	}
	st.Format = StateFormat
	b.Files[refs.StateFile] = st.Encode()
	s.addTaskFiles(b, ourState, st)
	b.Files[LedgerFile] = ledger.Render(&st.Gates.Ledger)
	return b, conflicts, nil
}

// eventsSince decodes the events of the commits reachable from tip but not
// from base.
func (s *Service) eventsSince(ctx context.Context, base, tip string) ([]Event, error) {
	var all []Event
	err := s.Store.Events(ctx, gitext.RevSet{Include: []string{tip}, Exclude: []string{base}}, func(commit string, blob []byte) (bool, error) {
		events, err := DecodeEvents(blob)
		if err != nil {
			return false, fmt.Errorf("commit %s: %w", short(commit), err)
		}
		all = append(all, events...)
		return true, nil
	})
	return all, err
}

func short(oid string) string { return oid[:min(12, len(oid))] }
