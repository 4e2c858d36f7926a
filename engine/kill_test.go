package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/report"
)

// The kill test's engine is this test binary, run with these variables
// set (see TestMain): a real process, killed with SIGKILL.
const (
	engineEnv = "BUILD_TEST_ENGINE"     // the pipeline id
	countEnv  = "BUILD_TEST_DISPATCHES" // how many tasks it dispatches
	logEnv    = "BUILD_TEST_AGENT_LOG"  // where its agent logs every real start
	claudeEnv = "BUILD_TEST_CLAUDE"     // set: its agent is a claude (on PATH), not killAgent
)

// exitBusy is the test engine's exit status when another holds the lock.
const exitBusy = 75

func TestMain(m *testing.M) {
	if id := os.Getenv(engineEnv); id != "" {
		os.Exit(testEngine(id))
	}
	os.Exit(m.Run())
}

// killAgent logs its start, works a little, and writes its report whole.
const killAgent = `echo "$CRUCIBLE_SEQ $CRUCIBLE_TASK" >>"$` + logEnv + `"
sleep 0.0$(($$ % 8 + 2))
printf 'status: completed\ndeviations: []\n' >"$CRUCIBLE_OUTPUT.tmp" && mv "$CRUCIBLE_OUTPUT.tmp" "$CRUCIBLE_OUTPUT"`

// taskPoint is the point of the test engine's dispatch for task k.
func taskPoint(k int) pipeline.Point {
	return pipeline.Point{Phase: ledger.Execute, Step: "implement", Task: strconv.Itoa(k)}
}

// testEngine is a walk in miniature: recover, then dispatch every task
// not yet completed (a retry of an interrupted one names it), recording
// each task's step as done.
func testEngine(id string) int {
	if err := walkTasks(context.Background(), id); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		var busy *BusyError
		if errors.As(err, &busy) {
			return exitBusy
		}
		return 1
	}
	return 0
}

func walkTasks(ctx context.Context, id string) error {
	n, err := strconv.Atoi(os.Getenv(countEnv))
	if err != nil {
		return err
	}
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return err
	}
	svc := pipeline.Open(repo)
	defer svc.Close()
	a := shAgent(killAgent)
	if os.Getenv(claudeEnv) != "" {
		a = agent.Agent{Name: "claude", Kind: agent.Claude, Timeout: time.Minute}
	}
	e, err := Open(svc, id, config(a), repo.WorkTree)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Runner.Grace = time.Second
	if _, err := e.Recover(ctx); err != nil {
		return err
	}
	events, err := e.events(ctx)
	if err != nil {
		return err
	}
	recs, err := pipeline.Records(events)
	if err != nil {
		return err
	}
	steps, err := pipeline.StepsOf(events)
	if err != nil {
		return err
	}
	pr := Progress{Steps: steps}
	for k := 1; k <= n; k++ {
		p := taskPoint(k)
		if pr.Done(p) {
			continue
		}
		d := DispatchSpec{Point: p, Role: "implementer", Template: "implementer", Prompt: []byte("task " + p.Task + "\n")}
		completed := false
		for _, r := range recs {
			if r.Point == p {
				completed = completed || r.Status == "completed"
				d.RetryOf = &r.Seq
			}
		}
		if !completed {
			out, err := e.Dispatch(ctx, d)
			if err != nil {
				return err
			}
			if out.Status != "completed" {
				return fmt.Errorf("task %d: dispatch %d %s: %s", k, out.Seq, out.Status, out.Summary)
			}
		}
		if err := e.RecordStep(ctx, p, pipeline.StepDone, "completed"); err != nil {
			return err
		}
	}
	return nil
}

// runEngine runs the test engine in dir, in its own process group, and
// kills the group (the engine and its git, not its agents, which have
// their own) after the given time unless it has ended. It returns the
// engine's exit status (-1 when killed) and its stderr.
func runEngine(t *testing.T, dir, id string, n int, log string, after time.Duration) (int, string) {
	t.Helper()
	return runEngineUntil(t, dir, id, n, log, time.After(after))
}

// runEngineUntil is runEngine, killed when kill fires.
func runEngineUntil(t *testing.T, dir, id string, n int, log string, kill <-chan time.Time) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), engineEnv+"="+id, countEnv+"="+strconv.Itoa(n), logEnv+"="+log)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	code := gittest.RunUntil(t, cmd, kill)
	return code, stderr.String()
}

// TestKilledEngineResumes kills the engine with SIGKILL at random points
// of a run of dispatches, again and again, then lets one finish: every
// task's dispatch completed exactly once, no agent ran for a dispatch
// that was then thrown away, every dispatch is finished, and git, the
// chain and the lock files are sound.
func TestKilledEngineResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes for several seconds")
	}
	const tasks, kills = 80, 30
	dir := gittest.Init(t)
	repo, svc := startedIn(t, dir, "kill test")
	const notes = "the user's, untracked\n"
	write(t, filepath.Join(dir, "MYNOTES.txt"), notes)
	log := filepath.Join(t.TempDir(), "agent.log")
	rng := rand.New(rand.NewPCG(11, 12))
	killed, busy := 0, 0
	for round := 0; killed < kills; round++ {
		if round > 5*kills {
			t.Fatalf("only %d kills in %d rounds", killed, round)
		}
		// Every third round two resumes race: one must refuse.
		engines := 1 + min(1, round%3/2)
		var wg sync.WaitGroup
		codes, stderrs := make([]int, engines), make([]string, engines)
		for i := range engines {
			after := time.Duration(rng.Int64N(int64(350 * time.Millisecond)))
			wg.Go(func() { codes[i], stderrs[i] = runEngine(t, dir, testID, tasks, log, after) })
		}
		wg.Wait()
		for i, code := range codes {
			switch code {
			case -1:
				killed++
			case exitBusy:
				busy++
			case 0:
				t.Fatalf("all %d tasks finished after %d kills: the kills came too late", tasks, killed)
			default:
				t.Fatalf("engine exited %d: %s", code, stderrs[i])
			}
		}
	}
	if busy == 0 {
		t.Error("no resume was refused while another ran")
	}
	if code, stderr := runEngine(t, dir, testID, tasks, log, time.Minute); code != 0 {
		t.Fatalf("the last resume exited %d: %s", code, stderr)
	}

	recs, err := pipeline.Records(chainOf(t, svc))
	if err != nil {
		t.Fatal(err)
	}
	completed := map[string]int{}
	status := map[int]pipeline.Record{}
	how := map[string]int{}
	for _, r := range recs {
		status[r.Seq] = r
		how[r.Recovered]++
		switch {
		case r.Status == "completed":
			completed[r.Point.Task]++
		case r.Status == "error" && r.Recovered == Interrupted:
		default:
			t.Errorf("dispatch %d: %s (%s, recovered %q)", r.Seq, r.Status, r.Summary, r.Recovered)
		}
	}
	for k := 1; k <= tasks; k++ {
		if n := completed[strconv.Itoa(k)]; n != 1 {
			t.Errorf("task %d completed %d times", k, n)
		}
	}
	for seq, n := range agentStarts(t, log) {
		if r := status[seq]; n != 1 || r.Status != "completed" {
			t.Errorf("dispatch %d: its agent started %d times and it finished %q: an agent's work was lost", seq, n, r.Status)
		}
	}
	steps := map[string]int{}
	for _, ev := range chainOf(t, svc) {
		if ev.Type == pipeline.TypeStep {
			var d pipeline.StepData
			if err := pipeline.DecodeData(ev, &d); err != nil {
				t.Fatal(err)
			}
			steps[d.Task]++
		}
	}
	if len(steps) != tasks {
		t.Errorf("%d tasks have a step event, want %d", len(steps), tasks)
	}
	for task, n := range steps {
		if n != 1 {
			t.Errorf("task %s: %d step events", task, n)
		}
	}
	t.Logf("%d kills, %d resumes refused while another ran; %d dispatches for %d tasks; settled on resume: %d waited for, %d adopted, %d interrupted and run again",
		killed, busy, len(recs), tasks, how[Waited], how[Adopted], how[Interrupted])

	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if problems, err := svc.Verify(t.Context(), testID); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
	assertNothingLeft(t, repo, testID)
	if b, err := os.ReadFile(filepath.Join(dir, "MYNOTES.txt")); string(b) != notes {
		t.Errorf("the user's MYNOTES.txt: %q, %v", b, err)
	}
}

// TestKilledEngineAdoptsClaude: an engine killed while its claude works
// loses nothing: the agent, in its own process group, prints its result
// into its run directory, and the resume waits for it and takes that
// result rather than running it again.
func TestKilledEngineAdoptsClaude(t *testing.T) {
	bin, err := filepath.Abs("../agent/testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "agent.log")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_CLAUDE_LOG", log)
	t.Setenv("FAKE_CLAUDE_SLEEP", "1")
	t.Setenv(claudeEnv, "1")
	dir := gittest.Init(t)
	repo, svc := startedIn(t, dir, "kill test")
	started := make(chan time.Time, 1) // once claude runs
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(log); len(b) > 0 {
				started <- time.Now()
				return
			}
		}
	}()
	if code, stderr := runEngineUntil(t, dir, testID, 1, log, started); code != -1 {
		t.Fatalf("the engine was to be killed while claude ran; it exited %d: %s", code, stderr)
	}
	if code, stderr := runEngine(t, dir, testID, 1, log, time.Minute); code != 0 {
		t.Fatalf("the resume exited %d: %s", code, stderr)
	}
	recs, err := pipeline.Records(chainOf(t, svc))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Status != "completed" || recs[0].Recovered != Waited {
		t.Fatalf("dispatches %+v", recs)
	}
	out, err := svc.ReadKept(t.Context(), testID, recs[0].Output)
	if want := "seq 1 implementer, 7 prompt bytes, args: -p --output-format json --permission-mode acceptEdits"; err != nil || string(out) != want {
		t.Errorf("kept output %q, %v; want %q", out, err, want)
	}
	if starts := agentStarts(t, log); starts[1] != 1 || len(starts) != 1 {
		t.Errorf("claude's starts by dispatch: %v", starts)
	}
	assertNothingLeft(t, repo, testID)
}

// chainOf is the test pipeline's chain.
func chainOf(t *testing.T, svc *pipeline.Service) []pipeline.Event {
	t.Helper()
	events, err := svc.ChainEvents(t.Context(), testID)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// agentStarts counts the agent's real starts by seq, from its log.
func agentStarts(t *testing.T, log string) map[int]int {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	starts := map[int]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seq, err := strconv.Atoi(strings.Fields(sc.Text())[0])
		if err != nil {
			t.Fatalf("agent log line %q", sc.Text())
		}
		starts[seq]++
	}
	return starts
}

// assertNothingLeft fails on a lock file under the git dir, a run
// directory, or an agent still running.
func assertNothingLeft(t *testing.T, repo *gitext.Repo, id string) {
	t.Helper()
	filepath.WalkDir(repo.CommonDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".lock") {
			t.Errorf("lock left behind: %s", path)
		}
		return nil
	})
	runs, err := os.ReadDir(filepath.Join(repo.CrucibleDir(), "runs", id))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Name() != "engine-lock" {
			t.Errorf("left in the runs directory: %s", r.Name())
		}
	}
	for seq := 1; seq < 200; seq++ {
		if procs := agentProcesses(id, seq, repo.WorkTree); len(procs) > 0 {
			t.Errorf("agent of dispatch %d still runs: %v", seq, procs)
		}
	}
}

// TestResumeRefusedWhileBuilding: a second engine on the pipeline, in
// another process, is refused and says who holds it.
func TestResumeRefusedWhileBuilding(t *testing.T) {
	e := newEngine(t, shAgent("true"))
	code, stderr := runEngine(t, e.Workdir, e.ID, 1, filepath.Join(t.TempDir(), "log"), time.Minute)
	want := fmt.Sprintf("error: pipeline %s is being built by another git-crucible (pid %d)\n", e.ID, os.Getpid())
	if code != exitBusy || stderr != want {
		t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr, exitBusy, want)
	}
	if recs, _ := e.Dispatches(t.Context()); len(recs) != 0 {
		t.Fatalf("the refused engine dispatched: %+v", recs)
	}
}

// TestCommitWaitsForIndexLock: a task's commit that meets index.lock,
// held by the git commit a killed engine's run left running in its own
// process group, waits for it to end instead of failing.
func TestCommitWaitsForIndexLock(t *testing.T) {
	e := newEngine(t, shAgent("true"))
	w := &walker{e: e, taskNumbers: map[string]int{"1": 1}}
	release, err := w.holdWorkTree(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := w.refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := w.beforeDispatch(t.Context()); err != nil { // new.txt is its agent's
		t.Fatal(err)
	}
	write(t, filepath.Join(e.Workdir, "new.txt"), "new\n")
	lock := filepath.Join(e.Service.Repo.GitDir, "index.lock")
	write(t, lock, "")
	go func() {
		time.Sleep(300 * time.Millisecond) // the killed run's git commit ends
		os.Remove(lock)
	}()
	if err := w.commitTask(t.Context(), &report.PlanTask{ID: "1", Title: "Add new.txt"}, 1, "implementer"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, e.Workdir, "log", "-1", "--format=%s"); got != "Add new.txt (task 1)" {
		t.Errorf("HEAD is %q", got)
	}
}
