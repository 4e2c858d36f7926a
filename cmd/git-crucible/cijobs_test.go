package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestCIJobs plays CI on one machine: a bare remote served by git daemon
// on 127.0.0.1, a coordinator clone that collects, and eight job clones
// that each run one task of the sample DAG (git crucible run --task
// --push), the tasks of a level in parallel processes. The branch it ends
// with has the trees, subjects and trailers (the pipeline's id aside) of
// the local `git crucible run --max-parallel 4` of the same manifest, and
// verify --range is clean. On the way: a job is killed mid-task (SIGKILL,
// its agent still asleep) and its retry, once its lease ran out (a later
// clock), takes the task over, its dead dispatch finished as interrupted
// and retried; two jobs run one task at once, one result is kept and the
// other does nothing; jobs race to push (a loser takes its append back,
// fetches and pushes again); the collector is killed after it recorded a
// level's commits and run again, no task taken twice.
func TestCIJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a task DAG through eleven clones and a git daemon")
	}
	t0 := time.Now()
	seed, _ := ciProject(t)
	want := ciLog(t, seed, "")

	// The same manifest, run here: what CI must end with.
	if out := gitCrucible(t, seed, "run", "--max-parallel", "4", sampleDAG); !strings.Contains(out, "7 tasks completed") {
		t.Fatalf("local run: %s", out)
	}
	local := ciLog(t, seed, pipelineID(t, seed))

	root := t.TempDir()
	gittest.Git(t, root, "init", "-q", "--bare", "sample.git")
	gittest.Git(t, seed, "push", "-q", filepath.Join(root, "sample.git"), want+":refs/heads/main")
	url := "git://127.0.0.1:" + serveGit(t, root) + "/sample.git"
	agents := filepath.Join(seed, ".git", "crucible", "agents.toml")
	coord := ciClone(t, url, agents)
	var jobs []string
	for range 8 {
		jobs = append(jobs, ciClone(t, url, agents))
	}

	// The collector begins the run: level 1 is ready.
	out := gitCrucible(t, coord, "run", "--collect", "--push", "origin", sampleDAG)
	if !strings.Contains(out, "level 1 has 3 task(s) ready for jobs: 1a-upper 1b-lower 1c-notes") {
		t.Fatalf("first collect: %s", out)
	}
	if got := matrix(t, coord); got != `{"task":["1a-upper","1b-lower","1c-notes"]}` {
		t.Fatalf("level 1's matrix: %s", got)
	}

	// Level 1. 1b-lower's job is killed while its agent sleeps; 1c-notes
	// is run by two jobs at once; 1a-upper by one.
	lost := 0
	var wg sync.WaitGroup
	results := make([]jobResult, 4)
	for i, task := range []string{"1a-upper", "1c-notes", "1c-notes"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runJob(t, jobs[i], task, nil)
		}()
	}
	killedDir := jobs[3]
	var killedCode int
	wg.Add(1)
	go func() {
		defer wg.Done()
		cmd := exec.Command("git-crucible", "run", "--task", "1b-lower", "--push", "origin", "--job", "doomed", sampleDAG)
		cmd.Dir = killedDir
		killedCode = gittest.RunUntil(t, cmd, remoteRecorded(t, filepath.Join(root, "sample.git"), `"type":"dispatch.start"`, "1b-lower"))
	}()
	wg.Wait()
	if killedCode != -1 {
		t.Fatalf("the job to kill exited %d", killedCode)
	}
	if results[0].Outcome != "ran" || results[0].Status != "completed" {
		t.Fatalf("1a-upper's job: %+v", results[0])
	}
	ran, other := results[1], results[2]
	if ran.Outcome != "ran" {
		ran, other = other, ran
	}
	if ran.Outcome != "ran" || other.Outcome != "held" && other.Outcome != "done" {
		t.Fatalf("two jobs of 1c-notes: %+v and %+v, want one ran and one held or done", results[1], results[2])
	}
	if got := gittest.Git(t, root, "--git-dir", "sample.git", "rev-parse", "refs/crucible/tasks/"+results[0].pipeline+"/1c-notes"); got != ran.Commit {
		t.Fatalf("1c-notes's task ref is %s, want the job that ran's %s", got, ran.Commit)
	}
	for _, r := range results[:3] {
		lost += r.Lost
	}
	// The killed job's lease holds: a retry does nothing...
	if r := runJob(t, jobs[4], "1b-lower", nil); r.Outcome != "held" || r.Holder != "doomed" {
		t.Fatalf("a retry within the lease: %+v", r)
	}
	// ... and the collector waits for it.
	if out := gitCrucible(t, coord, "run", "--collect", "--push", "origin", sampleDAG); !strings.Contains(out, "level 1 waits on jobs: 1b-lower") {
		t.Fatalf("collect with 1b-lower's job dead: %s", out)
	}
	// Once the lease ran out (a later clock), the retry takes over.
	later := []string{"GIT_COMMITTER_DATE=2026-11-22T12:00:00Z", "GIT_AUTHOR_DATE=2026-11-22T12:00:00Z"}
	if r := runJob(t, jobs[4], "1b-lower", later); r.Outcome != "ran" || r.Status != "completed" {
		t.Fatalf("the retry after the lease: %+v", r)
	}
	if out := gitCrucible(t, coord, "run", "--collect", "--push", "origin", sampleDAG); !strings.Contains(out, "level 2 has 2 task(s) ready for jobs: 2a-case 2b-docs") {
		t.Fatalf("collect of level 1: %s", out)
	}
	retried := false
	for _, e := range chainEvents(t, coord) {
		var d struct {
			TaskID      string `json:"task_id"`
			RetryOf     *int   `json:"retry_of"`
			RetryReason string `json:"retry_reason"`
		}
		if e.Type == "dispatch.start" && json.Unmarshal(e.Data, &d) == nil && d.TaskID == "1b-lower" && d.RetryOf != nil {
			retried = strings.Contains(d.RetryReason, "job doomed's lease on task 1b-lower ran out")
		}
	}
	if !retried {
		t.Error("1b-lower's second dispatch does not retry the killed job's, saying its lease ran out")
	}

	// Level 2, then the collector killed once it recorded the level's
	// commits, and run again.
	lost += runLevel(t, coord, jobs, 2)
	at := recorded(coord, `"status":"committed"`, 0)
	cmd := exec.Command("git-crucible", "run", "--collect", "--push", "origin", sampleDAG)
	cmd.Dir = coord
	if code := gittest.RunUntil(t, cmd, at); code != -1 {
		t.Logf("the collector finished (exit %d) before it was killed", code)
	}
	if out := gitCrucible(t, coord, "run", "--collect", "--push", "origin", sampleDAG); !strings.Contains(out, "level 3 has 2 task(s) ready for jobs: 3a-greet 3b-survey") {
		t.Fatalf("collect of level 2 after the kill: %s", out)
	}
	lost += runLevel(t, coord, jobs, 3)
	if out := gitCrucible(t, coord, "run", "--collect", "--push", "origin", sampleDAG); !strings.Contains(out, "7 tasks completed") {
		t.Fatalf("the last collect: %s", out)
	}
	if got := matrix(t, coord); got != `{"task":[]}` {
		t.Fatalf("the matrix once done: %s", got)
	}

	// The remote's branch is the local run's, verified.
	fresh := ciClone(t, url, agents)
	gitCrucible(t, fresh, "fetch", "origin")
	id := pipelineID(t, coord)
	if got := ciLog(t, fresh, id); got != local {
		t.Errorf("the CI run's branch:\n%s\nthe local run's:\n%s", got, local)
	}
	if out := gitCrucible(t, fresh, "verify", "--range", want+"..HEAD"); !strings.Contains(out, "6 commit(s) checked, 6 made in pipelines ("+id+"), 0 error(s)") {
		t.Errorf("verify --range: %s", out)
	}
	if lost == 0 {
		t.Error("no job lost a push race: four jobs of level 1 pushed at once")
	}
	t.Logf("CI run of the sample DAG through 8 job clones: %v, %d lost push races", time.Since(t0).Round(time.Millisecond), lost)
}

// ciProject is the sample project with the sample DAG's manifest, its
// agent playing the dag scenario with 1b-lower's implementer asleep for
// two seconds first (a job to kill mid-task), and its HEAD.
func ciProject(t *testing.T) (dir, head string) {
	t.Helper()
	scenario, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent", "scenarios", "dag"))
	if err != nil {
		t.Fatal(err)
	}
	slow := strings.Replace(string(scenario), "[implementer task=1b-lower]\n", "[implementer task=1b-lower]\nsleep 2\n", 1)
	file := filepath.Join(t.TempDir(), "dag-ci")
	if err := os.WriteFile(file, []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, _ = sampleProjectPlaying(t, file)
	addSampleDAG(t, dir)
	return dir, gittest.Git(t, dir, "rev-parse", "HEAD")
}

// ciLog is the branch of dir as the comparison sees it: each commit's
// tree, subject and trailers, the pipeline id given as PIPELINE; with id
// "", HEAD's commit id.
func ciLog(t *testing.T, dir, id string) string {
	t.Helper()
	if id == "" {
		return gittest.Git(t, dir, "rev-parse", "HEAD")
	}
	out := gittest.Git(t, dir, "log", "--format=%T %s%n%(trailers)--")
	return strings.ReplaceAll(out, id, "PIPELINE")
}

// ciClone clones url, its agents configured as agents says.
func ciClone(t *testing.T, url, agents string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, filepath.Dir(dir), "clone", "-q", url, dir)
	b, err := os.ReadFile(agents)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "crucible"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "crucible", "agents.toml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveGit serves the repositories under dir with git daemon on
// 127.0.0.1 (pushes allowed) until the test ends, and returns its port.
func serveGit(t *testing.T, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--base-path="+dir, "--listen=127.0.0.1", "--port="+port, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatal("git daemon does not listen")
		}
	}
}

// jobResult is run --task --json's output.
type jobResult struct {
	Outcome  string `json:"outcome"`
	Status   string `json:"status"`
	Commit   string `json:"commit"`
	Ref      string `json:"ref"`
	Holder   string `json:"holder"`
	Pushes   int    `json:"pushes"`
	Lost     int    `json:"lost_races"`
	pipeline string
}

// runJob runs task as a CI job in clone dir, env added, and returns its
// result.
func runJob(t *testing.T, dir, task string, env []string) jobResult {
	t.Helper()
	cmd := exec.Command("git-crucible", "run", "--task", task, "--push", "origin", "--json", sampleDAG)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("job %s: %v\n%s%s", task, err, stdout.String(), stderr.String())
		return jobResult{}
	}
	var r jobResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Errorf("job %s: %v\n%s", task, err, stdout.String())
	}
	r.pipeline = strings.TrimSuffix(strings.TrimPrefix(r.Ref, "refs/crucible/tasks/"), "/"+task)
	return r
}

// matrix is run --matrix --format github in dir.
func matrix(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(gitCrucible(t, dir, "run", "--matrix", "--format", "github", sampleDAG))
}

// runLevel runs the matrix's tasks, each in its own job clone at once,
// checks that each ran, and returns the push races they lost.
func runLevel(t *testing.T, coord string, jobs []string, level int) int {
	t.Helper()
	var m struct {
		Level int `json:"level"`
		Tasks []struct {
			ID string `json:"id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(gitCrucible(t, coord, "run", "--matrix", sampleDAG)), &m); err != nil {
		t.Fatal(err)
	}
	if m.Level != level || len(m.Tasks) == 0 {
		t.Fatalf("the matrix is level %d, %d tasks; want level %d", m.Level, len(m.Tasks), level)
	}
	results := make([]jobResult, len(m.Tasks))
	var wg sync.WaitGroup
	for i, task := range m.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runJob(t, jobs[i], task.ID, nil)
		}()
	}
	wg.Wait()
	lost := 0
	for i, r := range results {
		if r.Outcome != "ran" || r.Status != "completed" {
			t.Fatalf("job of %s: %+v", m.Tasks[i].ID, r)
		}
		lost += r.Lost
	}
	return lost
}

// remoteRecorded fires once the bare repository's pipeline chain holds an
// event whose line holds want and task.
func remoteRecorded(t *testing.T, bare, want, task string) <-chan time.Time {
	fire := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			out, err := exec.Command("git", "--git-dir", bare, "log", "-p", "--format=", "--glob=refs/crucible/pipelines/*", "--", "events.jsonl").Output()
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "+{") && strings.Contains(l, want) && strings.Contains(l, fmt.Sprintf("%q", task)) {
					fire <- time.Now()
					return
				}
			}
		}
	}()
	return fire
}
