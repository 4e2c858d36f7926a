package runpage

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// fixture is a pipeline recorded in a real repository through package
// pipeline, with every kind of thing the page shows: gate rounds with
// findings, a retry, an interrupted dispatch settled by a resume, two
// dispatches of a role at once, an escalation, an approval pause, a skip
// and its acknowledgement, a handoff, decisions, a replay with a mutation
// and a task run. outputs are the kept reports Read returns.
type fixture struct {
	svc     *pipeline.Service
	id      string
	outputs map[string]string
}

// hostile is text from an agent that must stay text.
var hostile = []string{
	`<script>alert("x")</script>`,
	`</svg><img src="http://example.invalid/x.png">`,
	`"><a href="https://example.invalid/">click</a>`,
}

// newFixture records the pipeline; extra dispatches of the implementer
// (each a start and a finish) make it as long as a test wants.
func newFixture(t testing.TB, extra int, title string) *fixture {
	dir := gittest.Init(t)
	gittest.Git(t, dir, "config", "gc.auto", "0")
	gittest.Chdir(t, dir)
	ctx := context.Background()
	repo, err := gitext.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc := pipeline.Open(repo)
	t.Cleanup(func() { svc.Close() })
	const id = "report-fixture"
	if _, _, err := svc.Start(ctx, pipeline.StartOptions{Goal: "Greet by name " + hostile[0], Mode: "feature", ID: id}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, id: id, outputs: map[string]string{}}
	record := func(drafts ...pipeline.Draft) {
		t.Helper()
		if _, _, err := svc.Record(ctx, id, drafts...); err != nil {
			t.Fatal(err)
		}
	}
	ledgerDo := func(k ledger.Kind, p ledger.Phase, reason, confirm string) pipeline.Draft {
		return pipeline.Draft{Type: pipeline.LedgerType(k), Data: pipeline.LedgerData{Phase: p, Reason: reason, Confirm: confirm}}
	}
	seq := 0
	dispatch := func(p ledger.Phase, role, step, task string, round int, status string, report string, mut func(*pipeline.DispatchStart, *pipeline.DispatchFinish)) []pipeline.Draft {
		seq++
		s := pipeline.DispatchStart{Seq: seq, Role: role, Phase: p, Template: role, Step: step, TaskID: task, Round: round, InputChars: 400}
		fin := pipeline.DispatchFinish{Seq: seq, Status: status, OutputChars: len(report), Summary: fmt.Sprintf("report of %d bytes", len(report))}
		if report != "" {
			fin.Output = pipeline.DispatchPath(seq, role, true)
			f.outputs[fin.Output] = report
		}
		if mut != nil {
			mut(&s, &fin)
		}
		return []pipeline.Draft{{Type: pipeline.TypeDispatchStart, Data: s}, {Type: pipeline.TypeDispatchFinish, Data: fin}}
	}
	findings := func(fatal, sig, minor int) string {
		var b strings.Builder
		b.WriteString("findings:\n")
		for _, sev := range []struct {
			key string
			n   int
		}{{"fatal", fatal}, {"significant", sig}, {"minor", minor}} {
			if sev.n == 0 {
				fmt.Fprintf(&b, "  %s: []\n", sev.key)
				continue
			}
			fmt.Fprintf(&b, "  %s:\n", sev.key)
			for i := 0; i < sev.n; i++ {
				fmt.Fprintf(&b, "    - title: %q\n      file: greet.sh:%d\n", fmt.Sprintf("%s %d %s", sev.key, i+1, hostile[i%len(hostile)]), i+1)
			}
		}
		return b.String()
	}
	done := func(p ledger.Phase, step, task, result string) pipeline.Draft {
		return pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{Phase: p, Step: step, Task: task, Status: pipeline.StepDone, Result: result}}
	}
	decision := func(typ, choice, reason string) pipeline.Draft {
		return pipeline.Draft{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{Type: typ, Choice: choice, Reason: reason, Alternatives: "none"}}
	}

	// Phase 1: a design gate of three rounds, the first with the title given.
	record(ledgerDo(ledger.Begin, 1, "", ""))
	record(dispatch(1, "design-writer", "design", "", 0, "completed", "status: success\n", nil)...)
	first := findings(1, 1, 0)
	if title != "" {
		first = fmt.Sprintf("findings:\n  fatal:\n    - title: %q\n  significant: []\n  minor: []\n", title)
	}
	record(dispatch(1, "red-team", "design-gate", "", 1, "completed", first, nil)...)
	record(decision("gate-round", "round 1: fix and run round 2", "1 Fatal, 1 Significant "+hostile[1]))
	record(dispatch(1, "fixer", "design-gate", "", 1, "completed", "status: success\n", nil)...)
	record(dispatch(1, "red-team", "design-gate", "", 2, "completed", findings(0, 1, 1), nil)...)
	record(dispatch(1, "fixer", "design-gate", "", 2, "completed", "status: success\n", nil)...)
	record(dispatch(1, "red-team", "design-gate", "", 3, "completed", findings(0, 0, 1), nil)...)
	record(done(1, "design-gate", "", "PASS"), pipeline.Draft{Type: pipeline.TypeVerdict, Data: pipeline.VerdictData{Phase: 1, Verdict: "PASS", PipelineID: id, Rounds: 3}},
		ledgerDo(ledger.PassGate, 1, "", ""))
	record(pipeline.Draft{Type: pipeline.TypeHandoff, Data: pipeline.HandoffData{From: 1, To: 2, Path: pipeline.HandoffPath(1),
		Decisions: []pipeline.HandoffDecision{{ID: "DEC-1", Text: "keep greet.sh " + hostile[2]}}, Constraints: []string{"POSIX sh"}}})
	f.outputs[pipeline.HandoffPath(1)] = "# Handoff 1 to 2\n\n" + hostile[0] + "\n"

	// Phase 2: skipped, and the skip acknowledged; an approval pause.
	record(ledgerDo(ledger.Skip, 2, "one-function change "+hostile[0], ""))
	record(pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{Phase: 2, Step: "approve", Status: pipeline.StepWaiting}})
	record(ledgerDo(ledger.Ack, 2, "", "SKIP GATE"))

	// Phase 3: a task run of three tasks, two implementers at once, an
	// interrupted one retried, a review that escalates.
	record(ledgerDo(ledger.Begin, 3, "", ""))
	record(pipeline.Draft{Type: pipeline.TypeDAGRun, Data: pipeline.DAGRunData{Status: "in-progress", MaxParallel: 2, Tasks: 3}})
	for _, task := range []string{"1a", "1b"} {
		record(pipeline.Draft{Type: pipeline.TypeDAGTask, Data: pipeline.DAGTaskData{Task: task, Status: "dispatched", Level: 1}})
	}
	seq++
	a := seq
	seq++
	bseq := seq
	record(pipeline.Draft{Type: pipeline.TypeDispatchStart, Data: pipeline.DispatchStart{Seq: a, Role: "implementer", Phase: 3, Template: "task", TaskID: "1a", TaskTitle: "Lower " + hostile[1], Step: "implement"}},
		pipeline.Draft{Type: pipeline.TypeDispatchStart, Data: pipeline.DispatchStart{Seq: bseq, Role: "implementer", Phase: 3, Template: "task", TaskID: "1b", Step: "implement"}})
	record(pipeline.Draft{Type: pipeline.TypeDispatchFinish, Data: pipeline.DispatchFinish{Seq: a, Status: "completed"}},
		pipeline.Draft{Type: pipeline.TypeDispatchFinish, Data: pipeline.DispatchFinish{Seq: bseq, Status: "error", Summary: "interrupted: killed", Recovered: "interrupted"}})
	retried := bseq
	record(dispatch(3, "implementer", "implement", "1b", 0, "completed", "", func(s *pipeline.DispatchStart, _ *pipeline.DispatchFinish) {
		s.RetryOf, s.RetryReason = &retried, "its agent was killed"
	})...)
	record(pipeline.Draft{Type: pipeline.TypeDAGTask, Data: pipeline.DAGTaskData{Task: "1a", Status: "completed", Level: 1, Commit: strings.Repeat("a", 40)}},
		pipeline.Draft{Type: pipeline.TypeDAGTask, Data: pipeline.DAGTaskData{Task: "1b", Status: "completed", Level: 1, Commit: strings.Repeat("b", 40)}},
		pipeline.Draft{Type: pipeline.TypeDAGTask, Data: pipeline.DAGTaskData{Task: "2", Status: "failed", Level: 2, Reason: "review escalated"}})
	for i := 0; i < extra; i++ {
		record(dispatch(3, "implementer", "implement", fmt.Sprintf("x%d", i%50), 0, []string{"completed", "failed", "completed", "skipped"}[i%4], "", nil)...)
	}
	record(dispatch(3, "reviewer", "task-review", "2", 1, "completed", findings(1, 0, 0), nil)...)
	record(dispatch(3, "reviewer", "task-review", "2", 2, "completed", findings(1, 1, 0), nil)...)
	record(decision("escalation", "task-review SUSTAINED_REGRESSION at round 2", "the score rose"),
		pipeline.Draft{Type: pipeline.TypeStep, Data: pipeline.StepData{Phase: 3, Step: "task-review", Task: "2", Round: 2, Status: pipeline.StepEscalated, Result: "SUSTAINED_REGRESSION"}})

	// A replay from Phase 1 with a mutation: the red team passes at once.
	record(pipeline.Draft{Type: pipeline.TypeReplay, Data: pipeline.ReplayData{Session: "replay-1", From: 1, Mutations: []string{"red-team.md -> strict.md"}}})
	s1 := "replay-1"
	muts := func(s *pipeline.DispatchStart, _ *pipeline.DispatchFinish) {
		s.ReplaySession, s.Mutation = s1, "red-team.md -> strict.md"
	}
	record(ledgerDo(ledger.Begin, 1, "", ""))
	record(dispatch(1, "design-writer", "design", "", 0, "completed", "status: success\n", muts)...)
	record(dispatch(1, "red-team", "design-gate", "", 1, "completed", findings(0, 0, 0), muts)...)
	record(done(1, "design-gate", "", "PASS"), pipeline.Draft{Type: pipeline.TypeVerdict, Data: pipeline.VerdictData{Phase: 1, Verdict: "PASS", PipelineID: id, Rounds: 1}},
		ledgerDo(ledger.PassGate, 1, "", ""))
	return f
}

// input is the page's input from the fixture's chain.
func (f *fixture) input(t testing.TB) Input {
	ctx := context.Background()
	st, _, err := f.svc.Load(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	events, err := f.svc.ChainEvents(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := f.svc.Cost(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	return Input{ID: f.id, State: st, Events: events, Cost: cost, Now: "2030-01-01T00:00:00Z", Generated: "2030-01-01T00:00:00Z",
		Read: func(path string) ([]byte, error) {
			if s, ok := f.outputs[path]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		},
		Deps: map[string][]string{"2": {"1a", "1b"}},
		Commits: []Commit{{Hash: strings.Repeat("a", 40), Tree: strings.Repeat("c", 40), Subject: "Lower " + hostile[0],
			Trailers: []Trailer{{Key: "Crucible-Pipeline", Value: f.id}, {Key: "Crucible-Task", Value: "1a"}}}},
		FastGates: map[string]FastGate{strings.Repeat("c", 40): {Status: "pass", Exit: 0, Time: "2030-01-01T00:00:00Z", DurationMS: 120}},
	}
}

// page builds and renders the fixture.
func (f *fixture) page(t testing.TB) (*Model, []byte) {
	m, err := Build(f.input(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(m)
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}
