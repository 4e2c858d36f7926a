package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
)

// sampleDAG is where runProject puts the sample task run's manifest.
const sampleDAG = "dispatch/demo"

// TestKilledRunResumes kills git crucible run of the sample DAG (three
// levels, seven tasks, max-parallel 2) itself, with its git, with SIGKILL
// at least 30 times, each kill a little after the run records one of
// killPoints, in turn: while agents work (they take a little time), while
// a level's commits are made, between its records, while the branch
// moves. After every third kill `git gc --prune=now` runs before the
// resume. Kills go on until the run finishes, then again in a new
// repository, until there were 30. Each time the run finished: every task
// is completed; the branch holds one commit per task that changes files,
// in level order, with the clean run's tree; no task's agent started
// after its task was committed; verify and fsck are clean; no lock is
// left; the work ref, the backup branch (the commit the run began on is
// on the branch) and the slots' worktrees are gone; an implementer or
// critique dispatched more than once was dispatched again only as the
// retry of the one before, with the reason.
func TestKilledRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real task runs for several seconds")
	}
	const kills = 30
	clean, _ := runProject(t)
	walk, events, _ := cleanRun(t, clean, "run", sampleDAG)
	tree := gittest.Git(t, clean, "rev-parse", "HEAD^{tree}")

	rng := rand.New(rand.NewPCG(14, 30))
	jitter := 2 * walk / time.Duration(events) // up to about two events' time after it
	killed, gcs, rounds := 0, 0, 0
	landed := map[string]int{} // the last event each kill left, for the log
	for ; killed < kills; rounds++ {
		if rounds == 10 {
			t.Fatalf("%d kills in %d runs to their end: too few", killed, rounds)
		}
		dir, log := runProject(t)
		base := gittest.Git(t, dir, "rev-parse", "HEAD")
		for {
			// Every other round of the points, at once: right between two records.
			delay := time.Duration(rng.Int64N(int64(jitter)))
			if killed/len(killPoints)%2 == 1 {
				delay = 0
			}
			at := recorded(dir, killPoints[killed%len(killPoints)], delay)
			code, out := runCrucibleUntil(t, dir, at, "run", sampleDAG)
			if code == 0 {
				// A kill after the run's last record leaves it done.
				if !strings.Contains(out, ": 7 tasks completed, the branch at ") && !strings.Contains(out, ": already done, all 7 tasks completed") {
					t.Fatalf("the run finished:\n%s", out)
				}
				break
			}
			if code != -1 {
				t.Fatalf("after %d kills, git crucible run exited %d:\n%s", killed, code, out)
			}
			killed++
			settled(t, dir)
			landed[lastEvent(t, dir)]++
			if killed%3 == 0 {
				gittest.Git(t, dir, "gc", "--quiet", "--prune=now")
				gcs++
			}
		}
		assertRunConverged(t, dir, log, base, tree)
	}
	t.Logf("%d kills (%d followed by gc) in %d runs to their end; a clean run takes %v and %d chain commits; the last event before each kill: %v",
		killed, gcs, rounds, walk, events, landed)
}

// assertRunConverged fails unless the sample DAG's run in dir, begun at
// base, ended as a clean run does, with tree, whatever kills it took.
func assertRunConverged(t *testing.T, dir, log, base, tree string) {
	t.Helper()
	id := pipelineID(t, dir)
	evs := chainEvents(t, dir)
	last := map[string]string{}
	committedAt := map[string]int{} // a task's first committed event, by its index in the chain
	startedAt := map[int]int{}      // a dispatch's start, by its index in the chain
	lastOf := map[string]int{}      // the newest dispatch of a point (step, task, title, round)
	for i, e := range evs {
		switch e.Type {
		case pipeline.TypeDAGTask:
			var d pipeline.DAGTaskData
			decode(t, e.Data, &d)
			last[d.Task] = d.Status
			if _, ok := committedAt[d.Task]; !ok && d.Status == "committed" {
				committedAt[d.Task] = i
			}
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			decode(t, e.Data, &d)
			startedAt[d.Seq] = i
			// A point's dispatch after its first, which finished, retries it
			// and says why: a finished dispatch never runs again unsaid.
			point := fmt.Sprintf("%s %s (%s) round %d", d.Step, d.TaskID, d.TaskTitle, d.Round)
			if prev, again := lastOf[point]; again && (d.RetryOf == nil || *d.RetryOf != prev || d.RetryReason == "") {
				t.Errorf("%s was dispatched again (%d) after dispatch %d, not as its retry with a reason: %+v", point, d.Seq, prev, d)
			}
			lastOf[point] = d.Seq
		}
	}
	for _, task := range sampleTasks {
		if last[task.id] != "completed" {
			t.Errorf("task %s is %q at the end, want completed", task.id, last[task.id])
		}
	}
	// The scripted agent logs "SEQ ROLE phase=P task=T round=R" as it
	// starts; its dispatch was recorded before it started.
	for seq, lines := range agentLog(t, log) {
		task := strings.TrimPrefix(strings.Fields(lines[0])[3], "task=")
		at, ok := startedAt[seq]
		if !ok {
			t.Errorf("the agent of task %s ran for dispatch %d, which is not on the chain", task, seq)
			continue
		}
		if c, done := committedAt[task]; done && at > c {
			t.Errorf("the agent of task %s started for dispatch %d after the task was committed", task, seq)
		}
	}

	// One commit per task that changes files, each task's number in its
	// trailer, levels in order, and the clean run's tree.
	var got []string
	level := 0
	for _, n := range strings.Fields(gittest.Git(t, dir, "log", "--reverse", "--first-parent", "--format=%(trailers:key=Crucible-Task,valueonly)", base+"..HEAD")) {
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > len(sampleTasks) {
			t.Fatalf("a commit's Crucible-Task %q", n)
		}
		task := sampleTasks[i-1]
		if task.level < level {
			t.Errorf("task %s (level %d) committed after a task of level %d", task.id, task.level, level)
		}
		level = task.level
		got = append(got, task.id)
	}
	slices.Sort(got)
	if want := "1a-upper 1b-lower 1c-notes 2a-case 2b-docs 3a-greet"; strings.Join(got, " ") != want {
		t.Errorf("the branch's task commits: %v, want one each of %s", got, want)
	}
	if n := gittest.Git(t, dir, "rev-list", "--count", base+"..HEAD"); n != "6" {
		t.Errorf("%s commits on the branch since the run began, want 6", n)
	}
	if got := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"); got != tree {
		t.Errorf("the branch's tree %s, the clean run's %s:\n%s", got, tree, gittest.Git(t, dir, "diff", "--stat", tree, got))
	}
	// The manifest is the run's view, rewritten as it goes: changed, and only it.
	if st := gittest.Git(t, dir, append([]string{"status", "--porcelain", "--", ":!" + sampleDAG + "/dispatch.yaml"}, notUserFiles()...)...); st != "" {
		t.Errorf("the work tree does not match the branch:\n%s", st)
	}
	assertUserFiles(t, dir)

	if v := gitCrucible(t, dir, "verify"); !strings.Contains(v, "ok "+id) {
		t.Errorf("verify: %s", v)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if w := gittest.Git(t, dir, "for-each-ref", "refs/crucible/work/"); w != "" {
		t.Errorf("the work ref is left: %s", w)
	}
	// Complete, the run removed its backup branch, its commit being on
	// the branch, and its slots' worktrees.
	if b := gittest.Git(t, dir, "for-each-ref", "refs/heads/backup-main-pre-dispatch"); b != "" {
		t.Errorf("the backup branch is left: %s", b)
	}
	gittest.Git(t, dir, "merge-base", "--is-ancestor", base, "HEAD")
	if wt := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("worktrees are left:\n%s", wt)
	}
	assertNoLocks(t, dir)
}

// sampleTasks are the sample DAG's tasks in the manifest's order (a
// commit's Crucible-Task is its index from 1), with their levels.
var sampleTasks = []struct {
	id    string
	level int
}{{"1a-upper", 1}, {"1b-lower", 1}, {"1c-notes", 1}, {"2a-case", 2}, {"2b-docs", 2}, {"3a-greet", 3}, {"3b-survey", 3}}

// runProject is sampleProject with the sample DAG's manifest committed at
// sampleDAG and the scripted agent playing its "dag" scenario slowed
// down: each agent sleeps as it starts and again before its report.
func runProject(t *testing.T) (dir, log string) {
	t.Helper()
	dir, log = sampleProject(t)
	addSampleDAG(t, dir)
	scenario, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent", "scenarios", "dag"))
	if err != nil {
		t.Fatal(err)
	}
	var slow strings.Builder
	for _, l := range strings.SplitAfter(string(scenario), "\n") {
		if l == "report\n" {
			slow.WriteString("sleep 0.1\n")
		}
		slow.WriteString(l)
		if strings.HasPrefix(l, "[implementer ") {
			slow.WriteString("sleep 0.2\n")
		}
	}
	slowFile := filepath.Join(t.TempDir(), "dag-slow")
	if err := os.WriteFile(slowFile, []byte(slow.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, ".git", "crucible", "agents.toml")
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(strings.Replace(string(b), `"happy"`, strconv.Quote(slowFile), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// chainEvent is an event of git crucible log --json.
type chainEvent struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// chainEvents are dir's pipeline's events, oldest first (log shows the
// newest first).
func chainEvents(t *testing.T, dir string) []chainEvent {
	t.Helper()
	var events []chainEvent
	if err := json.Unmarshal([]byte(gitCrucible(t, dir, "log", "--json")), &events); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(events)
	return events
}

// killPoints are the events after which the kills come, in turn, as
// events.jsonl spells them: an agent starting, its task dispatched, its
// dispatch finished (the level's commits are made after the last one), a
// task committed, a level recorded, a task completed.
var killPoints = []string{`"type":"dispatch.start"`, `"status":"dispatched"`, `"type":"dispatch.finish"`,
	`"status":"committed"`, `"type":"dag.level"`, `"status":"completed"`}

// recorded fires after delay once an append to dir's pipeline (newer than
// its tip now) records an event whose line holds want.
func recorded(dir, want string, delay time.Duration) <-chan time.Time {
	fire := make(chan time.Time, 1)
	git := func(args ...string) string {
		out, _ := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out))
	}
	tip := func() string { return git("for-each-ref", "--format=%(objectname)", "refs/crucible/pipelines/") }
	go func() {
		seen := tip()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if now := tip(); now != seen {
				seen = now
				if strings.Contains(git("cat-file", "-p", now+":events.jsonl"), want) {
					break
				}
			}
		}
		time.Sleep(delay)
		fire <- time.Now()
	}()
	return fire
}

// lastEvent is the type of dir's pipeline's newest event, with a task
// event's status; "none" before the pipeline starts.
func lastEvent(t *testing.T, dir string) string {
	t.Helper()
	id := pipelineID(t, dir)
	if id == "" {
		return "none"
	}
	var evs []chainEvent
	// By its id: a kill may have left it not yet active.
	if err := json.Unmarshal([]byte(gitCrucible(t, dir, "log", "--json", "-n", "1", "--pipeline", id)), &evs); err != nil || len(evs) != 1 {
		t.Fatalf("the newest event: %v %v", evs, err)
	}
	e := evs[0]
	if e.Type == pipeline.TypeDAGTask {
		var d pipeline.DAGTaskData
		decode(t, e.Data, &d)
		return e.Type + " " + d.Status
	}
	return e.Type
}

func decode(t *testing.T, data json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestKilledRunPaysOnce kills git crucible run of the sample DAG itself,
// with its process group, right after the first implementer's finish is
// recorded completed, before its task is committed: git's
// reference-transaction hook holds the append that records it, so the
// kill lands there every time. Resumed, the run takes the task's work from
// its slot: every implementer ran once, for one dispatch each, and the run
// ends as a clean run does. When the slot is gone, the task runs again as
// a retry of the completed dispatch, the manifest saying why.
func TestKilledRunPaysOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sample DAG three times")
	}
	clean, _ := runProject(t)
	cleanRun(t, clean, "run", sampleDAG)
	tree := gittest.Git(t, clean, "rev-parse", "HEAD^{tree}")

	// killed runs the sample DAG in a new project until the first
	// implementer's finish is recorded, and returns the project, its agent
	// log, the run's base, the killed task and its dispatch.
	killed := func(t *testing.T) (dir, log, base, task string, seq int) {
		dir, log = runProject(t)
		base = gittest.Git(t, dir, "rev-parse", "HEAD")
		marker := filepath.Join(t.TempDir(), "finished")
		hook := filepath.Join(dir, ".git", "hooks", "reference-transaction")
		hold := fmt.Sprintf(`#!/bin/sh
[ "$1" = committed ] && [ ! -e %[1]q ] || exit 0
while read -r old new ref; do
	case $ref in refs/crucible/pipelines/*)
		git cat-file -p "$new:events.jsonl" | grep -q '"type":"dispatch.finish".*"status":"completed"' && { : >%[1]q; sleep 5; } ;;
	esac
done
exit 0
`, marker)
		if err := os.WriteFile(hook, []byte(hold), 0o755); err != nil {
			t.Fatal(err)
		}
		if code, out := runCrucibleUntil(t, dir, appeared(marker), "run", sampleDAG); code != -1 {
			t.Fatalf("the run was to be killed after an implementer finished; it exited %d:\n%s", code, out)
		}
		settled(t, dir)
		if err := os.Remove(hook); err != nil {
			t.Fatal(err)
		}
		starts, finishes := dispatches(t, dir)
		for s, fs := range finishes {
			if fs[0].Status == "completed" {
				seq, task = s, starts[s].TaskID
			}
		}
		if task == "" || len(finishes) != 1 {
			t.Fatalf("the kill was to follow one implementer's completed finish; finishes: %v", finishes)
		}
		if last := lastEvent(t, dir); last != pipeline.TypeDispatchFinish {
			t.Fatalf("the kill came after %s, not the finish of dispatch %d", last, seq)
		}
		return dir, log, base, task, seq
	}

	t.Run("taken", func(t *testing.T) {
		dir, log, base, task, seq := killed(t)
		if code, out := runCrucibleUntil(t, dir, time.After(time.Minute), "run", sampleDAG); code != 0 {
			t.Fatalf("the resume exited %d:\n%s", code, out)
		}
		starts, _ := dispatches(t, dir)
		byTask := map[string][]int{}
		for s, d := range starts {
			byTask[d.TaskID] = append(byTask[d.TaskID], s)
		}
		for _, st := range sampleTasks {
			if n := len(byTask[st.id]); n != 1 {
				t.Errorf("task %s was dispatched %d times (%v), want once", st.id, n, byTask[st.id])
			}
		}
		if got := byTask[task]; len(got) != 1 || got[0] != seq {
			t.Errorf("task %s's dispatches %v, want only the completed %d", task, got, seq)
		}
		for s, lines := range agentLog(t, log) {
			if len(lines) != 1 {
				t.Errorf("the agent of dispatch %d started %d times: %v", s, len(lines), lines)
			}
		}
		assertRunConverged(t, dir, log, base, tree)
	})

	t.Run("gone", func(t *testing.T) {
		dir, log, base, task, seq := killed(t)
		var slot string
		for _, e := range chainEvents(t, dir) {
			var d pipeline.DAGTaskData
			if e.Type == pipeline.TypeDAGTask {
				decode(t, e.Data, &d)
				if d.Task == task && d.Status == "dispatched" {
					slot = d.Worktree
				}
			}
		}
		gittest.Git(t, dir, "worktree", "remove", "--force", slot)
		if code, out := runCrucibleUntil(t, dir, time.After(time.Minute), "run", sampleDAG); code != 0 {
			t.Fatalf("the resume exited %d:\n%s", code, out)
		}
		starts, _ := dispatches(t, dir)
		var again []pipeline.DispatchStart
		for _, d := range starts {
			if d.TaskID == task && d.Seq != seq {
				again = append(again, d)
			}
		}
		if len(again) != 1 || again[0].RetryOf == nil || *again[0].RetryOf != seq {
			t.Fatalf("task %s was dispatched again as %+v, want once, as the retry of %d", task, again, seq)
		}
		want := fmt.Sprintf(`,"retry_of":%d,"retry_reason":"dispatch %d completed, but its worktree %s is gone"}`, seq, seq, slot)
		if show := gitCrucible(t, dir, "dispatch", "show", strconv.Itoa(again[0].Seq)); !strings.HasSuffix(show, want+"\n") {
			t.Errorf("dispatch show %d says:\n%s\nwant it to hold:\n%s", again[0].Seq, show, want)
		}
		for _, d := range starts {
			if d.TaskID != task && d.RetryOf != nil {
				t.Errorf("dispatch %d of task %s retries %d", d.Seq, d.TaskID, *d.RetryOf)
			}
		}
		assertRunConverged(t, dir, log, base, tree)
	})
}

// appeared fires once path exists.
func appeared(path string) <-chan time.Time {
	fire := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if _, err := os.Stat(path); err == nil {
				break
			}
		}
		fire <- time.Now()
	}()
	return fire
}

// addSampleDAG commits the sample task DAG's manifest in dir, at sampleDAG.
func addSampleDAG(t *testing.T, dir string) {
	t.Helper()
	manifest, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent", "sample-dag", "dispatch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, sampleDAG), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sampleDAG, "dispatch.yaml"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", sampleDAG)
	gittest.Git(t, dir, "commit", "-q", "-m", "the task run's manifest")
}
