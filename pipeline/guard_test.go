package pipeline

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/refs"
)

// TestGuard: an engine's service (Guard) appends on its own last append,
// lets through what a hook's service records of subagents' dispatches —
// the engine's lock held by another live process — refuses a hook's
// ledger record and another process's records outright (HeldError), and
// stops on a foreign append, a forged commit and a rewind
// (ForeignChangeError), writing nothing.
func TestGuard(t *testing.T) {
	engine := openService(t)
	ctx := t.Context()
	if _, _, err := engine.Start(ctx, StartOptions{Goal: "g", Mode: "feature", ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if err := engine.Guard("p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.StartDispatch(ctx, "p1", DispatchRequest{Role: "design-writer", Phase: 1, Prompt: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	// Another live process holds the engine lock (this test's stand-in
	// for the engine's process: a sleep).
	holder := exec.Command("sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	lock := EngineLock(engine.Repo, "p1")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	record := strings.Replace(gitext.Owner(), "pid "+strconv.Itoa(os.Getpid()), "pid "+strconv.Itoa(holder.Process.Pid), 1)
	if err := os.WriteFile(lock, []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}

	hook := Open(engine.Repo)
	hook.Hook = true
	seq, err := hook.StartDispatch(ctx, "p1", DispatchRequest{Role: "Explore", Phase: 1, Prompt: []byte("look"), ToolUseID: "toolu_1"})
	if err != nil {
		t.Fatalf("a hook's dispatch while the engine holds the pipeline: %v", err)
	}
	if _, err := hook.FinishDispatch(ctx, "p1", seq, FinishRequest{Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	var held *HeldError
	if _, _, err := hook.Record(ctx, "p1", Draft{Type: TypeVerdict, Data: VerdictData{Phase: 1, Verdict: "PASS"}}); !errors.As(err, &held) || held.Holder.Pid != holder.Process.Pid {
		t.Fatalf("a hook's verdict: %v", err)
	}
	other := Open(engine.Repo)
	if _, _, err := other.Record(ctx, "p1", Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "c"}}); !errors.As(err, &held) ||
		err.Error() != "pipeline p1 is held by 'sleep 60' (pid "+strconv.Itoa(holder.Process.Pid)+"): while its engine runs, no other process records decision" {
		t.Fatalf("another process's decision: %v", err)
	}
	// The engine takes the hook's dispatches as they are.
	if _, _, err := engine.Record(ctx, "p1", Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "after the hook"}}); err != nil {
		t.Fatalf("the engine after a hook's dispatches: %v", err)
	}

	tip := func() string { return gittest.Git(t, ".", "rev-parse", refs.PipelineRef("p1")) }
	stops := func(what string) {
		t.Helper()
		before := tip()
		var moved *ForeignChangeError
		_, _, err := engine.Record(ctx, "p1", Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "c"}})
		if !errors.As(err, &moved) || !strings.Contains(err.Error(), what) {
			t.Fatalf("want a stop naming %q: %v", what, err)
		}
		if tip() != before {
			t.Fatal("the engine wrote on top")
		}
	}
	// Foreign: the lock gone, another process appends.
	os.WriteFile(lock, nil, 0o644)
	mine := tip()
	if _, _, err := other.Record(ctx, "p1", Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "c"}}); err != nil {
		t.Fatal(err)
	}
	stops("1 events appended (decision t: c)")
	gittest.Git(t, ".", "update-ref", refs.PipelineRef("p1"), mine)
	// Forged: the tip's tree again, by plain git.
	forged := gittest.Git(t, ".", "commit-tree", "-p", mine, "-m", "forged", mine+"^{tree}")
	gittest.Git(t, ".", "update-ref", refs.PipelineRef("p1"), forged)
	stops("is not a sound chain commit")
	// Rewound.
	gittest.Git(t, ".", "update-ref", refs.PipelineRef("p1"), mine+"~1")
	stops("its chain was rewound from " + mine[:12])
	// Put back, it goes on.
	gittest.Git(t, ".", "update-ref", refs.PipelineRef("p1"), mine)
	if _, _, err := engine.Record(ctx, "p1", Draft{Type: TypeDecision, Data: DecisionData{Type: "t", Choice: "c"}}); err != nil {
		t.Fatal(err)
	}
}
