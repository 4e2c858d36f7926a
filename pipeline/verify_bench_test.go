package pipeline

import (
	"context"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
)

// BenchmarkVerify10k is a whole replay of a 10,000-event chain, packed by
// git gc, in process: bench/run.sh's verify row without process start-up.
// The chain is bench/run.sh's too: a start, a begin, then verdicts that
// keep Phase 1 in progress.
// Building the chain (10,000 appends) takes a minute or two before the
// timing starts. Run with: go test -run '^$' -bench Verify10k -benchmem ./pipeline
func BenchmarkVerify10k(b *testing.B) {
	const events = 10000
	dir := gittest.Init(b)
	b.Chdir(dir)
	gittest.Git(b, dir, "config", "gc.auto", "0") // the chain is packed once, at the end
	ctx := context.Background()
	repo, err := gitext.Discover(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s := Open(repo)
	b.Cleanup(func() { s.Close() })
	st, _, err := s.Start(ctx, StartOptions{Goal: "big pipeline", Mode: "feature", ID: "bench-big"})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.Record(ctx, st.ID, Draft{Type: LedgerType(ledger.Begin), Data: LedgerData{Phase: ledger.Design}}); err != nil {
		b.Fatal(err)
	}
	for range events - 2 {
		verdict := Draft{Type: TypeVerdict, Data: VerdictData{Phase: ledger.Design, Verdict: "FAIL", PipelineID: st.ID}}
		if _, _, err := s.Record(ctx, st.ID, verdict); err != nil {
			b.Fatal(err)
		}
	}
	gittest.Git(b, dir, "gc", "-q", "--prune=now")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		problems, err := s.Verify(ctx, st.ID)
		if err != nil {
			b.Fatal(err)
		}
		if len(problems) != 0 {
			b.Fatalf("problems in a sound chain: %v", problems)
		}
	}
}
