package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipespec"
)

// TestPhaseCommitResumes: a walk stopped between Phase 1's last step and
// its commit (git refuses to move the branch: a reference-transaction
// hook) leaves Phase 1 PASS, Phase 2 not begun and the phase's files in
// the work tree; the next engine's walk commits them in Phase 1's commit,
// once, with its trailers and note, and goes on to the end.
func TestPhaseCommitResumes(t *testing.T) {
	e, _ := sampleEngine(t, "happy")
	hook := filepath.Join(e.Workdir, ".git", "hooks", "reference-transaction")
	write(t, hook, "#!/bin/sh\n[ \"$1\" = prepared ] && grep -q ' refs/heads/main$' && exit 1\nexit 0\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Walk(t.Context(), WalkOptions{Spec: sp, Yes: true}); err == nil || !strings.Contains(err.Error(), "ref updates aborted by hook") {
		t.Fatalf("the walk's phase commit was to fail: %v", err)
	}
	if got := statuses(t, e); !equalStatuses(got, []ledger.Status{ledger.Pass, ledger.NotStarted, ledger.NotStarted, ledger.NotStarted}) {
		t.Fatalf("ledger %v, want Phase 1 PASS and no other begun", got)
	}
	if got := gittest.Git(t, e.Workdir, "log", "--format=%s"); got != "sample" {
		t.Fatalf("commits %q", got)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	e.Close()
	resumed, err := Open(e.Service, e.ID, e.Agents, e.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resumed.Close)
	resumed.Runner.Grace = e.Runner.Grace
	if res := walk(t, resumed, true); res.Status != WalkDone {
		t.Fatalf("the resumed walk: %+v", res)
	}
	commits := gittest.Git(t, e.Workdir, "log", "--format=%s|%(trailers:key=Crucible-Phase,key=Crucible-Task,valueonly,separator=%x2C)")
	if want := "Test the name argument (task 2)|3,2\nTake the name argument (task 1)|3,1\n" +
		"Phase 2 (Plan) of pipeline " + e.ID + ": docs/plan.md|2\n" +
		"Phase 1 (Design) of pipeline " + e.ID + ": docs/design.md, test/acceptance.sh|1\nsample|"; commits != want {
		t.Errorf("commits:\n%s\nwant\n%s", commits, want)
	}
	note := gittest.Git(t, e.Workdir, "notes", "--ref="+notes.ProvenanceRef, "show", "HEAD~3")
	if !strings.Contains(note, `"phase":1`) || !strings.Contains(note, `"pipeline":"`+e.ID+`"`) {
		t.Errorf("Phase 1's commit's note: %s", note)
	}
	if st := gittest.Git(t, e.Workdir, "status", "--porcelain"); st != "" {
		t.Errorf("left in the work tree:\n%s", st)
	}
}

// TestPhaseMessage: a phase commit's subject names its paths, at most
// three; its body lists them all when there are more.
func TestPhaseMessage(t *testing.T) {
	ph := pipespec.Phase{Number: ledger.Plan, Name: "Plan"}
	if got, want := phaseMessage("p", ph, []string{"docs/plan.md"}),
		"Phase 2 (Plan) of pipeline p: docs/plan.md\n\nWhat the dispatches of Phase 2 changed, committed as the phase ends."; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := phaseMessage("p", ph, []string{"a", "b", "c", "d"}),
		"Phase 2 (Plan) of pipeline p: a, b, c and 1 more\n\nWhat the dispatches of Phase 2 changed, committed as the phase ends.\n\na\nb\nc\nd"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
