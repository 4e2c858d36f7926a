package replay

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// started starts pipeline id in a new repository, and returns its service
// and a function recording drafts on it.
func started(t testing.TB, id string) (*pipeline.Service, func(...pipeline.Draft)) {
	dir := gittest.Init(t)
	t.Chdir(dir)
	gittest.Git(t, dir, "config", "gc.auto", "0")
	ctx := context.Background()
	repo, err := gitext.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc := pipeline.Open(repo)
	t.Cleanup(func() { svc.Close() })
	if _, _, err := svc.Start(ctx, pipeline.StartOptions{Goal: "g", Mode: "feature", ID: id}); err != nil {
		t.Fatal(err)
	}
	return svc, func(drafts ...pipeline.Draft) {
		t.Helper()
		if _, _, err := svc.Record(ctx, id, drafts...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFromChain reads a crafted chain: a boundary maps to the checkpoint
// its step took, or, when its step found nothing changed and recorded
// none, to the one before; a replay's run replaces the dispatches and
// boundaries of its phases, and counts as a resume.
func TestFromChain(t *testing.T) {
	ctx := context.Background()
	svc, record := started(t, "p1")
	sp := defaultSpec(t)
	checkpoint := func(id, reason string) pipeline.Draft {
		return pipeline.Draft{Type: pipeline.TypeCheckpoint, Data: pipeline.CheckpointData{ID: id, Reason: reason}}
	}
	step := func(p ledger.Phase, id string) pipeline.Draft {
		return pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{Phase: p, Step: id, Status: pipeline.StepDone}}
	}
	dispatch := func(seq int, p ledger.Phase, role string) []pipeline.Draft {
		return []pipeline.Draft{{Type: pipeline.TypeDispatchStart, Data: pipeline.DispatchStart{Seq: seq, Role: role, Phase: p, Template: role}},
			{Type: pipeline.TypeDispatchFinish, Data: pipeline.DispatchFinish{Seq: seq, Status: "completed"}}}
	}
	record(pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: 1}})
	record(checkpoint("c1", "pre-design"), step(1, "pre-design"))
	record(dispatch(1, 1, "design-writer")...)
	record(pipeline.Draft{Type: pipeline.TypeVerdict, Data: pipeline.VerdictData{Phase: 1, Verdict: "PASS", PipelineID: "p1"}},
		pipeline.Draft{Type: pipeline.LedgerType(ledger.PassGate), Data: pipeline.LedgerData{Phase: 1}})
	record(step(2, "pre-plan")) // nothing changed: no checkpoint of its own
	record(dispatch(2, 2, "plan-writer")...)

	src, err := FromChain(ctx, svc, "p1", sp)
	if err != nil {
		t.Fatal(err)
	}
	want := map[ledger.Phase]Boundary{1: {Reason: "pre-design", Checkpoint: "c1", Time: src.Boundaries[1].Time},
		2: {Reason: "pre-plan", Checkpoint: "c1", Time: src.Boundaries[1].Time}, 3: {Reason: "pre-execute"}, 4: {Reason: "pre-completion"}}
	if !maps.Equal(src.Boundaries, want) {
		t.Errorf("boundaries %v, want %v", src.Boundaries, want)
	}
	if src.Replays != 0 || len(src.Dispatches) != 2 || src.Path != "refs/crucible/pipelines/p1" {
		t.Errorf("replays %d, %d dispatches, path %s", src.Replays, len(src.Dispatches), src.Path)
	}

	record(pipeline.Draft{Type: pipeline.TypeReplay, Data: pipeline.ReplayData{Session: "replay-1", From: 2}})
	record(pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: 2}})
	record(checkpoint("c2", "pre-plan"), step(2, "pre-plan"))
	record(dispatch(3, 2, "plan-writer")...)
	if src, err = FromChain(ctx, svc, "p1", sp); err != nil {
		t.Fatal(err)
	}
	if b := src.Boundaries[2]; b.Checkpoint != "c2" {
		t.Errorf("after the replay, the Phase 2 boundary is %+v, want checkpoint c2", b)
	}
	var seqs []int
	for _, d := range src.Dispatches {
		seqs = append(seqs, d.Seq)
	}
	if !slices.Equal(seqs, []int{1, 3}) || !src.Replaced[2] || src.Replays != 1 {
		t.Errorf("dispatches %v, replaced %v, replays %d; want [1 3], 2 replaced, 1 replay", seqs, src.Replaced, src.Replays)
	}
}
