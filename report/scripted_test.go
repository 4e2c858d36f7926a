package report_test

// These tests run the scripted agent (testdata/agent) the way the engine
// will, dispatch by dispatch through the default pipeline, and read every
// report it writes with package report: the agent and the parsers agree,
// and each scenario fails where it says it does.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/rounds"
)

// agentRun is one dispatch of the scripted agent in a copy of the sample.
type agentRun struct {
	t        *testing.T
	scenario string
	agent    string // absolute path of testdata/agent/scripted
	work     string // the work tree
	outputs  string // where reports go, one directory per seq
	seq      int
}

func newAgentRun(t *testing.T, scenario string) *agentRun {
	t.Helper()
	agent, err := filepath.Abs("../testdata/agent/scripted")
	if err != nil {
		t.Fatal(err)
	}
	r := &agentRun{t: t, scenario: scenario, agent: agent, work: filepath.Join(t.TempDir(), "work"), outputs: t.TempDir()}
	if err := os.CopyFS(r.work, os.DirFS("../testdata/agent/sample")); err != nil {
		t.Fatal(err)
	}
	return r
}

// stop is where a walk through the pipeline ended, when it did not finish.
type stop struct{ msg string }

func (s *stop) Error() string { return s.msg }

func stopf(format string, args ...any) error { return &stop{fmt.Sprintf(format, args...)} }

// dispatch runs the agent for role and returns its report's bytes, or a
// stop naming what went wrong as the engine would see it.
func (r *agentRun) dispatch(role string, phase int, task string, round int) ([]byte, error) {
	r.seq++
	dir := filepath.Join(r.outputs, strconv.Itoa(r.seq))
	if err := os.Mkdir(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	prompt := "You are the " + role + ".\n"
	promptFile := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		r.t.Fatal(err)
	}
	out := filepath.Join(dir, "output.yaml")
	roundVar := ""
	if round > 0 {
		roundVar = strconv.Itoa(round)
	}
	cmd := exec.Command(r.agent, "--scenario", r.scenario)
	cmd.Dir = r.work
	cmd.Stdin = strings.NewReader(prompt)
	cmd.Env = append(os.Environ(),
		"CRUCIBLE_PIPELINE=build-20261124-200000", "CRUCIBLE_SEQ="+strconv.Itoa(r.seq),
		"CRUCIBLE_ROLE="+role, "CRUCIBLE_TEMPLATE="+role, "CRUCIBLE_PHASE="+strconv.Itoa(phase),
		"CRUCIBLE_TASK="+task, "CRUCIBLE_ROUND="+roundVar, "CRUCIBLE_OUTPUT="+out,
		"CRUCIBLE_PROMPT="+promptFile, "CRUCIBLE_WORKDIR="+r.work)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	who := role
	if task != "" {
		who += " " + task
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return nil, stopf("%s: %s; stderr %q", who, exit.ProcessState, stderr.String())
	case err != nil:
		r.t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil, stopf("%s: no report; stdout %q", who, stdout.String())
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return data, nil
}

// task dispatches a task agent and reads its report, which must say completed.
func (r *agentRun) task(role string, phase int, task string, round int) (report.Task, error) {
	data, err := r.dispatch(role, phase, task, round)
	if err != nil {
		return report.Task{}, err
	}
	t, err := report.ParseTask(data)
	if err != nil {
		return report.Task{}, stopf("%s: %v", role, err)
	}
	if t.Status != report.Completed {
		return report.Task{}, stopf("%s: %s: %s", role, t.Status, t.Error)
	}
	return t, nil
}

// gate runs a quality gate (red-team rounds, fixer between) and returns its
// score trajectory.
func (r *agentRun) gate(phase int) (string, error) {
	g := rounds.New(0)
	for round := 1; ; round++ {
		data, err := r.dispatch("red-team", phase, "", round)
		if err != nil {
			return "", err
		}
		f, err := report.ParseFindings(data)
		if err != nil {
			return "", stopf("red-team: %v", err)
		}
		switch d := g.Round(f); d.Action {
		case rounds.Pass:
			return strings.Join(g.Trajectory(), ","), nil
		case rounds.Escalate:
			return "", stopf("phase %d gate: %s at round %d (scores %s)", phase, d.Verdict, round, strings.Join(g.Trajectory(), ","))
		}
		if _, err := r.task("fixer", phase, "", round); err != nil {
			return "", err
		}
	}
}

// review runs a review loop that must pass in its first round.
func (r *agentRun) review(phase int, task string) error {
	data, err := r.dispatch("reviewer", phase, task, 1)
	if err != nil {
		return err
	}
	f, err := report.ParseFindings(data)
	if err != nil {
		return stopf("reviewer: %v", err)
	}
	if d := rounds.NewReview(0).Round(f); d.Action != rounds.Pass {
		return stopf("review of phase %d task %q: %s", phase, task, d.Reason)
	}
	return nil
}

// sh runs a shell command in the work tree and says whether it passed.
func (r *agentRun) sh(command string) bool {
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = r.work
	return cmd.Run() == nil
}

// walk plays the default pipeline and returns what it saw: the design
// gate's scores and the task order, then "done" or where it stopped.
func (r *agentRun) walk() (string, error) {
	var seen []string
	fail := func(err error) (string, error) { return strings.Join(seen, "; "), err }

	if _, err := r.task("design-writer", 1, "", 0); err != nil {
		return fail(err)
	}
	scores, err := r.gate(1)
	if err != nil {
		return fail(err)
	}
	seen = append(seen, "design gate "+scores)
	tests, err := r.task("test-writer", 1, "", 0)
	if err != nil {
		return fail(err)
	}
	acceptance, _ := tests.Exports["acceptance-command"].(string)
	if acceptance == "" {
		return fail(stopf("test-writer: no acceptance-command in exports"))
	}
	if r.sh(acceptance) {
		return fail(stopf("the acceptance test passes before any change"))
	}

	plan, err := r.dispatch("plan-writer", 2, "", 0)
	if err != nil {
		return fail(err)
	}
	p, err := report.ParsePlan(plan)
	if err != nil {
		return fail(stopf("plan-writer: %v", err))
	}
	if err := r.review(2, ""); err != nil {
		return fail(err)
	}
	if _, err := r.gate(2); err != nil {
		return fail(err)
	}

	var order []string
	for _, task := range p.Order() {
		order = append(order, task.ID)
		if _, err := r.task("implementer", 3, task.ID, 0); err != nil {
			return fail(err)
		}
		if !r.sh(task.FastGate) {
			return fail(stopf("task %s: fast gate %q failed", task.ID, task.FastGate))
		}
		if err := r.review(3, task.ID); err != nil {
			return fail(err)
		}
	}
	seen = append(seen, "tasks "+strings.Join(order, " "))

	if err := r.review(4, ""); err != nil {
		return fail(err)
	}
	if _, err := r.gate(4); err != nil {
		return fail(err)
	}
	if !r.sh("sh test/unit.sh") || !r.sh(acceptance) {
		return fail(stopf("the tests fail at the end"))
	}
	seen = append(seen, "done")
	return fail(nil)
}

func TestScriptedScenarios(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct{ scenario, want, stop string }{
		{"happy", "design gate 4,1,0; tasks 1 2; done", ""},
		{"stagnate", "", "phase 1 gate: STAGNATION at round 2 (scores 4,4)"},
		{"breaks", "design gate 4,1,0", `task 1: fast gate "sh test/unit.sh" failed`},
		{"crash", "design gate 4,1,0", `implementer 1: signal: killed; stderr ""`},
		{"garbage", "", "design-writer: report: line 1: did not find expected ',' or ']'"},
		{"noreport", "", `design-writer: no report; stdout "Done! I wrote docs/design.md.\n"`},
		{"fails", "", `design-writer: exit status 2; stderr ""`},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			r := newAgentRun(t, tc.scenario)
			got, err := r.walk()
			var s *stop
			if err != nil && !errors.As(err, &s) {
				t.Fatal(err)
			}
			if got != tc.want || (s == nil) != (tc.stop == "") || s != nil && s.msg != tc.stop {
				t.Fatalf("walk: %q, stopped at %v\nwant %q, stopped at %q", got, err, tc.want, tc.stop)
			}
		})
	}
}

func TestScriptedEffects(t *testing.T) {
	r := newAgentRun(t, "crash")
	if _, err := r.task("design-writer", 1, "", 0); err != nil {
		t.Fatal(err)
	}
	design, err := os.ReadFile(filepath.Join(r.work, "docs/design.md"))
	if err != nil || !strings.HasPrefix(string(design), "# Design: greet takes a name\n") {
		t.Fatalf("design doc %q, %v", design, err)
	}
	// The crash leaves greet.sh half written, as a killed agent would.
	if _, err := r.dispatch("implementer", 3, "1", 0); err == nil {
		t.Fatal("the crashing implementer succeeded")
	}
	got, err := os.ReadFile(filepath.Join(r.work, "greet.sh"))
	if err != nil || string(got) != "#!/bin/sh\n# greet: say hello to the first argu\n" {
		t.Fatalf("greet.sh after the crash: %q, %v", got, err)
	}
}

func TestScriptedUsage(t *testing.T) {
	r := newAgentRun(t, "happy")
	log := filepath.Join(t.TempDir(), "dispatches.log")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		exit int
		err  string
	}{
		{"no entry", []string{"--scenario", "happy"}, []string{"CRUCIBLE_ROLE=red-team", "CRUCIBLE_PHASE=1", "CRUCIBLE_ROUND=4"}, 3,
			"scripted: scenario happy has no entry for role=red-team phase=1 task= round=4\n"},
		{"unknown scenario", []string{"--scenario", "nope"}, []string{"CRUCIBLE_ROLE=fixer"}, 2,
			"scripted: no scenario 'nope' (" + filepath.Dir(r.agent) + "/scenarios/nope)\n"},
		{"no scenario", nil, nil, 2, "scripted: usage: scripted --scenario NAME\n"},
		{"no role", []string{"--scenario=happy"}, nil, 2,
			"scripted: CRUCIBLE_ROLE is not set: run me as an agent of git crucible build\n"},
		{"logged", []string{"--scenario", "happy"}, []string{"CRUCIBLE_ROLE=reviewer", "CRUCIBLE_PHASE=4", "CRUCIBLE_ROUND=1",
			"CRUCIBLE_SEQ=17", "CRUCIBLE_OUTPUT=" + filepath.Join(t.TempDir(), "output.yaml"), "SCRIPTED_LOG=" + log}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(r.agent, tc.args...)
			cmd.Dir = r.work
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tc.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.exit || stderr.String() != tc.err {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tc.exit, tc.err)
			}
		})
	}
	if got, err := os.ReadFile(log); err != nil || string(got) != "17 reviewer phase=4 task= round=1\n" {
		t.Fatalf("log %q, %v", got, err)
	}
}
