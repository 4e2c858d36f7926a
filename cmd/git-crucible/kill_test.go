package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
)

// The kill tests' harness, for build_kill_test.go,
// build_parallel_kill_test.go, run_kill_test.go and
// verifycommits_kill_test.go: a clean run measured; git-crucible run again
// and again, the binary itself and not through git, so that each SIGKILL
// lands on the command under test and not on git's wrapper of it, at
// moments spread over the clean run; the git a kill left given time to
// settle before the resume; and, for builds, what every resumed build
// must end with.

// killGoal is the goal of the killed builds.
const killGoal = "greet takes a name"

// runCrucibleUntil runs git-crucible args in dir, killed with its process
// group (its git too; not its agents, which have groups of their own) when
// kill fires. It returns the exit status (-1 when killed) and stdout and
// stderr.
func runCrucibleUntil(t *testing.T, dir string, kill <-chan time.Time, args ...string) (code int, out string) {
	t.Helper()
	return runCrucibleKilled(t, dir, kill, nil, args...)
}

// runCrucibleKilled is runCrucibleUntil, killed with its process group when
// group fires, or alone, what it started living on, when alone fires.
func runCrucibleKilled(t *testing.T, dir string, group, alone <-chan time.Time, args ...string) (code int, out string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled, exec SIGKILLs git-crucible alone.
	cmd := exec.CommandContext(ctx, "git-crucible", args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	go func() {
		select {
		case <-alone:
			cancel()
		case <-ctx.Done():
		}
	}()
	code = gittest.RunUntil(t, cmd, group)
	return code, b.String()
}

// cleanRun runs git-crucible args in dir to its end, as a run no kill
// interrupts, failing the test unless it exits 0 within a minute. It
// returns how long the run took and how many events its pipeline recorded
// (0 with none), which the kills spread over, and its output.
func cleanRun(t *testing.T, dir string, args ...string) (walk time.Duration, events int, out string) {
	t.Helper()
	t0 := time.Now()
	code, out := runCrucibleUntil(t, dir, time.After(time.Minute), args...)
	if code != 0 {
		t.Fatalf("a clean git crucible %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return time.Since(t0), chainLength(t, dir), out
}

// killSpread runs git-crucible (args() says with what) in dir again and
// again, SIGKILLing it each time, kills times, at points spread over a
// whole run: a clean one takes walk and records events. The kills keep
// pace with the run's progress (its chain's length): a run ahead of that
// pace is killed before it gets far, so that kill k lands about k/kills of
// the way through, whatever pace a loaded machine sets. It returns the
// number of kills, and whether a run got to its end meanwhile: on a machine
// whose load fell after the clean run, one may outrun the kills left, which
// is a soak all the same once half of them landed (fewer fail the test).
func killSpread(t *testing.T, dir string, kills int, walk time.Duration, events int, args func() []string) (killed int, finished bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 22))
	for killed < kills {
		window := 3 * walk / (2 * time.Duration(kills))
		if float64(chainLength(t, dir))/float64(events) > float64(killed+1)/float64(kills+3) {
			window = walk / 100
		}
		a := args()
		switch code, out := runCrucibleUntil(t, dir, time.After(time.Duration(rng.Int64N(int64(window)))), a...); code {
		case -1:
			killed++
		case 0:
			if killed < kills/2 {
				t.Fatalf("the run finished after %d kills (of a %v run): the kills came too late\n%s", killed, walk, out)
			}
			t.Logf("the run finished after %d of %d kills: the machine ran it faster than the clean run (%v)", killed, kills, walk)
			return killed, true
		default:
			t.Fatalf("after %d kills, git crucible %s exited %d:\n%s", killed, strings.Join(a, " "), code, out)
		}
		settled(t, dir)
	}
	return killed, false
}

// settled waits, a little, for a git that a killed run left moving
// crucible's refs in its own process group to finish, so that the next
// run sees whether the pipeline started.
func settled(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		locks, _ := filepath.Glob(filepath.Join(dir, ".git", "refs", "crucible", "*", "*.lock"))
		if len(locks) == 0 {
			return
		}
	}
}

// A buildSoak is what killBuild leaves for a test to check further.
type buildSoak struct {
	dir, log string // the project, and its agents' log of their starts
	cleanLog string // the clean build's agents' log
	killed   int
	walk     time.Duration // the clean build's
	events   int           // the clean build's
	starts   map[int]pipeline.DispatchStart
	finishes map[int][]pipeline.DispatchFinish
}

// killBuild kills git crucible build --yes [flags] of the sample project,
// the scripted agent playing scenario, and then its --resume --yes
// [flags], kills times spread over a clean build's walk, and lets a last
// resume finish it. It fails unless the four phases close, verify and git
// fsck are clean, and every dispatch that started finished once.
func killBuild(t *testing.T, scenario string, kills int, flags ...string) buildSoak {
	t.Helper()
	start := append(append([]string{"build", "--yes"}, flags...), killGoal)
	resume := append([]string{"build", "--resume", "--yes"}, flags...)
	clean, cleanLog := sampleProjectPlaying(t, scenario)
	walk, events, _ := cleanRun(t, clean, start...)

	dir, log := sampleProjectPlaying(t, scenario)
	killed, finished := killSpread(t, dir, kills, walk, events, func() []string {
		if pipelineID(t, dir) == "" {
			return start
		}
		return resume
	})
	if !finished {
		if code, out := runCrucibleUntil(t, dir, time.After(time.Minute), resume...); code != 0 || !strings.Contains(out, ": the four phases are closed\n") {
			t.Fatalf("the last resume exited %d:\n%s\ngit status:\n%s\nHEAD's reflog:\n%s\nthe chain's last events:\n%s", code, out,
				gittest.Git(t, dir, "status", "--short"), gittest.Git(t, dir, "reflog", "-n", "12", "--format=%h %gs"), lastEvents(t, dir, 8))
		}
	}
	if v := gitCrucible(t, dir, "verify"); !strings.Contains(v, "ok "+pipelineID(t, dir)) {
		t.Errorf("verify: %s", v)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	starts, finishes := dispatches(t, dir)
	for seq, s := range starts {
		if n := finishes[seq]; len(n) != 1 {
			t.Errorf("dispatch %d (%s) has %d finishes", seq, s.Role, len(n))
		}
	}
	return buildSoak{dir: dir, log: log, cleanLog: cleanLog, killed: killed, walk: walk, events: events, starts: starts, finishes: finishes}
}

// lastEvents are the last n events of dir's pipeline, one a line, for a
// failure to show where the run was.
func lastEvents(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	events := chainEvents(t, dir)
	for _, e := range events[max(0, len(events)-n):] {
		fmt.Fprintf(&b, "%s %s\n", e.Type, e.Data)
	}
	return b.String()
}

// pipelineID is the id of dir's pipeline, "" before one starts.
func pipelineID(t *testing.T, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/crucible/pipelines/")
}

// chainLength is how many events dir's pipeline recorded, 0 before it starts.
func chainLength(t *testing.T, dir string) int {
	t.Helper()
	id := pipelineID(t, dir)
	if id == "" {
		return 0
	}
	n, err := strconv.Atoi(gittest.Git(t, dir, "rev-list", "--count", "refs/crucible/pipelines/"+id))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
