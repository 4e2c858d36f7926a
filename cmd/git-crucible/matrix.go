package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/taskdag/record"
)

// matrixFormats are run --matrix's --format values.
var matrixFormats = []string{"github", "gitlab", "json"}

// matrixPlan is the next level of a task run: run --matrix's output.
type matrixPlan struct {
	Pipeline string       `json:"pipeline"` // "" when the branch has no open pipeline: nothing ran yet
	Done     bool         `json:"done"`     // every task completed: nothing left to run
	Level    int          `json:"level"`    // the level the tasks are of, from 1; 0 when there is none
	Levels   int          `json:"levels"`
	Tasks    []matrixTask `json:"tasks"`   // the level's tasks a job runs, in manifest order
	Failed   []string     `json:"failed"`  // tasks that failed: no job runs them again
	Blocked  []string     `json:"blocked"` // pending tasks waiting on one that failed (or on one of them)
}

type matrixTask struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// nextLevel is where m's task run stands in the chain's pipeline id ("":
// none yet). The tasks a job runs are the ready ones (pending, every
// dependency completed) and those dispatched (a job at work, or one that
// died: a job for it again takes over once its lease expired), of the
// lowest level that has one. None while the collector has a level's tasks
// (committed, fixing), or when nothing is left but failed tasks and those
// they block.
func nextLevel(s *session, c *cli.Context, id string, m *manifest.Manifest) (matrixPlan, error) {
	p := matrixPlan{Pipeline: id, Levels: len(m.Levels()), Tasks: []matrixTask{}, Failed: []string{}, Blocked: []string{}}
	if id != "" {
		events, err := s.svc.ChainEvents(c.Context, id)
		if err != nil {
			return p, err
		}
		if err := record.TaskRunState(events, m); err != nil {
			return p, err
		}
	} else {
		m.ClearState()
	}
	runnable := map[string]bool{}
	for _, t := range m.Ready() {
		runnable[t] = true
	}
	// Blocked: waiting, directly or not, on a failed task.
	blocked := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, t := range m.Tasks {
			if t.Status != manifest.Pending || blocked[t.ID] {
				continue
			}
			for _, d := range t.DependsOn {
				if m.Task(d).Status == manifest.Failed || blocked[d] {
					blocked[t.ID], changed = true, true
					break
				}
			}
		}
	}
	p.Done = true
	for _, t := range m.Tasks {
		switch {
		case t.Status == manifest.Dispatched:
			runnable[t.ID] = true
		case t.Status == manifest.Failed:
			p.Failed = append(p.Failed, t.ID)
		case t.Status == manifest.Pending && blocked[t.ID]:
			p.Blocked = append(p.Blocked, t.ID)
		}
		if t.Status != manifest.Completed {
			p.Done = false
		}
		if runnable[t.ID] && (p.Level == 0 || m.Level(t.ID) < p.Level) {
			p.Level = m.Level(t.ID)
		}
	}
	for _, t := range m.Tasks {
		if runnable[t.ID] && m.Level(t.ID) == p.Level {
			p.Tasks = append(p.Tasks, matrixTask{ID: t.ID, Status: string(t.Status)})
		}
	}
	return p, nil
}

// printMatrix prints p as format says: github, a JSON object for
// strategy.matrix (fromJSON) on one line; gitlab, a child pipeline's jobs
// (parallel:matrix extending the hidden job .crucible-task); json, p.
func printMatrix(s *session, p matrixPlan, format string) error {
	ids := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		ids[i] = t.ID
	}
	switch format {
	case "github":
		b, err := json.Marshal(map[string][]string{"task": ids})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.out(), "%s\n", b)
		return err
	case "gitlab":
		var b strings.Builder
		fmt.Fprintf(&b, "# git crucible run --matrix: ")
		switch {
		case p.Done:
			b.WriteString("every task completed\n")
		case p.Level == 0:
			b.WriteString("no task to run now\n")
		default:
			fmt.Fprintf(&b, "level %d of %d\n", p.Level, p.Levels)
		}
		if len(ids) == 0 {
			// A child pipeline needs a job: one that says there is none.
			b.WriteString("crucible-none:\n  script: [\"echo no task to run\"]\n")
		} else {
			quoted := make([]string, len(ids))
			for i, id := range ids {
				quoted[i] = strconv.Quote(id)
			}
			fmt.Fprintf(&b, "crucible-task:\n  extends: .crucible-task\n  parallel:\n    matrix:\n      - TASK: [%s]\n", strings.Join(quoted, ", "))
		}
		_, err := fmt.Fprint(s.out(), b.String())
		return err
	default:
		return s.printJSON(p)
	}
}
