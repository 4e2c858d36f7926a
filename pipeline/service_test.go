package pipeline

import (
	"bytes"
	"context"
	"testing"

	"github.com/git-crucible/git-crucible/refs"
)

// TestServiceKeepsItsLastState: the state a service keeps of the commit it
// wrote last is the one state.json holds, a caller's copy of it changes it
// not even through Apply, and the chain it writes from it verifies.
func TestServiceKeepsItsLastState(t *testing.T) {
	s := openService(t)
	ctx := context.Background()
	if _, _, err := s.Start(ctx, StartOptions{Goal: "g", Mode: "feature", ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	seq, err := s.StartDispatch(ctx, "p1", DispatchRequest{Role: "implementer", Phase: 1, Prompt: []byte("do it")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Record(ctx, "p1", Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "c"}}); err != nil {
		t.Fatal(err)
	}
	mine, _, err := s.Load(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	// A caller's copy, changed: neither the next Load nor the next append sees it.
	if _, err := mine.Apply(ev(t, mine, TypeDispatchFinish, DispatchFinish{Seq: seq, Status: "completed"})); err != nil {
		t.Fatal(err)
	}
	again, _, err := s.Load(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Dispatch.InFlight) != 1 || again.Dispatch.Finished != 0 || again.Counters[TypeDispatchFinish] != 0 {
		t.Fatalf("a caller's Apply reached the kept state: %+v, counters %v", again.Dispatch, again.Counters)
	}
	if _, err := s.FinishDispatch(ctx, "p1", seq, FinishRequest{Status: "completed", Output: []byte("done")}); err != nil {
		t.Fatal(err)
	}
	kept, h, err := s.Load(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeState(h.State)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept.Encode(), decoded.Encode()) || !bytes.Equal(kept.Encode(), h.State) {
		t.Fatalf("kept state\n%s\nstate.json\n%s", kept.Encode(), h.State)
	}
	if problems, err := s.Verify(ctx, "p1"); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v, %v", problems, err)
	}
}

// TestStartAdoptsWhatAKilledStartLeft: a Start killed between making the
// pipeline and making it active leaves an open pipeline with only its
// start; Start again with the same goal and mode makes that one active
// rather than a second, and leaves alone one with another goal or with
// events of its own.
func TestStartAdoptsWhatAKilledStartLeft(t *testing.T) {
	s := openService(t)
	ctx := context.Background()
	branch, err := s.Repo.HeadBranch()
	if err != nil {
		t.Fatal(err)
	}
	orphan := func(goal string, more bool) string {
		t.Helper()
		st, _, err := s.Start(ctx, StartOptions{Goal: goal, Mode: "feature"})
		if err != nil {
			t.Fatal(err)
		}
		if more {
			if _, _, err := s.Record(ctx, st.ID, Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "c"}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Repo.DeleteSymref(refs.ActiveRef(branch), refs.PipelineRef(st.ID)); err != nil {
			t.Fatal(err)
		}
		return st.ID
	}
	busy := orphan("g", true)
	other := orphan("another goal", false)
	left := orphan("g", false)
	st, _, err := s.Start(ctx, StartOptions{Goal: "g", Mode: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != left || st.Seq != 1 {
		t.Errorf("Start made %s (seq %d), want the one left without events, %s (the others: %s, %s)", st.ID, st.Seq, left, busy, other)
	}
	if active, err := s.Store.Active(branch); err != nil || active != left {
		t.Errorf("active on %s: %q, %v; want %s", branch, active, err, left)
	}
	ids, err := s.Store.List(ctx)
	if err != nil || len(ids) != 3 {
		t.Errorf("pipelines %v, %v; want the three made", ids, err)
	}
}

// A resume, which knows no goal, adopts the orphan a killed start left on
// the branch at its commit; with a pipeline active, or none left, nothing.
func TestAdoptOrphanForResume(t *testing.T) {
	s := openService(t)
	ctx := context.Background()
	branch, err := s.Repo.HeadBranch()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.AdoptOrphan(ctx); st != nil || err != nil {
		t.Fatalf("adopted %v, %v from nothing", st, err)
	}
	st, _, err := s.Start(ctx, StartOptions{Goal: "g", Mode: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.AdoptOrphan(ctx); got != nil || err != nil {
		t.Fatalf("adopted %v, %v beside an active pipeline", got, err)
	}
	if err := s.Repo.DeleteSymref(refs.ActiveRef(branch), refs.PipelineRef(st.ID)); err != nil {
		t.Fatal(err)
	}
	got, err := s.AdoptOrphan(ctx)
	if err != nil || got == nil || got.ID != st.ID {
		t.Fatalf("adopted %v, %v; want %s", got, err, st.ID)
	}
	if active, err := s.Store.Active(branch); err != nil || active != st.ID {
		t.Fatalf("active on %s: %q, %v; want %s", branch, active, err, st.ID)
	}
}
