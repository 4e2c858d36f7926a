package replay

import (
	"context"
	"fmt"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// bigChain starts a pipeline in a new repository and records n dispatches
// (start and finish), perCommit to a commit, in Phases 1 and 2 (each with
// its steps done) and 3, whose last dispatch is in flight: the crash a
// replay resumes from Phase 3. replays replays from Phase 3 come between
// (each replacing the Phase 3 dispatches before it).
func bigChain(b *testing.B, n, perCommit, replays int) (*pipeline.Service, string) {
	const id = "bench-replay"
	svc, record := started(b, id)
	sp := defaultSpec(b)
	closePhase := func(p ledger.Phase) {
		var drafts []pipeline.Draft
		for _, s := range sp.Phase(p).Steps {
			drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{Phase: p, Step: s.ID, Status: pipeline.StepDone}})
		}
		drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeVerdict, Data: pipeline.VerdictData{Phase: p, Verdict: "PASS", PipelineID: id}},
			pipeline.Draft{Type: pipeline.LedgerType(ledger.PassGate), Data: pipeline.LedgerData{Phase: p}})
		if p < ledger.Plan {
			drafts = append(drafts, pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: p + 1}})
		}
		record(drafts...)
	}
	record(pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: 1}})
	phase := ledger.Phase(1)
	replayEvery := n
	if replays > 0 {
		replayEvery = n / 2 / (replays + 1)
	}
	var drafts []pipeline.Draft
	for seq := 1; seq <= n; seq++ {
		switch seq {
		case n / 4, n / 2:
			record(drafts...)
			drafts = nil
			closePhase(phase)
			phase++
		}
		if phase == ledger.Execute && seq > n/2 && replays > 0 && (seq-n/2)%replayEvery == 0 && seq < n {
			record(drafts...)
			drafts = nil
			record(pipeline.Draft{Type: pipeline.TypeReplay, Data: pipeline.ReplayData{Session: fmt.Sprintf("replay-%d", seq), From: ledger.Execute}})
		}
		role := map[ledger.Phase]string{1: "design-writer", 2: "plan-writer", 3: "test-writer"}[phase]
		drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeDispatchStart, Data: pipeline.DispatchStart{Seq: seq, Role: role, Phase: phase, Template: role}})
		if seq < n {
			drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeDispatchFinish, Data: pipeline.DispatchFinish{Seq: seq, Status: "completed", Summary: "done"}})
		}
		if len(drafts) >= 2*perCommit {
			record(drafts...)
			drafts = nil
		}
	}
	if len(drafts) > 0 {
		record(drafts...)
	}
	if _, err := svc.Repo.Git(context.Background(), "gc", "-q", "--prune=now"); err != nil {
		b.Fatal(err)
	}
	return svc, id
}

// dryRun is what `replay --dry-run` does past start-up: read the chain,
// gather the evidence, detect, render the plan.
func dryRun(b *testing.B, svc *pipeline.Service, id string, sp *pipespec.Spec) *Resume {
	ctx := context.Background()
	src, err := FromChain(ctx, svc, id, sp)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := Gather(ctx, svc.Repo, src)
	if err != nil {
		b.Fatal(err)
	}
	r, err := Detect(src, sp, ev, Options{})
	if err != nil {
		b.Fatal(err)
	}
	(&Plan{Source: src, Resume: r}).Markdown()
	return r
}

// BenchmarkDryRun10k is `replay --dry-run` on a 10,000-dispatch pipeline
// (20,000 events in 1,000 commits) crashed in Phase 3, against reading
// its chain alone (chain-floor): the goal is under 1 s. With 100
// replays before the crash the cost stays the same (replays-100): the
// detection is one pass however many earlier runs of the phases there were.
// Building the chains takes a minute. Run with:
// go test -run '^$' -bench DryRun10k ./replay
func BenchmarkDryRun10k(b *testing.B) {
	sp := defaultSpec(b)
	for _, replays := range []int{0, 100} {
		svc, id := bigChain(b, 10000, 10, replays)
		b.Run(fmt.Sprintf("chain-floor/replays-%d", replays), func(b *testing.B) {
			for b.Loop() {
				if _, err := svc.ChainEvents(context.Background(), id); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("dry-run/replays-%d", replays), func(b *testing.B) {
			for b.Loop() {
				if r := dryRun(b, svc, id, sp); r.Phase != ledger.Execute {
					b.Fatalf("resumes at Phase %d, want 3", r.Phase)
				}
			}
		})
	}
}
