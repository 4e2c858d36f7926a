package pipeline

import (
	"bytes"
	"context"
	"testing"
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
