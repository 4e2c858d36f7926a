package main

import (
	"strings"
	"testing"

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
	soak := killBuild(t, "parallel", 20, "--max-parallel", "2")
	dir := soak.dir
	if st := gittest.Git(t, dir, append([]string{"status", "--porcelain", "--"}, notUserFiles()...)...); st != "" {
		t.Errorf("the work tree is not the branch's:\n%s", st)
	}
	assertUserFiles(t, dir)
	count := map[string]int{}
	for _, l := range strings.Fields(gittest.Git(t, dir, "log", "--format=%(trailers:key=Crucible-Task,valueonly)")) {
		count[l]++
	}
	if count["1"] != 1 || count["2"] != 1 || count["3"] != 1 || len(count) != 3 {
		t.Errorf("task commits by Crucible-Task: %v, want one each of 1, 2 and 3", count)
	}
	assertPhasesCommittedOnce(t, dir)
	committed, again := map[string]bool{}, 0
	implementers := map[string]int{}
	for _, e := range chainEvents(t, dir) {
		switch e.Type {
		case pipeline.TypeDAGTask:
			var d pipeline.DAGTaskData
			decode(t, e.Data, &d)
			if d.Status == "committed" {
				committed[d.Task] = true
			}
		case pipeline.TypeDispatchStart:
			var d pipeline.DispatchStart
			decode(t, e.Data, &d)
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
		soak.killed, soak.walk, soak.events, len(soak.starts), again)
}
