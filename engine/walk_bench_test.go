package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
)

// instantAgent plays every role of the default spec at once: a clean
// round for every gate and review, a plan of n tasks, an implementer
// that touches one file per task.
func instantAgent(n int) agent.Agent {
	return shAgent(fmt.Sprintf(`cat >/dev/null
ok='status: completed
deviations: []'
case $CRUCIBLE_ROLE in
red-team|reviewer) echo 'findings: {}' >"$CRUCIBLE_OUTPUT" ;;
plan-writer)
	mkdir -p docs && echo plan >docs/plan.md
	{ echo "$ok"; echo 'exports:'; echo '  tasks:'
	  i=1; while [ $i -le %d ]; do echo "    - {id: \"$i\", title: t$i}"; i=$((i+1)); done; } >"$CRUCIBLE_OUTPUT" ;;
test-writer) { echo "$ok"; echo 'exports: {acceptance-command: "test -f done"}'; } >"$CRUCIBLE_OUTPUT" ;;
design-writer) mkdir -p docs && echo design >docs/design.md && echo "$ok" >"$CRUCIBLE_OUTPUT" ;;
implementer) echo "$CRUCIBLE_TASK" >>done && echo "$ok" >"$CRUCIBLE_OUTPUT" ;;
*) echo "$ok" >"$CRUCIBLE_OUTPUT" ;;
esac`, n))
}

// BenchmarkWalkTasks walks the default spec with an instant agent and a
// plan of n tasks, a new pipeline each time. Its ns/task at 10 and at 100
// tasks compare the walk's cost per task as plans grow: equal figures are
// a cost linear in the plan.
func BenchmarkWalkTasks(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			gittest.Hermetic(b)
			dir := gittest.Init(b)
			b.Chdir(dir)
			repo, err := gitext.Discover(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			svc := pipeline.Open(repo)
			b.Cleanup(func() { svc.Close() })
			agents := config(instantAgent(n))
			agents.Test = "true"
			var elapsed time.Duration
			for i := 0; b.Loop(); i++ {
				os.Remove(filepath.Join(dir, "done"))
				id := fmt.Sprintf("build-20261122-100000-b%05d", i)
				if _, _, err := svc.Start(b.Context(), pipeline.StartOptions{Goal: "bench", Mode: "feature", ID: id, Fresh: true}); err != nil {
					b.Fatal(err)
				}
				e, err := Open(svc, id, agents, repo.WorkTree)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				res, err := e.Walk(b.Context(), WalkOptions{Spec: mustDefault(b), Yes: true})
				elapsed += time.Since(start)
				e.Close()
				if err != nil || res.Status != WalkDone {
					b.Fatal(res, err)
				}
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}
