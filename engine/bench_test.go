package engine

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/internal/fakemodel"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
)

// BenchmarkDispatch is a durable dispatch of an agent that does nothing:
// the start recorded with its prompt, the run directory and owner record,
// the agent run, the exit record, the finish recorded with its output.
// Compare it with BenchmarkAgentFloor, the same agent run by the runner
// alone: the difference is the engine's overhead per dispatch.
func BenchmarkDispatch(b *testing.B) {
	e := newEngine(b, shAgent("true"))
	d := DispatchSpec{Role: "implementer", Template: "implementer", Prompt: []byte("Implement it.\n")}
	for i := 0; b.Loop(); i++ {
		d.Point = pipeline.Point{Phase: 3, Step: "implement", Task: strconv.Itoa(i)}
		if out, err := e.Dispatch(b.Context(), d); err != nil || out.Status != "completed" {
			b.Fatal(out, err)
		}
	}
}

// BenchmarkAgentFloor runs the same agent with the runner alone.
func BenchmarkAgentFloor(b *testing.B) {
	dir, workdir := b.TempDir(), b.TempDir()
	a := shAgent("true")
	for i := 0; b.Loop(); i++ {
		d := filepath.Join(dir, strconv.Itoa(i))
		req := agent.Request{Prompt: []byte("Implement it.\n"), PromptFile: filepath.Join(d, promptFile),
			Output: filepath.Join(d, reportFile), Workdir: workdir, Pipeline: testID, Seq: i + 1, Role: "implementer", Phase: 3}
		if _, err := agent.Run(b.Context(), a, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDispatchClaude is the engine's overhead per dispatch with the
// real claude against the fake model, which answers at once: a reviewer
// dispatch (it reads its prompt, writes its findings with claude's Write,
// says done) through Dispatch, paired in each iteration with the same
// claude, argv, prompt and model run alone. It reports the ratio of the
// two (engine/claude: the goal is at most 1.10) and each one's time.
func BenchmarkDispatchClaude(b *testing.B) {
	fakemodel.RequireClient(b, "claude")
	srv, err := fakemodel.Start(fakemodel.Options{Scenario: filepath.Join("..", "testdata", "agent", "scenarios", "happy")})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, kv := range srv.ClaudeEnv() {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	b.Setenv("HOME", b.TempDir())
	claude := agent.Agent{Name: "claude", Kind: agent.Claude, Timeout: time.Minute}
	e := newEngine(b, claude)
	templates, err := prompt.Load("")
	if err != nil {
		b.Fatal(err)
	}
	render := func(report string) []byte {
		text, err := templates.Render("plan-reviewer", prompt.Data{Goal: "greet takes a name", Mode: "feature", Pipeline: testID,
			Phase: 2, PhaseName: "Plan", Step: "plan-review", Role: "reviewer", Round: 1, MaxRounds: 15,
			Artifact: prompt.Artifact{Name: "plan", Path: "docs/plan.md"}, Inputs: map[string]string{"design": "docs/design.md"},
			Report: prompt.Report{Path: report, Format: prompt.ReportFindings}})
		if err != nil {
			b.Fatal(err)
		}
		return []byte(text)
	}
	var engine, alone time.Duration
	for i := 0; b.Loop(); i++ {
		begin := time.Now()
		ad, err := e.NewAgentDir("")
		if err != nil {
			b.Fatal(err)
		}
		out, err := e.Dispatch(b.Context(), DispatchSpec{Point: pipeline.Point{Phase: 2, Step: "plan-review", Round: i + 1}, Role: "reviewer",
			Template: "plan-reviewer", Prompt: render(ad.Report()), Report: prompt.ReportFindings, AgentDir: ad})
		if err != nil || out.Status != "completed" {
			b.Fatal(out, err)
		}
		engine += time.Since(begin)

		report := filepath.Join(e.Workdir, filepath.FromSlash(agent.RunsDir), "alone", strconv.Itoa(i), "output.yaml")
		cmd := exec.Command("claude", claude.Argv("reviewer", nil, "")[1:]...)
		cmd.Dir, cmd.Stdin = e.Workdir, bytes.NewReader(render(report))
		begin = time.Now()
		if out, err := cmd.Output(); err != nil {
			b.Fatal(string(out), err)
		}
		alone += time.Since(begin)
		if _, err := os.Stat(report); err != nil {
			b.Fatal("claude alone wrote no report: ", err)
		}
	}
	b.ReportMetric(float64(engine)/float64(alone), "engine/claude")
	b.ReportMetric(float64(engine.Milliseconds())/float64(b.N), "engine-ms/op")
	b.ReportMetric(float64(alone.Milliseconds())/float64(b.N), "claude-ms/op")
}
