package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// scriptedAgent is the scripted agent's path: tests run in their repositories.
var scriptedAgent, _ = filepath.Abs("../testdata/agent/scripted")

// sampleEngine is an engine on a new pipeline of a repository holding the
// sample project, committed, its agents the scripted agent playing
// scenario (configured in <git-dir>/crucible/agents.toml), its dispatches
// logged to the returned file.
func sampleEngine(t *testing.T, scenario string) (*Engine, string) {
	t.Helper()
	gittest.Hermetic(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	installHooks(t, dir)
	if err := os.CopyFS(dir, os.DirFS("../testdata/agent/sample")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "sample")
	log := filepath.Join(t.TempDir(), "dispatches")
	t.Setenv("SCRIPTED_LOG", log)
	conf := "[agents.scripted]\nkind = \"command\"\ncommand = [\"sh\", \"" + scriptedAgent + "\", \"--scenario\", \"" + scenario + "\"]\n" +
		"timeout = \"1m\"\n[roles]\ndefault = \"scripted\"\n[project]\ntest = \"sh test/unit.sh\"\n"
	if err := os.MkdirAll(filepath.Join(dir, ".git", "crucible"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".git", "crucible", "agents.toml"), conf)
	repo, svc := startedIn(t, dir, "greet takes a name")
	agents, err := agent.Load(t.Context(), repo)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(svc, testID, agents, repo.WorkTree)
	if err != nil {
		t.Fatal(err)
	}
	e.Runner.Grace = 100 * time.Millisecond
	t.Cleanup(e.Close)
	return e, log
}

var hookBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "walk-hook-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, hooks.HookBinary)
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/git-crucible-hook").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// installHooks installs git-crucible's hooks in the repository at dir,
// so that the engine's task commits get their trailers and provenance.
func installHooks(t *testing.T, dir string) {
	t.Helper()
	bin, err := hookBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.Install(filepath.Join(dir, ".git", "hooks"), hooks.Defaults(false), bin, hooks.Refuse); err != nil {
		t.Fatal(err)
	}
}

func walk(t *testing.T, e *Engine, yes bool) WalkResult {
	t.Helper()
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Walk(t.Context(), WalkOptions{Spec: sp, Yes: yes})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// statuses is the ledger's four phases' statuses.
func statuses(t *testing.T, e *Engine) []ledger.Status {
	t.Helper()
	st, _, err := e.Service.Load(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Status
	for _, p := range ledger.Phases {
		out = append(out, st.Gates.Ledger.Entry(p).Status)
	}
	return out
}

func logLines(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestWalkHappy: a walk with Yes runs the four phases of the default spec
// with the scripted agent: the ledger closes them PASS, PASS, COMPLETE,
// PASS, the design gate takes three rounds, each task's commit carries its
// task and seq, and the chain verifies.
func TestWalkHappy(t *testing.T) {
	e, log := sampleEngine(t, "happy")
	res := walk(t, e, true)
	if res.Status != WalkDone {
		t.Fatalf("walk: %+v", res)
	}
	want := []ledger.Status{ledger.Pass, ledger.Pass, ledger.Complete, ledger.Pass}
	if got := statuses(t, e); !equalStatuses(got, want) {
		t.Errorf("ledger %v, want %v", got, want)
	}
	var redTeam1 int
	for _, l := range logLines(t, log) {
		if strings.Contains(l, " red-team phase=1 ") {
			redTeam1++
		}
	}
	if redTeam1 != 3 {
		t.Errorf("design gate rounds %d, want 3:\n%s", redTeam1, strings.Join(logLines(t, log), "\n"))
	}
	st, _, err := e.Service.Load(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.View.Metrics.GateRounds; r["1"] != 3 || r["2"] != 1 || r["4"] != 1 {
		t.Errorf("gate rounds %v", r)
	}
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var handoffs []string
	for _, ev := range events {
		if ev.Type == pipeline.TypeHandoff {
			var d pipeline.HandoffData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				t.Fatal(err)
			}
			handoffs = append(handoffs, fmt.Sprintf("%d-%d:%d", d.From, d.To, len(d.Inputs)))
		}
	}
	// Inputs: design, acceptance-command; then plan too; then the same.
	if got := strings.Join(handoffs, " "); got != "1-2:2 2-3:3 3-4:3" {
		t.Errorf("handoffs %s", got)
	}
	if problems, err := e.Service.Verify(t.Context(), e.ID); err != nil || len(problems) != 0 {
		t.Errorf("verify: %v %v", problems, err)
	}
	steps, err := pipeline.StepsOf(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"1", "2"} { // the plan's fast gates ran
		if r := steps[pipeline.Point{Phase: ledger.Execute, Step: "task-check", Task: task}].Result; r != "exit 0: sh test/unit.sh" {
			t.Errorf("task %s's check: %q", task, r)
		}
	}
	commits := gittest.Git(t, e.Workdir, "log",
		"--format=%s|%(trailers:key=Crucible-Phase,key=Crucible-Task,key=Crucible-Seq,valueonly,separator=%x2C)")
	// Dispatches 1-10 are phases 1 and 2 (the design gate's three rounds
	// and two fixes among them); task 1's implementer is 11, its review 12.
	// Each phase's artifacts are in the phase's commit, made as it ended.
	if want := "Test the name argument (task 2)|3,2,13\n" +
		"Take the name argument (task 1)|3,1,11\n" +
		"Phase 2 (Plan) of pipeline " + e.ID + ": docs/plan.md|2\n" +
		"Phase 1 (Design) of pipeline " + e.ID + ": docs/design.md, test/acceptance.sh|1\n" +
		"sample|"; commits != want {
		t.Errorf("commits:\n%s\nwant\n%s", commits, want)
	}
	// A task's commit holds its task's files alone.
	for rev, want := range map[string]string{"HEAD": "test/unit.sh", "HEAD~1": "greet.sh", "HEAD~2": "docs/plan.md",
		"HEAD~3": "docs/design.md\ntest/acceptance.sh"} {
		if got := gittest.Git(t, e.Workdir, "show", "--name-only", "--format=", rev); got != want {
			t.Errorf("%s's files:\n%s\nwant\n%s", rev, got, want)
		}
	}
	if list := gittest.Git(t, e.Workdir, "notes", "--ref="+notes.ProvenanceRef, "list"); len(strings.Fields(list)) != 8 { // the phases' and the tasks' commits
		t.Errorf("provenance notes:\n%s", list)
	}
}

func equalStatuses(a, b []ledger.Status) bool {
	return strings.Join(statusStrings(a), ",") == strings.Join(statusStrings(b), ",")
}

func statusStrings(s []ledger.Status) []string {
	var out []string
	for _, x := range s {
		out = append(out, string(x))
	}
	return out
}

// TestWalkStagnate: a design gate that does not improve escalates at
// round 2: the walk says so with the gate's suggestion, the ledger fails
// Phase 1, and health is RED.
func TestWalkStagnate(t *testing.T) {
	e, _ := sampleEngine(t, "stagnate")
	res := walk(t, e, true)
	want := pipeline.Point{Phase: ledger.Design, Step: "design-gate", Round: 2}
	if res.Status != WalkEscalated || res.Point != want || res.Suggestion == "" ||
		!strings.Contains(res.Reason, "STAGNATION") {
		t.Fatalf("walk: %+v", res)
	}
	got := statuses(t, e)
	if got[0] != ledger.Fail || got[1] != ledger.NotStarted {
		t.Errorf("ledger %v", got)
	}
	st, _, err := e.Service.Load(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := st.View.Health; h.Level != pipeline.Red || h.Action != res.Suggestion {
		t.Errorf("health %+v, want RED with the gate's suggestion %q", h, res.Suggestion)
	}
	pr, err := e.Progress(t.Context(), mustDefault(t), nil)
	if err != nil || pr.Steps[pipeline.Point{Phase: ledger.Design, Step: "design-gate"}].Status != pipeline.StepEscalated {
		t.Errorf("progress %+v, %v", pr, err)
	}
}

// TestWalkResumeAtApproval: without Yes the walk stops at the approval,
// waiting, and a second walk without Yes stops there again recording
// nothing; with Yes it goes on to the end without dispatching again
// anything the first walk dispatched.
func TestWalkResumeAtApproval(t *testing.T) {
	e, log := sampleEngine(t, "happy")
	res := walk(t, e, false)
	if res.Status != WalkWaiting || res.Point != (pipeline.Point{Phase: ledger.Design, Step: "approve"}) || res.Message == "" {
		t.Fatalf("walk: %+v", res)
	}
	before := logLines(t, log)
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again := walk(t, e, false); again.Status != WalkWaiting {
		t.Fatalf("walk again: %+v", again)
	}
	if after, err := e.events(t.Context()); err != nil || len(after) != len(events) {
		t.Errorf("a second wait recorded %d events", len(after)-len(events))
	}
	if res := walk(t, e, true); res.Status != WalkDone {
		t.Fatalf("resume: %+v", res)
	}
	lines := logLines(t, log)
	seen := map[string]bool{}
	for _, l := range lines {
		_, l, _ = strings.Cut(l, " ") // its seq
		if seen[l] {
			t.Errorf("dispatched twice: %s", l)
		}
		seen[l] = true
	}
	if strings.Join(lines[:len(before)], "\n") != strings.Join(before, "\n") {
		t.Errorf("the resume changed the log's start")
	}
	if got := statuses(t, e); got[3] != ledger.Pass {
		t.Errorf("ledger %v", got)
	}
}

func mustDefault(t testing.TB) *pipespec.Spec {
	t.Helper()
	sp, err := pipespec.Default()
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestWalkFails: an agent that fails, writes garbage or no report fails
// its step, as does a task that breaks its fast gate; the walk stops
// there with the step's failure recorded and the phase still in progress.
func TestWalkFails(t *testing.T) {
	design := pipeline.Point{Phase: ledger.Design, Step: "design"}
	for _, c := range []struct {
		scenario string
		at       pipeline.Point
		reason   string
	}{
		{"fails", design, "dispatch 1 (design-writer) failed: "},
		{"garbage", design, "dispatch 1 (design-writer) failed: report: line 1: "},
		{"noreport", design, "dispatch 1 (design-writer) failed: it wrote no report"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			e, _ := sampleEngine(t, c.scenario)
			res := walk(t, e, true)
			if res.Status != WalkFailed || res.Point != c.at || !strings.HasPrefix(res.Reason, c.reason) {
				t.Fatalf("walk: %+v", res)
			}
			pr, err := e.Progress(t.Context(), mustDefault(t), []string{"1", "2"})
			if err != nil || pr.Next != c.at || pr.Steps[c.at].Status != pipeline.StepFailed {
				t.Errorf("progress %+v, %v", pr, err)
			}
			if st, ok := pr.Steps[pipeline.Point{Phase: ledger.Execute, Step: "tasks"}]; ok {
				t.Errorf("the tasks step has a step event of its own: %+v", st)
			}
			if got := statuses(t, e)[c.at.Phase-1]; got != ledger.InProgress {
				t.Errorf("Phase %d is %s", c.at.Phase, got)
			}
		})
	}
}

// TestWalkManual: a manual design writer stops the walk waiting, with the
// person's instructions, again on a resume before it is answered (nothing
// recorded twice); once its dispatch is finished the walk adopts it and
// goes on.
func TestWalkManual(t *testing.T) {
	e, _ := sampleEngine(t, "happy")
	e.Agents.Agents["person"] = agent.Agent{Name: "person", Kind: agent.Manual}
	e.Agents.Roles["design-writer"] = agent.Binding{Agent: "person"}
	at := pipeline.Point{Phase: ledger.Design, Step: "design"}
	res := walk(t, e, true)
	if res.Status != WalkWaiting || res.Point != at || res.Waiting == nil || res.Waiting.Waiting == nil ||
		res.Waiting.Seq != 1 || res.Waiting.Waiting.Output == "" {
		t.Fatalf("walk: %+v", res)
	}
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again := walk(t, e, true)
	if again.Status != WalkWaiting || again.Waiting == nil || again.Waiting.Waiting == nil ||
		again.Waiting.Waiting.Output != res.Waiting.Waiting.Output {
		t.Fatalf("walk again: %+v", again)
	}
	if after, err := e.events(t.Context()); err != nil || len(after) != len(events) {
		t.Errorf("a second wait recorded %d events", len(after)-len(events))
	}
	if err := os.MkdirAll(filepath.Join(e.Workdir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.Workdir, "docs", "design.md"), "# Design\n")
	if _, err := e.Service.FinishDispatch(t.Context(), e.ID, 1, pipeline.FinishRequest{Status: "completed",
		Output: []byte(completedReport)}); err != nil {
		t.Fatal(err)
	}
	if res := walk(t, e, true); res.Status != WalkDone {
		t.Fatalf("resume: %+v", res)
	}
	recs, err := e.Dispatches(t.Context())
	if err != nil || recs[0].Role != "design-writer" || recs[1].Role != "red-team" {
		t.Errorf("dispatches %+v, %v", recs[:2], err)
	}
}

// TestWalkResumeMidGate: a walk cancelled while the design gate's second
// round runs resumes at that round: the cancelled dispatch is run again as
// its retry, and nothing before it is dispatched again; the gate still
// passes at round 3.
func TestWalkResumeMidGate(t *testing.T) {
	dir := t.TempDir()
	happy, err := os.ReadFile("../testdata/agent/scenarios/happy")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "happy"), string(happy))
	write(t, filepath.Join(dir, "slow"), "[red-team phase=1 round=2]\nsleep 60\n\ninclude happy\n")
	e, log := sampleEngine(t, filepath.Join(dir, "slow"))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(log); strings.Contains(string(b), "red-team phase=1 task= round=2") {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if _, err := e.Walk(ctx, WalkOptions{Spec: mustDefault(t), Yes: true}); err == nil {
		t.Fatal("a cancelled walk returned no error")
	}
	e.Agents.Agents["scripted"] = agent.Agent{Name: "scripted", Kind: agent.Command, Timeout: time.Minute,
		Command: []string{"sh", scriptedAgent, "--scenario", filepath.Join(dir, "happy")}}
	if res := walk(t, e, true); res.Status != WalkDone {
		t.Fatalf("resume: %+v", res)
	}
	recs, err := e.Dispatches(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs[:8] {
		retry := ""
		if r.RetryOf != nil {
			retry = fmt.Sprintf(" retry of %d", *r.RetryOf)
		}
		got = append(got, fmt.Sprintf("%d %s %d %s%s", r.Seq, r.Role, r.Point.Round, r.Status, retry))
	}
	want := "1 design-writer 0 completed|2 red-team 1 completed|3 fixer 1 completed|4 red-team 2 error|" +
		"5 red-team 2 completed retry of 4|6 fixer 2 completed|7 red-team 3 completed|8 test-writer 0 completed"
	if strings.Join(got, "|") != want {
		t.Errorf("dispatches:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
}

// TestWalkDesignGiven: with Design the design writer is not dispatched;
// the gate examines the file given.
func TestWalkDesignGiven(t *testing.T) {
	e, log := sampleEngine(t, "happy")
	write(t, filepath.Join(e.Workdir, "mine.md"), "# My design\n")
	res, err := e.Walk(t.Context(), WalkOptions{Spec: mustDefault(t), Design: "mine.md"})
	if err != nil || res.Status != WalkWaiting {
		t.Fatalf("walk: %+v, %v", res, err)
	}
	if lines := logLines(t, log); strings.Contains(lines[0], "design-writer") {
		t.Errorf("the design writer ran: %s", lines[0])
	}
	pr, err := e.Progress(t.Context(), mustDefault(t), nil)
	if err != nil || pr.Steps[pipeline.Point{Phase: ledger.Design, Step: "design"}].Result != "skipped: the design is mine.md" {
		t.Errorf("progress %+v, %v", pr.Steps, err)
	}
	st, _, err := e.Service.Load(t.Context(), e.ID)
	if err != nil || st.Gates.Ledger.Entry(ledger.Design).Artifact != "mine.md" {
		t.Errorf("ledger %+v, %v", st.Gates.Ledger.Entry(ledger.Design), err)
	}
}

// TestWalkGreenAcceptance: acceptance tests that pass before the change
// escalate: the walk stops there and health is RED; Phase 1, whose gate
// passed, stays PASS.
func TestWalkGreenAcceptance(t *testing.T) {
	dir := t.TempDir()
	happy, err := os.ReadFile("../testdata/agent/scenarios/happy")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "happy"), string(happy))
	write(t, filepath.Join(dir, "green"), "[test-writer phase=1]\nreport\nstatus: completed\ndeviations: []\n"+
		"exports:\n  acceptance-command: \"true\"\n.\n\ninclude happy\n")
	e, _ := sampleEngine(t, filepath.Join(dir, "green"))
	res := walk(t, e, true)
	if res.Status != WalkEscalated || res.Point != (pipeline.Point{Phase: ledger.Design, Step: "acceptance-red"}) ||
		res.Reason != "acceptance-red: true passes; it must fail before the change (RED)" || res.Suggestion == "" {
		t.Fatalf("walk: %+v", res)
	}
	st, _, err := e.Service.Load(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, h := st.Gates.Ledger.Entry(ledger.Design).Status, st.View.Health; got != ledger.Pass || h.Level != pipeline.Red || h.Action != res.Suggestion {
		t.Errorf("Phase 1 %s, health %+v, want RED with the suggestion %q", got, h, res.Suggestion)
	}
}

// TestWalkTaskCheckFix: a task whose fast gate fails goes back to its
// implementer once, the failure in its prompt; fixed, the walk goes on;
// still failing (breaks), the task escalates (health RED with the
// suggestion), and a resume neither dispatches again nor journals the
// escalation twice.
func TestWalkTaskCheckFix(t *testing.T) {
	at := pipeline.Point{Phase: ledger.Execute, Step: "task-check", Task: "1"}
	t.Run("fixed", func(t *testing.T) {
		dir := t.TempDir()
		for _, name := range []string{"happy", "breaks"} {
			b, err := os.ReadFile("../testdata/agent/scenarios/" + name)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, name), string(b))
		}
		write(t, filepath.Join(dir, "fixed"), "[implementer phase=3 task=1 round=1]\nwrite greet.sh\n#!/bin/sh\necho \"hello, ${1:-world}\"\n.\n"+
			"report\n"+completedReport+".\n\ninclude breaks\n")
		e, log := sampleEngine(t, filepath.Join(dir, "fixed"))
		if res := walk(t, e, true); res.Status != WalkDone {
			t.Fatalf("walk: %+v", res)
		}
		pr, err := e.Progress(t.Context(), mustDefault(t), []string{"1", "2"})
		if err != nil || pr.Steps[at].Result != "exit 0: sh test/unit.sh (after 1 fix)" {
			t.Errorf("task check: %+v, %v", pr.Steps[at], err)
		}
		if got := strings.Join(logLines(t, log)[10:13], "|"); got != "11 implementer phase=3 task=1 round=|12 implementer phase=3 task=1 round=1|13 reviewer phase=3 task=1 round=1" {
			t.Errorf("dispatches: %s", got)
		}
		recs, err := e.Dispatches(t.Context())
		if err != nil || recs[11].Template != "fixer" || recs[11].Point != (pipeline.Point{Phase: ledger.Execute, Step: "task-check", Task: "1", Round: 1}) {
			t.Errorf("the fix: %+v, %v", recs[11], err)
		}
		prompt := kept(t, e, pipeline.DispatchPath(12, "fixer", false))
		if !strings.Contains(prompt, "the task's fast gate fails: sh test/unit.sh (exit 1)") || !strings.Contains(prompt, "printed 'hi, world', want 'hello, world'") {
			t.Errorf("the fix's prompt does not say what failed:\n%s", prompt)
		}
		// Each task check verified the task's commit through verify-commits'
		// cache, and the end of Phase 3 the whole range: task 1's fix was
		// amended into its commit, so no broken commit is left in it.
		var got []string
		events, err := e.events(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		hex := regexp.MustCompile(`[0-9a-f]{12}`)
		for _, ev := range events {
			var d pipeline.DecisionData
			if ev.Type == pipeline.TypeDecision && pipeline.DecodeData(ev, &d) == nil && d.Type == JournalVerifyCommits {
				got = append(got, hex.ReplaceAllString(d.Choice+" ("+d.Reason+") "+d.Suggestion, "X"))
			}
		}
		want := []string{
			"task 1: 0 of 1 commits pass sh test/unit.sh (1 gate runs, 0 cached; failing: X) ",
			"task 1: 1 of 1 commits pass sh test/unit.sh (1 gate runs, 0 cached) ",
			"task 2: 1 of 1 commits pass sh test/unit.sh (1 gate runs, 0 cached) ",
			"Phase 3: 2 of 2 commits pass sh test/unit.sh (0 gate runs, 2 cached) ",
		}
		if !slices.Equal(got, want) {
			t.Errorf("verify-commits decisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("still failing", func(t *testing.T) {
		e, log := sampleEngine(t, "breaks")
		res := walk(t, e, true)
		at := at
		at.Round = 1
		if res.Status != WalkEscalated || res.Point != at || res.Suggestion == "" ||
			!strings.HasPrefix(res.Reason, "task-check: sh test/unit.sh still fails (exit 1) after 1 fix by the task's implementer; its output is in ") {
			t.Fatalf("walk: %+v", res)
		}
		before := logLines(t, log)
		if got := strings.Join(before[10:], "|"); got != "11 implementer phase=3 task=1 round=|12 implementer phase=3 task=1 round=1" {
			t.Errorf("dispatches: %s", got)
		}
		if again := walk(t, e, true); again.Status != WalkEscalated || again.Point != at {
			t.Fatalf("resume: %+v", again)
		}
		if after := logLines(t, log); len(after) != len(before) {
			t.Errorf("the resume dispatched again: %s", after[len(before):])
		}
		st, _, err := e.Service.Load(t.Context(), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if h := st.View.Health; h.Level != pipeline.Red || h.Action != res.Suggestion || h.Reason != "escalation pending: task-check of task 1 escalated" {
			t.Errorf("health %+v", h)
		}
		escalations := 0
		for _, d := range st.View.Journal.Decisions {
			if d.Type == "escalation" {
				escalations++
			}
		}
		if escalations != 1 || statuses(t, e)[2] != ledger.Fail {
			t.Errorf("%d escalations journalled; ledger %v", escalations, statuses(t, e))
		}
	})
}

// killedAfterJournal is a chain as an engine killed between journalling
// an escalation at step and recording the step's end leaves it: Phase 1
// begun, its steps before step done, then the decision and the ledger's
// FAIL recorded.
func killedAfterJournal(t *testing.T, e *Engine, step string, decision pipeline.DecisionData) {
	t.Helper()
	ctx := t.Context()
	if _, _, err := e.Service.Record(ctx, e.ID, pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin),
		Data: pipeline.LedgerData{Phase: ledger.Design}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"pre-design", "design", "pre-design-gate", "design-gate", "acceptance-tests", "acceptance-red"} {
		if id == step {
			break
		}
		if err := e.RecordStep(ctx, pipeline.Point{Phase: ledger.Design, Step: id}, pipeline.StepDone, "crafted"); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.Service.Record(ctx, e.ID, pipeline.Draft{Type: pipeline.TypeDecision, Data: decision},
		pipeline.Draft{Type: pipeline.LedgerType(ledger.FailPhase), Data: pipeline.LedgerData{Phase: ledger.Design, Reason: decision.Reason}}); err != nil {
		t.Fatal(err)
	}
}

// journalled counts the chain's decisions of type typ.
func journalled(t *testing.T, e *Engine, typ string) int {
	t.Helper()
	events, err := e.events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		var d pipeline.DecisionData
		if ev.Type == pipeline.TypeDecision && pipeline.DecodeData(ev, &d) == nil && d.Type == typ {
			n++
		}
	}
	return n
}

// TestJournalOnceAfterKill: an engine killed after journalling the
// approval, or a RED test's escalation, and before the step's end, does
// not journal it again on resume.
func TestJournalOnceAfterKill(t *testing.T) {
	t.Run("approval", func(t *testing.T) {
		e, _ := sampleEngine(t, "happy")
		e.Agents.Agents["person"] = agent.Agent{Name: "person", Kind: agent.Manual}
		e.Agents.Roles["plan-writer"] = agent.Binding{Agent: "person"}
		if res := walk(t, e, false); res.Status != WalkWaiting || res.Point.Step != "approve" {
			t.Fatalf("walk: %+v", res)
		}
		if _, _, err := e.Service.Record(t.Context(), e.ID, pipeline.Draft{Type: pipeline.TypeDecision,
			Data: pipeline.DecisionData{Type: "approval", Choice: "Phase 1 approved: approve", Reason: "build --yes"}}); err != nil {
			t.Fatal(err)
		}
		if res := walk(t, e, true); res.Status != WalkWaiting || res.Point.Step != "plan" {
			t.Fatalf("walk: %+v", res)
		}
		if n := journalled(t, e, "approval"); n != 1 {
			t.Errorf("%d approvals journalled", n)
		}
	})
	t.Run("escalation", func(t *testing.T) {
		e, _ := sampleEngine(t, "happy")
		reason := "acceptance-red: sh test/unit.sh passes; it must fail before the change (RED)"
		killedAfterJournal(t, e, "acceptance-red", pipeline.DecisionData{Type: "escalation", Choice: "acceptance-red escalated",
			Reason: reason, Suggestion: "Make the acceptance tests test the goal, so that they fail before it is built."})
		if res := walk(t, e, true); res.Status != WalkEscalated || res.Reason != reason {
			t.Fatalf("walk: %+v", res)
		}
		if n := journalled(t, e, "escalation"); n != 1 {
			t.Errorf("%d escalations journalled", n)
		}
		st, _, err := e.Service.Load(t.Context(), e.ID)
		if err != nil || st.Gates.Ledger.Entry(ledger.Design).Status != ledger.Fail {
			t.Errorf("Phase 1: %+v, %v", st.Gates.Ledger.Entry(ledger.Design), err)
		}
	})
}

// TestWalkArchitectural: a review round or a gate round that raises an
// architectural concern escalates at once (ARCHITECTURAL, exit 2's walk
// status, health RED with the gate's suggestion), with no fix round.
func TestWalkArchitectural(t *testing.T) {
	for _, c := range []struct {
		name, section string
		at            pipeline.Point
	}{
		{"plan review", "[reviewer phase=2]", pipeline.Point{Phase: ledger.Plan, Step: "plan-review", Round: 1}},
		{"design gate", "[red-team phase=1 round=1]", pipeline.Point{Phase: ledger.Design, Step: "design-gate", Round: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			happy, err := os.ReadFile("../testdata/agent/scenarios/happy")
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "happy"), string(happy))
			write(t, filepath.Join(dir, "arch"), c.section+"\nreport\nfindings:\n  fatal: []\n  significant: []\n  minor: []\n"+
				"  architectural:\n    - title: Greeting belongs in a library\n      detail: greet.sh should not own the format.\n.\n\ninclude happy\n")
			e, log := sampleEngine(t, filepath.Join(dir, "arch"))
			res := walk(t, e, true)
			if res.Status != WalkEscalated || res.Point != c.at || !strings.Contains(res.Reason, "(ARCHITECTURAL): Round 1 raised 1 architectural concern: Greeting belongs in a library.") {
				t.Fatalf("walk: %+v", res)
			}
			for _, l := range logLines(t, log) {
				if strings.Contains(l, "fixer") && strings.Contains(l, fmt.Sprintf("phase=%d", c.at.Phase)) {
					t.Errorf("a fix round ran: %s", l)
				}
			}
			st, _, err := e.Service.Load(t.Context(), e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if h := st.View.Health; h.Level != pipeline.Red || h.Action != res.Suggestion || statuses(t, e)[c.at.Phase-1] != ledger.Fail {
				t.Errorf("health %+v, ledger %v", h, statuses(t, e))
			}
		})
	}
}
