package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/taskdag/record"
)

// A level's tasks go through the task engine's Dispatch at once, each agent in its own
// worktree: every dispatch is recorded and finished in the chain, with
// distinct seqs, and each task's tree holds its own file only.
func TestTaskDispatcher(t *testing.T) {
	e := newEngine(t, shAgent(`pwd > "$CRUCIBLE_TASK.txt"
if [ "$CRUCIBLE_TASK" = bad ]; then exit 3; fi
printf 'status: completed\nfiles-modified: [%s.txt]\ndeviations: []\n' "$CRUCIBLE_TASK" > "$CRUCIBLE_OUTPUT"`))
	repo := e.Service.Repo
	base := gittest.Git(t, ".", "rev-parse", "HEAD")
	runner := taskdag.New(repo, 2, e.TaskEngine().TaskDispatcher(record.Call{Point: pipeline.Point{Step: "run"}, Role: "implementer", Template: "task"}, nil, func(j taskdag.Job, report string) (record.Prompt, error) {
		if j.Task.ID == "noprompt" {
			return record.Prompt{}, errors.New("the task prompt: no such key")
		}
		return record.Prompt{Text: []byte("Do task " + j.Task.ID + ". Report at " + report + ".\n")}, nil
	}, nil))
	var jobs []taskdag.Job
	for _, id := range []string{"a", "b", "bad", "noprompt"} {
		jobs = append(jobs, taskdag.Job{Task: manifest.Task{ID: id, Files: []string{id + ".txt"}}})
	}
	res, err := runner.RunLevel(context.Background(), base, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res[:2] {
		if !r.Passed {
			t.Fatalf("task %s: %s", r.ID, r.Reason)
		}
		dir := gittest.Git(t, ".", "show", r.Tree+":"+r.ID+".txt")
		if !strings.HasPrefix(dir, filepath.Join(repo.WorkTree, ".crucible", "slots", "slot-")) {
			t.Fatalf("task %s ran in %s", r.ID, dir)
		}
	}
	if res[2].Passed || !strings.HasPrefix(res[2].Reason, "dispatch ") || !strings.Contains(res[2].Reason, " failed: ") {
		t.Fatalf("bad: %+v", res[2])
	}
	// A prompt that does not render fails its task, and no agent is dispatched with it.
	if res[3].Passed || res[3].Reason != "the task prompt: no such key" {
		t.Fatalf("noprompt: %+v", res[3])
	}
	st, _, err := e.Service.Load(context.Background(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Dispatch.Last != 3 || st.Dispatch.Finished != 3 || len(st.Dispatch.InFlight) != 0 {
		t.Fatalf("dispatches %+v", st.Dispatch)
	}
	// Each start records the template its prompt came from.
	events, err := e.events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		var d pipeline.DispatchStart
		if ev.Type == pipeline.TypeDispatchStart {
			if err := pipeline.DecodeData(ev, &d); err != nil || d.Template != "task" || d.Role != "implementer" {
				t.Fatalf("dispatch %d: template %q, role %q (%v)", d.Seq, d.Template, d.Role, err)
			}
		}
	}
	// The engine's own work tree is untouched.
	if _, err := os.Stat("a.txt"); !os.IsNotExist(err) {
		t.Fatalf("a.txt in the engine's work tree: %v", err)
	}
}
