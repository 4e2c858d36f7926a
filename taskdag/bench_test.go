package taskdag

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/wtpool"
)

func eightJobs() []Job {
	var specs []string
	for i := range 8 {
		specs = append(specs, fmt.Sprintf("t%d:f%d.txt", i, i))
	}
	return jobs(specs...)
}

// BenchmarkEightSleepingTasks runs 8 independent tasks whose agent (a
// process) sleeps 1 s, at max-parallel 4: two waves, so 2 s is the floor.
// x-agent is the level's time over one agent's; the goal is under 2.6.
func BenchmarkEightSleepingTasks(b *testing.B) {
	r, base := repo(b, "sha1")
	runner := New(r, 4, func(ctx context.Context, job Job, workdir string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "sleep", "1")
		cmd.Dir = workdir
		if err := cmd.Run(); err != nil {
			return nil, err
		}
		return writer(completed)(ctx, job, workdir)
	})
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := runner.RunLevel(context.Background(), base, eightJobs()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "x-agent")
}

// BenchmarkTaskOverhead runs 8 tasks whose agent returns at once, at
// max-parallel 4: all of the time is the scheduler's and git's. ms/task
// is that per task; x-git-spawn is it over one git process's run
// (git rev-parse), measured here as the floor.
func BenchmarkTaskOverhead(b *testing.B) {
	r, base := repo(b, "sha1")
	runner := New(r, 4, writer(completed))
	if _, err := runner.RunLevel(context.Background(), base, eightJobs()); err != nil {
		b.Fatal(err) // the slots exist: what follows is the steady state
	}
	spawn := timeIt(b, 20, func() { gittest.Git(b, ".", "rev-parse", "HEAD") })
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := runner.RunLevel(context.Background(), base, eightJobs()); err != nil {
			b.Fatal(err)
		}
	}
	perTask := time.Since(start) / time.Duration(8*b.N)
	b.ReportMetric(float64(perTask.Microseconds())/1000, "ms/task")
	b.ReportMetric(float64(perTask)/float64(spawn), "x-git-spawn")
}

// BenchmarkSlotReuse sets a slot up at a commit of 500 files: first by
// adding its worktree, then, in the next level, by reusing it at another
// commit. x-first is the reuse's time over the first set-up's; the goal
// is at most 0.2.
func BenchmarkSlotReuse(b *testing.B) {
	r, _ := repo(b, "sha1")
	for i := range 500 {
		if err := os.WriteFile(fmt.Sprintf("file%03d.txt", i), []byte(fmt.Sprintf("%d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gittest.Git(b, ".", "add", ".")
	gittest.Git(b, ".", "commit", "-q", "-m", "500 files")
	one := gittest.Git(b, ".", "rev-parse", "HEAD")
	if err := os.WriteFile("file000.txt", []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	gittest.Git(b, ".", "commit", "-q", "-am", "one changed")
	two := gittest.Git(b, ".", "rev-parse", "HEAD")
	ctx := context.Background()
	setUp := func(pool wtpool.Pool, commit string) {
		slot, err := pool.Hold(1)
		if err != nil {
			b.Fatal(err)
		}
		defer slot.Release()
		if _, err := slot.Checkout(ctx, commit); err != nil {
			b.Fatal(err)
		}
	}
	var first, reuse time.Duration
	b.ResetTimer()
	for b.Loop() {
		pool := wtpool.Pool{Repo: r, Dir: filepath.Join(b.TempDir(), "worktrees")}
		first += timeIt(b, 1, func() { setUp(pool, one) })
		reuse += timeIt(b, 1, func() { setUp(pool, two) })
		b.StopTimer()
		gittest.Git(b, ".", "worktree", "prune")
		b.StartTimer()
	}
	b.ReportMetric(float64(reuse)/float64(first), "x-first")
}

func timeIt(b *testing.B, n int, f func()) time.Duration {
	b.Helper()
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start) / time.Duration(n)
}
