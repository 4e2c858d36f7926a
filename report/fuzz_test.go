package report

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// checkFuzzErr fails unless err is an *Error of the documented form.
func checkFuzzErr(t *testing.T, err error) {
	t.Helper()
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("error %T %v, want *Error", err, err)
	}
	if re.Line < 0 || !strings.HasPrefix(err.Error(), "report: ") {
		t.Fatalf("malformed error %q", err)
	}
}

func FuzzParseTask(f *testing.F) {
	for _, name := range []string{"task-completed.yaml", "task-failed.yaml", "task-lenient.yaml", "task-alias-bomb.yaml", "task-garbage.yaml"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := ParseTask(data)
		if err != nil {
			checkFuzzErr(t, err)
			if !reflect.DeepEqual(task, Task{}) {
				t.Fatalf("a task with error %v: %#v", err, task)
			}
			return
		}
		if task.Status != Completed && task.Status != Failed {
			t.Fatalf("status %q accepted", task.Status)
		}
	})
}

func FuzzParsePlan(f *testing.F) {
	for _, name := range []string{"plan.yaml", "plan-cycle.yaml", "plan-unknown.yaml", "plan-duplicate.yaml"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan(data)
		if err != nil {
			checkFuzzErr(t, err)
			if len(p.Tasks()) != 0 {
				t.Fatalf("tasks with error %v", err)
			}
			return
		}
		order := p.Order()
		if len(order) == 0 || len(order) != len(p.Tasks()) {
			t.Fatalf("order of %d tasks for a plan of %d", len(order), len(p.Tasks()))
		}
		done := map[string]bool{}
		for _, task := range order {
			if badID(task.ID) != "" || strings.TrimSpace(task.Title) == "" || done[task.ID] {
				t.Fatalf("invalid or repeated task accepted: %#v", task)
			}
			for _, d := range task.DependsOn {
				if !done[d] {
					t.Fatalf("task %q ordered before its dependency %q", task.ID, d)
				}
			}
			done[task.ID] = true
		}
	})
}

func FuzzParseFindings(f *testing.F) {
	for _, name := range []string{"findings.yaml", "findings-clean.yaml", "findings-reviewer.yaml", "findings-counts.yaml"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := ParseFindings(data)
		if err != nil {
			checkFuzzErr(t, err)
			if !reflect.DeepEqual(fs, Findings{}) {
				t.Fatalf("findings with error %v: %#v", err, fs)
			}
			return
		}
		for _, list := range [][]Finding{fs.Fatal, fs.Significant, fs.Minor} {
			for _, x := range list {
				if strings.TrimSpace(x.Title) == "" && strings.TrimSpace(x.Detail) == "" {
					t.Fatalf("empty finding accepted: %#v", x)
				}
			}
		}
	})
}

func FuzzParseCritique(f *testing.F) {
	for _, name := range []string{"critique.yaml", "critique-accepted.yaml", "critique-contradiction.yaml", "critique-unknown-task.yaml", "task-alias-bomb.yaml"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCritique(data)
		if err != nil {
			checkFuzzErr(t, err)
			if !reflect.DeepEqual(c, Critique{}) {
				t.Fatalf("a critique with error %v: %#v", err, c)
			}
			return
		}
		if (c.Verdict == NeedsWork) != (len(c.NeedsWork()) > 0) || c.Verdict != Accepted && c.Verdict != NeedsWork {
			t.Fatalf("verdict %q with blocking tasks %q accepted", c.Verdict, c.NeedsWork())
		}
		for _, is := range c.Issues {
			if strings.TrimSpace(is.Task) == "" || strings.TrimSpace(is.Description) == "" {
				t.Fatalf("empty issue accepted: %#v", is)
			}
		}
	})
}
