package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/refs"
)

// ForeignChangeError stops an engine whose pipeline chain someone else
// changed since its own last append: events appended by another process,
// a commit forged with plain git, a rewind. Nothing is written on top.
type ForeignChangeError struct {
	ID       string
	Ref      string
	Expected string // the engine's last append
	Found    string // the chain's tip now
	What     string // what changed, in words
}

func (e *ForeignChangeError) Error() string {
	return fmt.Sprintf("pipeline %s was changed by another process while its engine ran: %s; the engine stops and writes nothing on top", e.ID, e.What)
}

// Hint says how to see and undo it.
func (e *ForeignChangeError) Hint() string {
	return fmt.Sprintf("see the chain with 'git crucible log'; put back the engine's own: git update-ref %s %s %s", e.Ref, e.Expected, e.Found)
}

// Guard makes this service an engine's guard of pipeline id: from now on
// an append that finds the chain's tip anywhere but at this service's own
// last append stops with a *ForeignChangeError. Dispatches a hook recorded
// (RecordedBy "hook": an agent's subagents) are the one change let
// through. The tip now is taken as the engine's.
func (s *Service) Guard(id string) error {
	tip, err := s.Store.Tip(id)
	if err != nil {
		return err
	}
	if s.guard == nil {
		s.guard = map[string]string{}
	}
	s.guard[id] = tip
	return nil
}

// Unguard ends Guard of pipeline id: its engine stopped.
func (s *Service) Unguard(id string) { delete(s.guard, id) }

// checkGuard checks a guarded pipeline's tip before an append onto it.
func (s *Service) checkGuard(ctx context.Context, id, tip string) error {
	want, guarded := s.guard[id]
	if !guarded || tip == want {
		return nil
	}
	foreign := &ForeignChangeError{ID: id, Ref: refs.PipelineRef(id), Expected: want, Found: tip}
	if tip == "" {
		foreign.What = "its chain's ref was deleted"
		return foreign
	}
	_, blobs, descends, err := s.Store.EventsSince(ctx, id, want)
	if err != nil {
		return err
	}
	if !descends {
		if rewound, err := s.Repo.IsAncestor(ctx, tip, want); err != nil {
			return err
		} else if rewound {
			foreign.What = fmt.Sprintf("its chain was rewound from %s to %s, dropping the engine's events after it", short(want), short(tip))
		} else {
			foreign.What = fmt.Sprintf("its chain was replaced: %s does not follow the engine's last append %s", short(tip), short(want))
		}
		return foreign
	}
	problems, err := s.VerifySince(ctx, id, want, tip)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		foreign.What = fmt.Sprintf("%s is not a sound chain commit (%s)", short(problems[0].Commit), problems[0].Message)
		return foreign
	}
	var events []Event
	for i := len(blobs) - 1; i >= 0; i-- { // oldest first
		ev, err := DecodeEvents(blobs[i])
		if err != nil {
			return err
		}
		events = append(events, ev...)
	}
	before, err := s.Store.HeadAt(ctx, id, want)
	if err != nil {
		return err
	}
	st, err := DecodeState(before.State)
	if err != nil {
		return err
	}
	if other := notHooks(st, events); len(other) > 0 {
		foreign.What = fmt.Sprintf("%d events appended (%s)", len(other), strings.Join(other, ", "))
		return foreign
	}
	s.guard[id] = tip
	return nil
}

// notHooks describes the events a hook could not have recorded while an
// engine held the pipeline: anything but the start of a dispatch marked
// as the hook's and the finish of one such (st is the state before them).
func notHooks(st *State, events []Event) []string {
	hooks := map[int]bool{}
	for seq, f := range st.Dispatch.InFlight {
		if n, err := strconv.Atoi(seq); err == nil && f.ToolUseID != "" {
			hooks[n] = true
		}
	}
	var other []string
	for _, e := range events {
		switch e.Type {
		case TypeDispatchStart:
			var d DispatchStart
			if DecodeData(e, &d) == nil && d.RecordedBy == "hook" {
				hooks[d.Seq] = true
				continue
			}
		case TypeDispatchFinish:
			var d DispatchFinish
			if DecodeData(e, &d) == nil && hooks[d.Seq] {
				continue
			}
		}
		other = append(other, Describe(e))
	}
	return slices.Compact(other)
}

// Reguard takes the tip of a pipeline the engine guards as its own again,
// as Guard does: a CI job's relay has just brought the chain up to date
// with a remote's, events it verified (remote.Syncer.Fetch). It does
// nothing to a pipeline not guarded.
func (s *Service) Reguard(id string) error {
	if _, guarded := s.guard[id]; !guarded {
		return nil
	}
	return s.Guard(id)
}
