package agent

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkRun is a whole dispatch of an agent that does nothing: prompt
// file, process group, pipes (or files), the group's end, the report
// looked for. Compare it with BenchmarkExecFloor, starting the same
// program bare, for the runner's own cost per dispatch.
func BenchmarkRun(b *testing.B) {
	for _, toFiles := range []bool{false, true} {
		b.Run(map[bool]string{false: "pipes", true: "files"}[toFiles], func(b *testing.B) {
			dir, workdir := b.TempDir(), b.TempDir()
			a := Agent{Kind: Command, Command: []string{"true"}}
			for i := 0; b.Loop(); i++ {
				d := filepath.Join(dir, strconv.Itoa(i))
				req := Request{Prompt: []byte("Write the design.\n"), PromptFile: filepath.Join(d, "prompt.md"),
					Output: filepath.Join(d, "output.yaml"), Workdir: workdir, Pipeline: "build-1", Seq: i + 1, Role: "implementer", Phase: 3}
				if toFiles {
					req.StdoutFile, req.StderrFile = filepath.Join(d, "stdout"), filepath.Join(d, "stderr")
				}
				if _, err := Run(b.Context(), a, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExecFloor starts and waits for the same program, nothing else.
func BenchmarkExecFloor(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
