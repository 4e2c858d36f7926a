package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

const testID = "build-20261122-100000-eng001"

// shAgent is a command agent running script with sh.
func shAgent(script string) agent.Agent {
	return agent.Agent{Name: "sh", Kind: agent.Command, Command: []string{"sh", "-c", script}, Timeout: time.Minute}
}

// newEngine is an engine on a new pipeline of a hermetic repository,
// every role played by a.
func newEngine(t testing.TB, a agent.Agent) *Engine {
	t.Helper()
	return newEngineIn(t, gittest.Init(t), a)
}

// newEngineIn is newEngine in the repository at dir.
func newEngineIn(t testing.TB, dir string, a agent.Agent) *Engine {
	t.Helper()
	repo, svc := startedIn(t, dir, "engine test")
	e, err := Open(svc, testID, config(a), repo.WorkTree)
	if err != nil {
		t.Fatal(err)
	}
	e.Runner.Grace = 100 * time.Millisecond
	t.Cleanup(e.Close)
	return e
}

// startedIn opens the repository at dir, made the current directory, and
// starts pipeline testID there with goal.
func startedIn(t testing.TB, dir, goal string) (*gitext.Repo, *pipeline.Service) {
	t.Helper()
	t.Chdir(dir)
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	svc := pipeline.Open(repo)
	t.Cleanup(func() { svc.Close() })
	if _, _, err := svc.Start(t.Context(), pipeline.StartOptions{Goal: goal, Mode: "feature", ID: testID}); err != nil {
		t.Fatal(err)
	}
	return repo, svc
}

func config(a agent.Agent) *agent.Config {
	return &agent.Config{Agents: map[string]agent.Agent{a.Name: a}, Roles: map[string]agent.Binding{agent.DefaultRole: {Agent: a.Name}}}
}

var implement = DispatchSpec{Point: pipeline.Point{Phase: ledger.Execute, Step: "implement", Task: "2"}, Role: "implementer",
	Template: "implementer", Prompt: []byte("Implement task 2.\n")}

// kept reads what the chain keeps at path.
func kept(t *testing.T, e *Engine, path string) string {
	t.Helper()
	b, err := e.Service.ReadKept(t.Context(), e.ID, path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyRecord is the chain's one dispatch.
func onlyRecord(t *testing.T, e *Engine) pipeline.Record {
	t.Helper()
	recs, err := e.Dispatches(t.Context())
	if err != nil || len(recs) != 1 {
		t.Fatalf("dispatches %+v, %v", recs, err)
	}
	return recs[0]
}

// TestDispatchDurable: the start carries the point and keeps the prompt;
// the agent gets its run directory; the finish keeps the report, and the
// run directory goes.
func TestDispatchDurable(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			gittest.Hermetic(t)
			dir := t.TempDir()
			gittest.Git(t, dir, "init", "-q", "-b", "main", "--object-format="+format)
			gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
			dispatchDurable(t, newEngineIn(t, dir, shAgent(`cat >/dev/null; printf 'status: completed\n' >"$CRUCIBLE_OUTPUT"`)))
		})
	}
}

func dispatchDurable(t *testing.T, e *Engine) {
	out, err := e.Dispatch(t.Context(), implement)
	if err != nil {
		t.Fatal(err)
	}
	if out.Seq != 1 || out.Status != "completed" || string(out.Report) != "status: completed\n" || out.Recovered != "" {
		t.Fatalf("outcome %+v", out)
	}
	r := onlyRecord(t, e)
	if r.Point != implement.Point || r.Role != "implementer" || r.Status != "completed" || r.Summary != "report of 18 bytes" {
		t.Fatalf("record %+v", r)
	}
	if got := kept(t, e, pipeline.DispatchPath(1, "implementer", false)); got != "Implement task 2.\n" {
		t.Errorf("kept prompt %q", got)
	}
	if got := kept(t, e, r.Output); got != "status: completed\n" {
		t.Errorf("kept output %q", got)
	}
	if exists(e.RunDir(1)) {
		t.Errorf("run directory %s left behind", e.RunDir(1))
	}
	m, err := e.Service.Manifest(t.Context(), e.ID)
	if err != nil || m[0].Task == nil || *m[0].Task != 2 {
		t.Errorf("manifest %+v, %v: want crucible's numeric task 2", m, err)
	}
}

// TestDispatchOutcomes: an agent's failure is an outcome with its kind,
// its stdout kept when it wrote no report; a manual agent stays waiting.
func TestDispatchOutcomes(t *testing.T) {
	for _, c := range []struct {
		name                     string
		agent                    agent.Agent
		status, failure, summary string
		output                   string
	}{
		{"stdout only", shAgent("echo just words"), "completed", "", "no report: its output is kept", "just words\n"},
		{"exit", shAgent("echo broken; exit 3"), "failed", "exit", "the agent exited with status 3", "broken\n"},
		{"not started", agent.Agent{Name: "x", Kind: agent.Command, Command: []string{"/nonexistent/agent"}}, "failed", "not-started", "", ""},
		{"manual", agent.Agent{Name: "m", Kind: agent.Manual}, StatusWaiting, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(t, c.agent)
			out, err := e.Dispatch(t.Context(), implement)
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != c.status || out.Failure != c.failure || c.summary != "" && out.Summary != c.summary || string(out.Output) != c.output {
				t.Fatalf("outcome %+v", out)
			}
			r := onlyRecord(t, e)
			if c.status == StatusWaiting {
				if r.Finished() || out.Waiting == nil || !exists(filepath.Join(e.RunDir(1), waitingFile)) {
					t.Fatalf("a manual dispatch must stay in flight with its mark: %+v %+v", r, out)
				}
				return
			}
			if r.Status != c.status || r.Failure != c.failure {
				t.Fatalf("record %+v", r)
			}
		})
	}
}

// TestDispatchReportRequired: an agent that exits 0 without the report
// its dispatch requires, or with one that does not parse or says it
// failed, is recorded failed with the failure's kind, what it wrote kept.
func TestDispatchReportRequired(t *testing.T) {
	for _, c := range []struct {
		name, format, script     string
		status, failure, summary string
		output                   string
	}{
		{"no report", "task", "echo just words", "failed", "no-report", NoReportSummary, "just words\n"},
		{"garbage", "task", `printf 'status: [completed\n' >"$CRUCIBLE_OUTPUT"`, "failed", "bad-report",
			"report: line 1: did not find expected ',' or ']'", "status: [completed\n"},
		{"reports failure", "task", `printf 'status: failed\nerror: no disk\n' >"$CRUCIBLE_OUTPUT"`, "failed", "reported",
			"it reports failure: no disk", "status: failed\nerror: no disk\n"},
		{"a task report where findings are required", "findings", `printf '%s' "$R" >"$CRUCIBLE_OUTPUT"`, "failed", "bad-report",
			"report: line 1: no findings: a review round's report lists them (fatal, significant, minor), empty lists when clean", completedReport},
		{"findings", "findings", `printf 'findings: {}\n' >"$CRUCIBLE_OUTPUT"`, "completed", "", "report of 13 bytes", "findings: {}\n"},
		{"none required", "", "echo just words", "completed", "", "no report: its output is kept", "just words\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("R", completedReport)
			e := newEngine(t, shAgent(c.script))
			d := implement
			d.Report = c.format
			out, err := e.Dispatch(t.Context(), d)
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != c.status || out.Failure != c.failure || out.Summary != c.summary || string(out.Output) != c.output {
				t.Fatalf("outcome %+v", out)
			}
			r := onlyRecord(t, e)
			if r.Status != c.status || r.Failure != c.failure || r.Summary != c.summary || kept(t, e, r.Output) != c.output {
				t.Fatalf("record %+v", r)
			}
		})
	}
}

// TestDispatchCancelled: when the engine is interrupted, the agent's group
// is killed and the finish says so, for the walk to dispatch it again.
func TestDispatchCancelled(t *testing.T) {
	e := newEngine(t, shAgent("sleep 30"))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	out, err := e.Dispatch(ctx, implement)
	if err != nil {
		t.Fatal(err)
	}
	if r := onlyRecord(t, e); r.Status != "error" || r.Failure != "cancelled" || !strings.HasPrefix(r.Summary, "interrupted: ") {
		t.Fatalf("record %+v (outcome %+v)", r, out)
	}
}

// TestEngineLock: a second engine on the pipeline is refused with the
// holder's pid; once closed, the next one gets it.
func TestEngineLock(t *testing.T) {
	e := newEngine(t, shAgent("true"))
	_, err := Open(e.Service, e.ID, e.Agents, e.Workdir)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Owner != os.Getpid() {
		t.Fatalf("second Open: %v", err)
	}
	if pid := Running(e.Service, e.ID); pid != os.Getpid() {
		t.Fatalf("Running while held = %d", pid)
	}
	e.Close()
	if pid := Running(e.Service, e.ID); pid != 0 {
		t.Fatalf("Running once closed = %d", pid)
	}
	second, err := Open(e.Service, e.ID, e.Agents, e.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	// Another pipeline's engine on the same branch is refused too: two
	// pipelines' agents would share the work tree.
	if _, _, err := e.Service.Start(t.Context(), pipeline.StartOptions{Goal: "beside", Mode: "feature", ID: "beside", Beside: true}); err != nil {
		t.Fatal(err)
	}
	_, err = Open(e.Service, "beside", e.Agents, e.Workdir)
	if !errors.As(err, &busy) || busy.Other != e.ID || err.Error() != fmt.Sprintf(
		"branch 'main' is being built by another git-crucible (pid %d, pipeline %s): one engine works on a branch at a time", os.Getpid(), e.ID) {
		t.Fatalf("an engine of another pipeline on the branch: %v", err)
	}
	second.Close()
	third, err := Open(e.Service, "beside", e.Agents, e.Workdir)
	if err != nil {
		t.Fatalf("once the branch is free: %v", err)
	}
	third.Close()
}
