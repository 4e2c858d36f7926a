package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestCompare: the original run's dispatches of the replayed phases beside
// the replay's, paired by replay_of, outputs compared line by line; a gate
// judge counts as a gate round; a dispatch of the original that the replay
// did not run, and one new in the replay, stand alone.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	svc, record := started(t, "p1")
	sp := defaultSpec(t)
	run := func(r pipeline.DispatchRequest, out string) int {
		t.Helper()
		seq, err := svc.StartDispatch(ctx, "p1", r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.FinishDispatch(ctx, "p1", seq, pipeline.FinishRequest{Status: "completed", Output: []byte(out)}); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	gate := func(session string, of *int) pipeline.DispatchRequest {
		return pipeline.DispatchRequest{Role: "red-team", Phase: 1, Step: "design-gate", Round: 1, ReplaySession: session, ReplayOf: of}
	}
	design := run(pipeline.DispatchRequest{Role: "design-writer", Phase: 1, Step: "design"}, "a\nb\n")
	round1 := run(gate("", nil), "fatal\nsignificant\n")
	run(gate("", nil), "pass\n")
	record(pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: 1}},
		pipeline.Draft{Type: pipeline.TypeReplay, Data: pipeline.ReplayData{Session: "replay-1", From: 1, Mutations: []string{"red-team.md -> strict.md"}, Head: "abc"}})
	run(pipeline.DispatchRequest{Role: "design-writer", Phase: 1, Step: "design", ReplaySession: "replay-1", ReplayOf: &design}, "a\nb\n")
	run(gate("replay-1", &round1), "pass\n")
	run(pipeline.DispatchRequest{Role: "test-writer", Phase: 1, Step: "acceptance-tests", ReplaySession: "replay-1"}, "t\n")

	events, err := svc.ChainEvents(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Compare("p1", events, sp, "p1", "replay-1", func(path string) ([]byte, error) { return svc.ReadKept(ctx, "p1", path) })
	if err != nil {
		t.Fatal(err)
	}
	if d.A.Session.Final != "abc" || len(d.A.Dispatches) != 3 || len(d.B.Dispatches) != 3 || d.A.GateRounds != 2 || d.B.GateRounds != 1 {
		t.Errorf("final %q, dispatches %d and %d, gate rounds %d and %d; want abc, 3 and 3, 2 and 1",
			d.A.Session.Final, len(d.A.Dispatches), len(d.B.Dispatches), d.A.GateRounds, d.B.GateRounds)
	}
	got := string(d.Markdown())
	for _, want := range []string{
		"- red-team.md -> strict.md\n",
		"| Quality gate rounds | 2 | 1 | -1 |\n",
		"| 1 → 4 | design-writer | completed | completed | same output |\n",
		"| 2 → 5 | red-team | completed | completed | output +1/-2 lines |\n",
		"| - → 6 | test-writer | - | completed | new in the replay |\n",
		"| 3 → - | red-team | completed | - | not run in the replay |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff has no line %q:\n%s", want, got)
		}
	}
	if _, err := Compare("p1", events, sp, "p1", "replay-9", nil); err == nil || err.Error() != `pipeline p1 has no session "replay-9" (its sessions: p1, replay-1)` {
		t.Errorf("an unknown session: %v", err)
	}
}
