package report

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// BenchmarkParse measures what reading an agent's report adds to a
// dispatch: a task report, a round's findings, a 100-task plan.
func BenchmarkParse(b *testing.B) {
	var plan strings.Builder
	plan.WriteString("status: completed\ndeviations: []\nexports:\n  tasks:\n")
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&plan, "    - id: t%d\n      title: Task %d\n      files: [pkg/f%d.go, pkg/f%d_test.go]\n      fast-gate: go test ./pkg\n", i, i, i, i)
		if i > 1 {
			fmt.Fprintf(&plan, "      depends-on: [t%d]\n", i-1)
		}
	}
	for _, bc := range []struct {
		name  string
		data  []byte
		parse func([]byte) error
	}{
		{"task", readTestdata(b, "task-completed.yaml"), func(d []byte) error { _, err := ParseTask(d); return err }},
		{"findings", readTestdata(b, "findings.yaml"), func(d []byte) error { _, err := ParseFindings(d); return err }},
		{"plan100", []byte(plan.String()), func(d []byte) error { _, err := ParsePlan(d); return err }},
		// The floor: the YAML library's parse alone, of the same plan.
		{"plan100-yaml-only", []byte(plan.String()), func(d []byte) error { var n yaml.Node; return yaml.Unmarshal(d, &n) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.parse(bc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
