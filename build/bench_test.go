package build

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/spec"
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
		d.Point = spec.Point{Phase: 3, Step: "implement", Task: strconv.Itoa(i)}
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
