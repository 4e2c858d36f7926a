package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// The task DAG's events (git crucible run, and build's parallel Phase 3):
// what a resumed run starts from. The manifest file a user keeps is only a
// view of them.
const (
	TypeDAGRun   = "dag.run"   // the run began, or its status changed
	TypeDAGTask  = "dag.task"  // a task's status changed
	TypeDAGLevel = "dag.level" // a level's commits were made (or remade by an amendment round)
)

// DAGTaskStatuses are the statuses a dag.task event may carry: the
// dispatch seed's.
var DAGTaskStatuses = []string{"pending", "dispatched", "committed", "completed", "failed", "fixing"}

// DAGRunStatuses are the statuses a dag.run event may carry.
var DAGRunStatuses = []string{"in-progress", "completed", "failed", "escalated"}

// DAGRunData is the payload of dag.run.
type DAGRunData struct {
	Status   string `json:"status"`
	Manifest string `json:"manifest,omitempty"` // the manifest file, from the work tree's top
	Branch   string `json:"branch,omitempty"`   // the branch the run commits on
	Backup   string `json:"backup,omitempty"`   // the backup branch, made once, before the first level moves the branch
	// Start is the branch's commit the run began at, where a backup
	// branch the run made points: the run deletes that backup when it
	// completes (the commit is then on the branch), and a resume remakes
	// it there when it is gone.
	Start       string `json:"start,omitempty"`
	MaxParallel int    `json:"max_parallel,omitempty"`
	Tasks       int    `json:"tasks,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// DAGTaskData is the payload of dag.task.
type DAGTaskData struct {
	Task     string `json:"task"`
	Status   string `json:"status"`
	Level    int    `json:"level,omitempty"`
	Commit   string `json:"commit,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Source   string `json:"source,omitempty"`   // while fixing: critique or verification
	Round    int    `json:"round,omitempty"`    // the amendment round
	Worktree string `json:"worktree,omitempty"` // while dispatched: where its agent works
	Fix      string `json:"fix,omitempty"`      // while fixing: the commit holding its fix, once made
	// Job is the CI job (git crucible run --task) that holds a dispatched
	// task: its lease lasts until Lease (RFC 3339), when another job may
	// take the task over. Its result is a dispatched event of the same
	// job with Commit, the task commit on its task ref.
	Job   string `json:"job,omitempty"`
	Lease string `json:"lease,omitempty"`
}

// DAGLevelData is the payload of dag.level: the level's commits go from
// Boundary (the commit before its first) to Head.
type DAGLevelData struct {
	Level    int    `json:"level"`
	Boundary string `json:"boundary"`
	Head     string `json:"head"`
	Round    int    `json:"round,omitempty"` // 0 first made, n rebuilt by amendment round n
}

func (d *DAGRunData) check() error {
	if !slices.Contains(DAGRunStatuses, d.Status) {
		return fmt.Errorf("dag run: invalid status %q", d.Status)
	}
	if d.MaxParallel < 0 || d.Tasks < 0 {
		return fmt.Errorf("dag run: negative count")
	}
	return nil
}

func (d *DAGTaskData) check() error {
	switch {
	case CheckName("task", d.Task) != nil:
		return CheckName("task", d.Task)
	case !slices.Contains(DAGTaskStatuses, d.Status):
		return fmt.Errorf("task %s: invalid status %q", d.Task, d.Status)
	case d.Level < 0 || d.Round < 0:
		return fmt.Errorf("task %s: negative level or round", d.Task)
	case d.Status == "fixing" && (d.Source != "critique" && d.Source != "verification" || d.Round < 1):
		// The resume re-enters the round from them.
		return fmt.Errorf("task %s: fixing needs its source (critique or verification) and its amendment round", d.Task)
	case d.Job != "" && (d.Status != "dispatched" || CheckName("job", d.Job) != nil):
		return fmt.Errorf("task %s: a job holds a dispatched task, by a name (%q)", d.Task, d.Job)
	case d.Lease != "" && (d.Job == "" || !validTime(d.Lease)):
		return fmt.Errorf("task %s: a lease is a job's, until a time (RFC 3339): %q", d.Task, d.Lease)
	case d.Status == "committed" && d.Commit == "" && d.Reason == "":
		// A task that changed nothing is committed without a commit; it says so.
		return fmt.Errorf("task %s: committed without a commit or a reason", d.Task)
	}
	return nil
}

func validTime(t string) bool {
	_, err := time.Parse(time.RFC3339, t)
	return err == nil
}

func (d *DAGLevelData) check() error {
	if d.Level < 1 || d.Round < 0 || d.Boundary == "" || d.Head == "" {
		return fmt.Errorf("dag level %d: needs a level from 1, a boundary and a head", d.Level)
	}
	return nil
}

func (d *DAGRunData) describe() string {
	if d.Reason != "" {
		return fmt.Sprintf("task run %s: %s", d.Status, LedgerGoal(d.Reason))
	}
	return "task run " + d.Status
}

func (d *DAGTaskData) describe() string {
	s := fmt.Sprintf("task %s %s", d.Task, d.Status)
	if d.Commit != "" {
		s += " " + short(d.Commit)
	}
	switch {
	case d.Status == "fixing" && d.Fix != "":
		s += fmt.Sprintf(" (%s, round %d): fixed in %s", d.Source, d.Round, short(d.Fix))
	case d.Status == "fixing":
		s += fmt.Sprintf(" (%s, round %d)", d.Source, d.Round)
	}
	return s
}

func (d *DAGLevelData) describe() string {
	if d.Round > 0 {
		return fmt.Sprintf("level %d rebuilt (round %d) %s..%s", d.Level, d.Round, short(d.Boundary), short(d.Head))
	}
	return fmt.Sprintf("level %d committed %s..%s", d.Level, short(d.Boundary), short(d.Head))
}

// DAGView is status's picture of a task run. Running is bounded by the
// run's max-parallel; Statuses has a short entry per task.
type DAGView struct {
	Status   string            `json:"status"`
	Level    int               `json:"level,omitempty"` // the newest level dispatched
	Backup   string            `json:"backup,omitempty"`
	Manifest string            `json:"manifest,omitempty"` // the manifest file, from the work tree's top
	Tasks    int               `json:"tasks,omitempty"`
	Statuses map[string]string `json:"statuses,omitempty"` // by task
	Running  []RunningTask     `json:"running,omitempty"`  // in the order dispatched
}

// RunningTask is a task whose agent is at work.
type RunningTask struct {
	Task     string `json:"task"`
	Worktree string `json:"worktree,omitempty"`
}

// Counts is the number of tasks in each status.
func (d *DAGView) Counts() map[string]int {
	n := map[string]int{}
	for _, st := range d.Statuses {
		n[st]++
	}
	return n
}

// observeDAG keeps v.DAG up to date; it copies what it changes, as the
// view's other parts do, so that an earlier state is left as it was.
func (v *View) observeDAG(p any) {
	var d DAGView
	if v.DAG != nil {
		d = *v.DAG
	}
	switch x := p.(type) {
	case *DAGRunData:
		d.Status = x.Status
		if x.Backup != "" {
			d.Backup = x.Backup
		}
		if x.Manifest != "" {
			d.Manifest = x.Manifest
		}
		if x.Tasks > 0 {
			d.Tasks = x.Tasks
		}
	case *DAGTaskData:
		statuses := make(map[string]string, len(d.Statuses)+1)
		maps.Copy(statuses, d.Statuses)
		statuses[x.Task] = x.Status
		d.Statuses = statuses
		d.Running = slices.DeleteFunc(slices.Clone(d.Running), func(r RunningTask) bool { return r.Task == x.Task })
		if x.Status == "dispatched" || x.Status == "fixing" {
			d.Running = append(d.Running, RunningTask{Task: x.Task, Worktree: x.Worktree})
			d.Level = max(d.Level, x.Level)
		}
	}
	v.DAG = &d
}
