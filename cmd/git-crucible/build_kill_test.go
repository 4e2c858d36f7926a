package main

import (
	"bufio"
	"fmt"
	"maps"
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

// TestKilledBuildResumes kills git-crucible build itself (with its git,
// not its agents, which have their own process groups) with SIGKILL at
// points spread over a whole walk of the default spec by the scripted
// agent, at least 30 times, then lets a last --resume --yes finish. The
// four phases close, git and the chain are sound, every dispatch finished
// once, no agent ran twice for one dispatch, nor for one point of the
// walk unless the first dispatch was recorded interrupted and the second
// is its retry, each task is committed once, and no lock is left.
func TestKilledBuildResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real builds for several seconds")
	}
	soak := killBuild(t, "happy", 30)
	dir, starts, finishes := soak.dir, soak.starts, soak.finishes

	ledger := gitCrucible(t, dir, "ledger")
	var statuses []string
	for _, l := range strings.Split(ledger, "\n") {
		if s, found := strings.CutPrefix(l, "Status: "); found {
			statuses = append(statuses, s)
		}
	}
	if got := strings.Join(statuses, "/"); got != "PASS/PASS/COMPLETE/PASS" {
		t.Errorf("ledger statuses %s, want PASS/PASS/COMPLETE/PASS\n%s", got, ledger)
	}
	for seq := range finishes {
		if _, ok := starts[seq]; !ok {
			t.Errorf("dispatch %d finished but never started", seq)
		}
	}
	ran := agentLog(t, soak.log)
	for seq, lines := range ran {
		if _, ok := starts[seq]; !ok {
			t.Errorf("an agent ran for dispatch %d, which is not on the chain: %v", seq, lines)
		}
		if len(lines) > 1 {
			t.Errorf("the agent of dispatch %d started %d times: %v", seq, len(lines), lines)
		}
	}
	// A dispatch recorded interrupted is retried, and its retry names it;
	// every other dispatch completed.
	retried := map[int]int{}
	for seq, s := range starts {
		if s.RetryOf != nil {
			retried[*s.RetryOf] = seq
		}
	}
	how := map[string]int{}
	for seq, fs := range finishes {
		if len(fs) == 0 {
			continue
		}
		f := fs[0]
		how[f.Recovered]++
		interrupted := f.Recovered == "interrupted"
		if interrupted != (retried[seq] != 0) {
			t.Errorf("dispatch %d finished %s (recovered %q), retried by %d", seq, f.Status, f.Recovered, retried[seq])
		}
		if !interrupted && f.Status != "completed" {
			t.Errorf("dispatch %d finished %s: %s", seq, f.Status, f.Summary)
		}
	}
	// An agent ran twice for one point of the walk only when its first
	// dispatch was recorded interrupted and the second is its retry.
	byPoint := map[string]int{}
	for _, seq := range slices.Sorted(maps.Keys(ran)) {
		lines := ran[seq]
		point := strings.SplitN(lines[0], " ", 2)[1]
		if first, again := byPoint[point]; again && retried[first] != seq {
			t.Errorf("the agent for %s ran for dispatch %d and again for %d, which is not its retry", point, first, seq)
		}
		byPoint[point] = seq
	}
	if len(byPoint) != len(agentLog(t, soak.cleanLog)) {
		t.Errorf("agents ran for %d points of the walk; a clean walk runs %d", len(byPoint), len(agentLog(t, soak.cleanLog)))
	}

	assertTasksCommittedOnce(t, dir)
	assertTasksNoted(t, dir)
	assertPhasesCommittedOnce(t, dir)
	assertUserFiles(t, dir)
	assertNoLocks(t, dir)
	t.Logf("%d kills over a %v walk of %d events; %d dispatches, %d retries; settled on resume: %d waited for, %d adopted, %d interrupted",
		soak.killed, soak.walk, soak.events, len(starts), len(retried), how["waited"], how["adopted"], how["interrupted"])
}

// runBuild runs git-crucible build args in dir, not through git, and
// kills its process group after the given time unless it has ended. It
// returns the exit status (-1 when killed) and stdout and stderr.
func runBuild(t *testing.T, dir string, after time.Duration, args ...string) (code int, out string) {
	t.Helper()
	return runBuildUntil(t, dir, time.After(after), args...)
}

// runBuildUntil is runBuild, killed when kill fires.
func runBuildUntil(t *testing.T, dir string, kill <-chan time.Time, args ...string) (code int, out string) {
	t.Helper()
	return runCrucibleUntil(t, dir, kill, append([]string{"build"}, args...)...)
}

// assertTasksCommittedOnce fails unless the sample's two tasks were
// committed once each, as their Crucible-Task trailers say.
func assertTasksCommittedOnce(t *testing.T, dir string) {
	t.Helper()
	tasks := gittest.Git(t, dir, "log", "--format=%(trailers:key=Crucible-Task,valueonly)")
	count := map[string]int{}
	for _, l := range strings.Fields(tasks) {
		count[l]++
	}
	if count["1"] != 1 || count["2"] != 1 || len(count) != 2 {
		t.Errorf("task commits by Crucible-Task: %v, want one each of 1 and 2", count)
	}
}

// assertPhasesCommittedOnce fails unless Phases 1 and 2 of the sample's
// build were committed once each, in a commit of their own with their
// phase's trailer and note, holding their files alone: however the engine
// was killed around the phase's end, its commit was made, not lost, not
// made twice.
func assertPhasesCommittedOnce(t *testing.T, dir string) {
	t.Helper()
	want := map[string]string{"1": "docs/design.md\ntest/acceptance.sh", "2": "docs/plan.md"}
	seen := map[string]int{}
	for _, l := range strings.Split(gittest.Git(t, dir, "log", "--format=%H %(trailers:key=Crucible-Phase,valueonly,separator=)/%(trailers:key=Crucible-Task,valueonly,separator=)"), "\n") {
		commit, trailers, _ := strings.Cut(l, " ")
		phase, task, _ := strings.Cut(trailers, "/")
		if phase == "" || task != "" {
			continue
		}
		seen[phase]++
		if files := gittest.Git(t, dir, "show", "--name-only", "--format=", commit); files != want[phase] {
			t.Errorf("Phase %s's commit %s holds %q, want %q", phase, commit, files, want[phase])
		}
		note, err := exec.Command("git", "-C", dir, "notes", "--ref=crucible/provenance", "show", commit).Output()
		if err != nil || !strings.Contains(string(note), `"phase":`+phase+",") {
			t.Errorf("Phase %s's commit %s has the note %q (%v)", phase, commit, note, err)
		}
	}
	if seen["1"] != 1 || seen["2"] != 1 || len(seen) != 2 {
		t.Errorf("phase commits by Crucible-Phase: %v, want one each of 1 and 2", seen)
	}
}

// assertTasksNoted fails unless every task commit has a provenance note
// naming its task, however the engine was killed around the commit.
func assertTasksNoted(t *testing.T, dir string) {
	t.Helper()
	for _, l := range strings.Split(gittest.Git(t, dir, "log", "--format=%H %(trailers:key=Crucible-Task,valueonly,separator=)"), "\n") {
		commit, task, _ := strings.Cut(l, " ")
		if task == "" {
			continue
		}
		note, err := exec.Command("git", "-C", dir, "notes", "--ref=crucible/provenance", "show", commit).Output()
		if err != nil || !strings.Contains(string(note), `"task":`+task+",") {
			t.Errorf("task %s's commit %s has the note %q (%v)", task, commit, note, err)
		}
	}
}

// sampleProject is a repository holding the scripted agent's sample
// project, committed, hooks installed, the scripted agent playing happy
// for every role, with every agent start logged to the file it returns.
func sampleProject(t *testing.T) (dir, log string) {
	t.Helper()
	return sampleProjectPlaying(t, "happy")
}

// sampleProjectPlaying is sampleProject, the scripted agent playing scenario.
func sampleProjectPlaying(t *testing.T, scenario string) (dir, log string) {
	t.Helper()
	dir = gittest.Init(t)
	sample, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agent", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(sample)); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "sample")
	gitCrucible(t, dir, "hooks", "install")
	for name, content := range userFiles {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scripted, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agent", "scripted"))
	if err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(t.TempDir(), "agents.log")
	config := fmt.Sprintf("[agents.scripted]\nkind = \"command\"\ncommand = [\"sh\", %q, \"--scenario\", %q]\nenv = { SCRIPTED_LOG = %q }\n\n"+
		"[roles]\ndefault = \"scripted\"\n\n[project]\ntest = \"sh test/unit.sh\"\n", scripted, scenario, log)
	if err := os.MkdirAll(filepath.Join(dir, ".git", "crucible"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "crucible", "agents.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// userFiles are the user's untracked files sampleProject leaves in its
// work tree, some where agents write: an engine never commits them.
var userFiles = map[string]string{".env": "SECRET=not-for-commits\n", "MYNOTES.txt": "my notes\n", "docs/mine.md": "# mine\n"}

// notUserFiles are pathspecs that leave out userFiles.
func notUserFiles() []string {
	out := []string{"."}
	for name := range userFiles {
		out = append(out, ":!"+name)
	}
	return out
}

// assertUserFiles fails unless every one of userFiles is in dir's work
// tree as it was written, untracked, and in no commit of a branch.
func assertUserFiles(t *testing.T, dir string) {
	t.Helper()
	for name, content := range userFiles {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
			t.Errorf("the user's %s: %q, %v; want %q", name, b, err, content)
		}
	}
	for _, name := range strings.Fields(gittest.Git(t, dir, "log", "--branches", "--format=", "--name-only")) {
		if _, mine := userFiles[name]; mine {
			t.Errorf("the user's %s was committed", name)
		}
	}
}

// dispatches are the starts and finishes on dir's chain, by seq.
func dispatches(t *testing.T, dir string) (map[int]pipeline.DispatchStart, map[int][]pipeline.DispatchFinish) {
	t.Helper()
	events := chainEvents(t, dir)
	starts, finishes := map[int]pipeline.DispatchStart{}, map[int][]pipeline.DispatchFinish{}
	for _, e := range events {
		switch e.Type {
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			decode(t, e.Data, &d)
			if _, dup := starts[d.Seq]; dup {
				t.Errorf("dispatch %d started twice", d.Seq)
			}
			starts[d.Seq] = d
		case pipeline.TypeDispatchFinish:
			var d pipeline.DispatchFinish
			decode(t, e.Data, &d)
			finishes[d.Seq] = append(finishes[d.Seq], d)
		}
	}
	return starts, finishes
}

// agentLog is the scripted agent's log of its starts, by seq.
func agentLog(t *testing.T, log string) map[int][]string {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	ran := map[int][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seq, err := strconv.Atoi(strings.Fields(sc.Text())[0])
		if err != nil {
			t.Fatalf("agent log line %q", sc.Text())
		}
		ran[seq] = append(ran[seq], sc.Text())
	}
	return ran
}

// TestKilledBuildMidCommit kills git-crucible build while git commits,
// HEAD and the branch locked (its first commit: Phase 1's, as the phase
// ends): the commit, in a process group of its own, ends as git would have
// ended it, leaving no lock, and the resume finishes the walk with each
// phase and each task committed once.
func TestKilledBuildMidCommit(t *testing.T) {
	dir, _ := sampleProject(t)
	marker := filepath.Join(t.TempDir(), "committing")
	// git runs the reference-transaction hook with "prepared" while it
	// holds the locks of the refs it moves: HEAD's and the branch's.
	slow := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = prepared ] && grep -q ' refs/heads/main$' && { : >%q; sleep 0.5; }\nexit 0\n", marker)
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "reference-transaction"), []byte(slow), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := runBuildUntil(t, dir, appears(marker), "--yes", killGoal); code != -1 {
		t.Fatalf("build was to be killed while git committed; it exited %d:\n%s", code, out)
	}
	for _, lock := range []string{"HEAD.lock", filepath.Join("refs", "heads", "main.lock")} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, ".git", lock)); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the killed build's commit left .git/%s", lock)
			}
		}
	}
	if code, out := runBuild(t, dir, time.Minute, "--resume", "--yes"); code != 0 || !strings.Contains(out, ": the four phases are closed\n") {
		t.Fatalf("the resume exited %d:\n%s", code, out)
	}
	assertTasksCommittedOnce(t, dir)
	assertTasksNoted(t, dir)
	assertPhasesCommittedOnce(t, dir)
	assertUserFiles(t, dir)
}

// TestKilledBuildMidVerify kills git-crucible build while the rebase of
// its verify-commits runs, HEAD detached on it, and then that rebase too
// (it runs in a process group of its own): the resume puts the rebase
// back — HEAD on its branch again, which names the pipeline — and
// finishes the walk.
func TestKilledBuildMidVerify(t *testing.T) {
	dir, _ := sampleProject(t)
	marker := filepath.Join(t.TempDir(), "verifying")
	// git runs the reference-transaction hook as the rebase detaches HEAD
	// (HEAD's line on its input): the first time, the rebase holds there
	// while the build is killed, and is then killed itself.
	slow := fmt.Sprintf(`#!/bin/sh
if [ "$1" = committed ] && [ -d %q ] && [ ! -e %q ] && grep -q ' HEAD$'; then : >%[2]q; sleep 1; kill -9 $PPID; fi
exit 0
`, filepath.Join(dir, ".git", "rebase-merge"), marker)
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "reference-transaction"), []byte(slow), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := runBuildUntil(t, dir, appears(marker), "--yes", killGoal); code != -1 {
		t.Fatalf("build was to be killed while it verified commits; it exited %d:\n%s", code, out)
	}
	if head := gittest.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); head != "HEAD" {
		t.Fatalf("HEAD is on %s after the kill: the rebase was not under way", head)
	}
	code, out := runBuild(t, dir, time.Minute, "--resume", "--yes")
	if code != 0 || !strings.Contains(out, "Put back the verify-commits run a stopped build left under way\n") || !strings.Contains(out, ": the four phases are closed\n") {
		t.Fatalf("the resume exited %d:\n%s", code, out)
	}
	if head := gittest.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); head != "main" {
		t.Errorf("HEAD is on %s after the resume", head)
	}
	assertTasksCommittedOnce(t, dir)
	assertPhasesCommittedOnce(t, dir)
	assertUserFiles(t, dir)
}

// appears fires once path exists, looked for every 5 ms for a minute.
func appears(path string) <-chan time.Time {
	fired := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(path); err == nil {
				fired <- time.Now()
				return
			}
		}
	}()
	return fired
}
