package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/build"
	"github.com/git-crucible/git-crucible/dag"
)

// matrixFormats are run --matrix's --format values.
var matrixFormats = []string{"github", "gitlab", "json"}

// matrixPlan is the next level of a task run: run --matrix's output.
type matrixPlan struct {
	Pipeline string       `json:"pipeline"` // "" when the branch has no open pipeline: nothing ran yet
	Done     bool         `json:"done"`     // every task completed: nothing left to run
	Level    int          `json:"level"`    // the level the tasks are of, from 1; 0 when done
	Levels   int          `json:"levels"`
	Tasks    []matrixTask `json:"tasks"` // the level's tasks not completed, in manifest order
	Blocked  []string     `json:"blocked"`
}

type matrixTask struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// nextLevel is where m's task run stands in the chain's pipeline id ("":
// none yet): the lowest level with a task not completed, and its tasks
// that a job runs: pending ones, those dispatched (a job that died: a
// job for it again finds the dispatch) and failed ones. Pending tasks of
// the level whose dependencies are not completed are blocked, listed
// apart; committed and fixing ones wait for the level's critique.
func nextLevel(s *session, c *cli.Context, id string, m *dag.Manifest) (matrixPlan, error) {
	p := matrixPlan{Pipeline: id, Levels: len(m.Levels()), Tasks: []matrixTask{}, Blocked: []string{}}
	if id != "" {
		events, err := s.svc.ChainEvents(c.Context, id)
		if err != nil {
			return p, err
		}
		if err := build.TaskRunState(events, m); err != nil {
			return p, err
		}
	} else {
		m.ClearState()
	}
	ready := map[string]bool{}
	for _, t := range m.Ready() {
		ready[t] = true
	}
	for i, level := range m.Levels() {
		for _, tid := range level {
			t := m.Task(tid)
			switch {
			case t.Status == dag.Completed:
				continue
			case t.Status == dag.Pending && !ready[tid]:
				p.Blocked = append(p.Blocked, tid)
			case t.Status == dag.Pending || t.Status == dag.Dispatched || t.Status == dag.Failed:
				p.Tasks = append(p.Tasks, matrixTask{ID: tid, Status: string(t.Status)})
			}
			// Committed and fixing tasks are the level's critique's and
			// amendments', not a job's: the level stays the next one.
			p.Level = i + 1
		}
		if p.Level != 0 {
			return p, nil
		}
	}
	p.Done = true
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
