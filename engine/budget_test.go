package engine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
)

// fakeClaude is testdata/agent/fakeclaude: an agent of kind claude that
// plays the scripted agent and prices each dispatch as claude does.
var fakeClaude, _ = filepath.Abs("../testdata/agent/fakeclaude")

// claudeAgent is fakeclaude run as the claude client, each dispatch priced
// cost.
func claudeAgent(t *testing.T, cost string) agent.Agent {
	t.Setenv("FAKECLAUDE_COST", cost)
	return agent.Agent{Name: "fake", Kind: agent.Claude, Command: []string{"sh", fakeClaude}, Timeout: time.Minute}
}

func TestNextCap(t *testing.T) {
	for _, c := range []struct {
		cost, limit float64
		want        string
	}{
		{0.06, 0.05, "0.11"}, // the cost and the cap again: past twice the cap
		{0.05, 0.05, "0.10"}, // twice the cap
		{0.32, 0.30, "0.62"},
		{7.5, 1, "8.50"},
		{0.0011, 0.001, "0.01"}, // in cents, rounded up
		{10, 10, "20.00"},
	} {
		if got := NextCap(c.cost, c.limit); got != c.want {
			t.Errorf("NextCap(%v, %v) = %s, want %s", c.cost, c.limit, got, c.want)
		}
	}
}

// TestDispatchBudget: once the pipeline's recorded cost reaches the cap,
// Dispatch starts and records nothing and says why, a halt to a task run;
// below it, or with no cap, the agent runs. The cost is what the claude
// client priced: an agent of kind claude whose dispatches report it.
func TestDispatchBudget(t *testing.T) {
	e := newEngine(t, claudeAgent(t, "0.03"))
	t.Setenv("FAKECLAUDE_SCENARIO", filepath.Join(t.TempDir(), "scenario"))
	if err := os.WriteFile(os.Getenv("FAKECLAUDE_SCENARIO"), []byte("[implementer]\nreport\nstatus: completed\ndeviations: []\n.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := implement
	d.Report = "task"
	e.Budget = &Budget{MaxUSD: 0.05, From: "--max-cost"}
	for i, want := range []string{"completed", "completed", "capped", "capped"} {
		out, err := e.Dispatch(t.Context(), d)
		var b *BudgetError
		switch {
		case want == "completed" && (err != nil || out.Status != "completed" || out.Usage == nil || *out.Usage.CostUSD != 0.03):
			t.Fatalf("dispatch %d: %+v, %v: want it run and priced", i+1, out, err)
		case want == "capped" && !errors.As(err, &b):
			t.Fatalf("dispatch %d: %+v, %v: want a BudgetError", i+1, out, err)
		case want == "capped":
			if b.Error() != "the pipeline's recorded cost, $0.06, has reached its cap of $0.05 (--max-cost): no dispatch starts past it" ||
				b.Suggestion() != "Raise the cap to go on: git crucible build --resume --max-cost 0.11" || !errors.Is(err, taskdag.ErrHalted) {
				t.Fatalf("dispatch %d: %q, %q", i+1, b.Error(), b.Suggestion())
			}
		}
	}
	recs, err := e.Dispatches(t.Context())
	if err != nil || len(recs) != 2 {
		t.Fatalf("dispatches %+v, %v: want the two below the cap, and no more", recs, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.Workdir, ".crucible")); len(entries) > 1 {
		t.Fatalf("a refused dispatch left its agent directory: %v", entries)
	}
	// The cap raised, or gone: dispatches start again.
	e.Budget = &Budget{MaxUSD: 0.2, From: "crucible.maxCost", GoOn: func(n string) string { return "go on " + n }}
	if out, err := e.Dispatch(t.Context(), d); err != nil || out.Status != "completed" {
		t.Fatalf("under a higher cap: %+v, %v", out, err)
	}
	e.Budget = nil
	if out, err := e.Dispatch(t.Context(), d); err != nil || out.Status != "completed" {
		t.Fatalf("with no cap: %+v, %v", out, err)
	}
	c, err := e.Service.Cost(t.Context(), e.ID)
	if err != nil || c.Priced != 4 || pipeline.NanoUSD(c.CostUSD) != pipeline.NanoUSD(0.12) || c.Clients["claude"].Dispatches != 4 {
		t.Fatalf("cost %+v, %v", c, err)
	}
}

// TestWalkCostCap: a walk whose agents are claude's stops at its next
// dispatch once the cost reaches the cap: escalated, with the escalation
// recorded (health RED, the hint its action) and the phase still in
// progress; walked again under a higher cap it goes on past it (a budget
// decision, health GREEN) and finishes, no point dispatched twice.
func TestWalkCostCap(t *testing.T) {
	e, log := sampleEngine(t, "happy")
	e.Agents = config(claudeAgent(t, "0.02"))
	e.Agents.Test = "sh test/unit.sh"
	e.Budget = &Budget{MaxUSD: 0.05, From: "--max-cost"}
	res := walk(t, e, true)
	want := WalkResult{Status: WalkEscalated, Point: pipeline.Point{Phase: ledger.Design, Step: "design-gate", Round: 2},
		Reason:     "the pipeline's recorded cost, $0.06, has reached its cap of $0.05 (--max-cost): no dispatch starts past it",
		Suggestion: "Raise the cap to go on: git crucible build --resume --max-cost 0.11"}
	if res.Status != want.Status || res.Point != want.Point || res.Reason != want.Reason || res.Suggestion != want.Suggestion {
		t.Fatalf("walk %+v\nwant %+v", res, want)
	}
	if got := logLines(t, log); len(got) != 3 {
		t.Fatalf("dispatches %q: want 3 before the cap", got)
	}
	st, _, err := e.Service.Load(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := st.View.Health; h.Level != pipeline.Red || h.Reason != "escalation pending: cost cap reached before design-gate" || h.Action != want.Suggestion {
		t.Fatalf("health %+v", h)
	}
	if got := statuses(t, e); got[0] != ledger.InProgress {
		t.Fatalf("ledger %v: the cap leaves the phase in progress", got)
	}
	e.Budget = &Budget{MaxUSD: 5, From: "--max-cost"}
	if res := walk(t, e, true); res.Status != WalkDone {
		t.Fatalf("walk under a higher cap: %+v", res)
	}
	lines := logLines(t, log)
	if len(lines) != 16 || len(slices.Compact(slices.Clone(lines))) != 16 {
		t.Fatalf("dispatches %q: want the 16 of the happy scenario, each once", lines)
	}
	st, _, err = e.Service.Load(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := st.View.Health; h.Level != pipeline.Green {
		t.Fatalf("health %+v after going on past the cap", h)
	}
	c, err := e.Service.Cost(t.Context(), e.ID)
	if err != nil || c.Dispatches != 16 || c.Priced != 16 || c.Summary() != "$0.32 (claude, 16 of 16 dispatches)" {
		t.Fatalf("cost %+v, %v", c, err)
	}
}
