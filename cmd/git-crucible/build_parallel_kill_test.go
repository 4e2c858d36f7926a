package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestKilledParallelBuildResumes kills git-crucible build --max-parallel 2
// of the parallel scenario (tasks 1 and 3 at once, then 2) with SIGKILL
// at points spread over its walk, then lets a last resume finish. The
// four phases close, git and the chain are sound, every dispatch finished
// once, each task is committed once, and no task's implementer is
// dispatched again once the task's commit is recorded.
func TestKilledParallelBuildResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real builds for several seconds")
	}
	const kills = 20
	clean, _ := sampleProjectPlaying(t, "parallel")
	t0 := time.Now()
	if code, out := runBuild(t, clean, time.Minute, "--yes", "--max-parallel", "2", killGoal); code != 0 {
		t.Fatalf("a clean build failed: %s", out)
	}
	walk := time.Since(t0)
	events := chainLength(t, clean)

	dir, _ := sampleProjectPlaying(t, "parallel")
	killed := killSpread(t, dir, kills, walk, events, func() []string {
		if pipelineID(t, dir) == "" {
			return []string{"build", "--yes", "--max-parallel", "2", killGoal}
		}
		return []string{"build", "--resume", "--yes", "--max-parallel", "2"}
	}, nil)
	if code, out := runBuild(t, dir, time.Minute, "--resume", "--yes", "--max-parallel", "2"); code != 0 || !strings.Contains(out, ": the four phases are closed\n") {
		t.Fatalf("the last resume exited %d:\n%s", code, out)
	}
	if v := gitCrucible(t, dir, "verify"); !strings.Contains(v, "ok "+pipelineID(t, dir)) {
		t.Errorf("verify: %s", v)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if st := gittest.Git(t, dir, append([]string{"status", "--porcelain", "--"}, notUserFiles()...)...); st != "" {
		t.Errorf("the work tree is not the branch's:\n%s", st)
	}
	assertUserFiles(t, dir)
	starts, finishes := dispatches(t, dir)
	for seq, s := range starts {
		if n := finishes[seq]; len(n) != 1 {
			t.Errorf("dispatch %d (%s) has %d finishes", seq, s.Role, len(n))
		}
	}
	count := map[string]int{}
	for _, l := range strings.Fields(gittest.Git(t, dir, "log", "--format=%(trailers:key=Crucible-Task,valueonly)")) {
		count[l]++
	}
	if count["1"] != 1 || count["2"] != 1 || count["3"] != 1 || len(count) != 3 {
		t.Errorf("task commits by Crucible-Task: %v, want one each of 1, 2 and 3", count)
	}
	assertPhasesCommittedOnce(t, dir)
	var log []struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(gitCrucible(t, dir, "log", "--json")), &log); err != nil {
		t.Fatal(err)
	}
	committed, again := map[string]bool{}, 0
	implementers := map[string]int{}
	for _, e := range slices.Backward(log) { // git crucible log is newest first
		switch e.Type {
		case pipeline.TypeDAGTask:
			var d pipeline.DAGTaskData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Status == "committed" {
				committed[d.Task] = true
			}
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Step != "implement" {
				continue
			}
			if committed[d.TaskID] {
				t.Errorf("task %s's implementer was dispatched again (dispatch %d) after its commit was recorded", d.TaskID, d.Seq)
			}
			if implementers[d.TaskID]++; implementers[d.TaskID] > 1 {
				again++
			}
		}
	}
	t.Logf("%d kills over a %v walk of %d events; %d dispatches; %d implementers dispatched again after a kill left them running",
		killed, walk, events, len(starts), again)
}
