package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// TestWalkConsentFastGate: a plan's fast gate that is not the project's
// test command is an agent's: with no approval pause before it (the spec's
// pause and RED run taken out; a run step of its own added, which needs no
// consent) the walk stops at the task's check before running it, listing it
// and the acceptance command unapproved, as often as it is walked
// (recording nothing again); the config's consent runs it, recorded once
// with the exact command.
func TestWalkConsentFastGate(t *testing.T) {
	dir := t.TempDir()
	happy, err := os.ReadFile("../testdata/agent/scenarios/happy")
	if err != nil {
		t.Fatal(err)
	}
	const gate = "sh ./test/unit.sh"
	write(t, filepath.Join(dir, "happy"), strings.ReplaceAll(string(happy), "fast-gate: sh test/unit.sh", "fast-gate: "+gate))
	e, _ := sampleEngine(t, filepath.Join(dir, "happy"))
	// A run step's own command is the spec's, not an agent's: it runs.
	text := strings.Replace(string(pipespec.DefaultTOML()), "  exports = [\"acceptance-command\"]\n",
		"  exports = [\"acceptance-command\"]\n\n  [[phases.steps]]\n  id = \"lint\"\n  kind = \"run\"\n  command = \"true\"\n", 1)
	sp, err := pipespec.Parse([]byte(text), "default.toml", nil) // its own: Default's is shared
	if err != nil {
		t.Fatal(err)
	}
	for i := range sp.Phases {
		sp.Phases[i].Steps = slices.DeleteFunc(sp.Phases[i].Steps, func(st pipespec.Step) bool {
			return st.Kind == pipespec.Approve || st.Command == pipespec.CommandAcceptance
		})
	}
	walkWith := func(trust bool) WalkResult {
		t.Helper()
		res, err := e.Walk(t.Context(), WalkOptions{Spec: sp, TrustAgentCommands: trust})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	stop := pipeline.Point{Phase: 3, Step: "task-check", Task: "1"}
	want := []AgentCommand{{Command: "sh test/acceptance.sh", From: "acceptance-command"}, {Command: gate, From: "fast-gate of task 1"}}
	res := walkWith(false)
	if res.Status != WalkConsent || res.Point != stop || !slices.Equal(res.Commands, want) ||
		res.Reason != "task-check would run "+gate+", a command an agent wrote: it runs once a person approves it" {
		t.Fatalf("walk: %+v", res)
	}
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again := walkWith(false); again.Status != WalkConsent || again.Point != stop {
		t.Fatalf("walk again: %+v", again)
	}
	if after, err := e.events(t.Context()); err != nil || len(after) != len(events) {
		t.Errorf("a second stop recorded %d events", len(after)-len(events))
	}
	if n := journalled(t, e, DecisionAgentCommand); n != 0 {
		t.Errorf("%d consents recorded before any was given", n)
	}
	if res := walkWith(true); res.Status != WalkDone {
		t.Fatalf("walk with the config: %+v", res)
	}
	all, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var consents []pipeline.DecisionData
	for _, ev := range all {
		var d pipeline.DecisionData
		if ev.Type == pipeline.TypeDecision && pipeline.DecodeData(ev, &d) == nil && d.Type == DecisionAgentCommand {
			consents = append(consents, d)
		}
	}
	if len(consents) != 1 || consents[0].Choice != gate || consents[0].Reason != "accepted by git config "+TrustAgentCommandsKey {
		t.Errorf("consents: %+v", consents)
	}
}
