package report

import (
	"reflect"
	"strings"
	"testing"
)

func ids(tasks []PlanTask) string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.ID)
	}
	return strings.Join(out, " ")
}

func TestParsePlan(t *testing.T) {
	p, err := ParsePlan(readTestdata(t, "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []PlanTask{
		{ID: "3", Title: "Wire the greeting into main", DependsOn: []string{"1", "2"}, Files: []string{"main.go"}, FastGate: "go build ./...", Line: 11},
		{ID: "1", Title: "Add the Greeting type", Files: []string{"greet/greet.go", "greet/greet_test.go"}, FastGate: "go test ./greet", Line: 16},
		{ID: "2", Title: "Read the name from the environment", DependsOn: []string{"1"}, Files: []string{"greet/env.go"}, Line: 21},
		{ID: "4", Title: "Document the greeting", Files: []string{"README.md"}, Line: 26},
	}
	if got := p.Tasks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("tasks\n  %#v\nwant\n  %#v", got, want)
	}
	if got := ids(p.Order()); got != "1 2 3 4" {
		t.Fatalf("order %q, want %q", got, "1 2 3 4")
	}
	// The plan hands out copies: changing one changes nothing in the plan.
	p.Order()[0].DependsOn = append(p.Order()[0].DependsOn, "x")
	p.Tasks()[0].Files[0] = "changed"
	if got := p.Tasks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("plan changed through a returned slice: %#v", got)
	}
}

func TestParsePlanErrors(t *testing.T) {
	for _, tc := range []struct{ file, wantErr string }{
		{"plan-cycle.yaml", "report: line 7: dependency cycle: parse -> emit -> check -> parse (each depends on the next)"},
		{"plan-self.yaml", "report: line 5: dependency cycle: a1-loop -> a1-loop (each depends on the next)"},
		{"plan-unknown.yaml", `report: line 7: task "2" depends on "7", which the plan does not have`},
		{"plan-duplicate.yaml", `report: line 9: duplicate task id "1" (first on line 5)`},
		{"plan-no-title.yaml", `report: line 7: task "2" has no title`},
		{"plan-bad-id.yaml", `report: line 5: task 1: id "../escape" starts with '.'`},
		{"plan-no-tasks.yaml", "report: line 4: no exports.tasks: the plan writer lists its tasks there"},
		{"plan-empty.yaml", "report: line 4: tasks: the plan has no task"},
		{"task-minimal.yaml", "report: no exports.tasks: the plan writer lists its tasks there"},
		{"task-no-status.yaml", "report: line 1: no status: the report must say completed or failed"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p, err := ParsePlan(readTestdata(t, tc.file))
			checkErr(t, err, tc.wantErr)
			if len(p.Tasks()) != 0 {
				t.Fatalf("tasks with an error: %v", p.Tasks())
			}
		})
	}
}

func TestParsePlanInline(t *testing.T) {
	const head = "status: completed\ndeviations: []\nexports:\n  tasks:\n"
	for _, tc := range []struct{ name, tasks, wantErr string }{
		{"tasks mapping", "    a: b\n", "report: line 5: tasks: want a list of tasks, found a mapping"},
		{"task scalar", "    - do it\n", `report: line 5: tasks: want a task (id, title, depends-on, files, fast-gate), found "do it"`},
		{"no id", "    - title: x\n", "report: line 5: task 1: no id"},
		{"numeric id", "    - id: 7\n      title: x\n", ""},
		{"space in id", "    - {id: a b, title: x}\n", `report: line 5: task 1: id "a b" has a character other than letters, digits, '-', '_' and '.'`},
		{"dash id", "    - {id: -x, title: x}\n", `report: line 5: task 1: id "-x" starts with '-'`},
		{"long id", "    - {id: " + strings.Repeat("a", 65) + ", title: x}\n", "report: line 5: task 1: id longer than 64 bytes"},
		{"blank title", "    - {id: a, title: '  '}\n", `report: line 5: task "a" has no title`},
		{"title list", "    - {id: a, title: [x]}\n", "report: line 5: title: want a string, found a list"},
		{"fast-gate list", "    - {id: a, title: x, fast-gate: [go, test]}\n", "report: line 5: fast-gate: want a string, found a list"},
		{"duplicate dependency", "    - {id: a, title: x}\n    - {id: b, title: y, depends-on: [a, a]}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePlan([]byte(head + tc.tasks))
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestPlanOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks string // "id:dep,dep id ..." in listed order
		want  string
	}{
		{"one", "a", "a"},
		{"already ordered stays", "a b:a c:b d", "a b c d"},
		{"independent keep listed order", "d c b a", "d c b a"},
		{"dependency listed later", "b:a a", "a b"},
		{"ready ties by listed order", "c:a b a d:b", "b a c d"},
		{"diamond", "d:b,c b:a c:a a", "a b c d"},
		{"a late root unblocks early tasks", "x:z y:z w z", "w z x y"},
		{"chain listed backwards", "e:d d:c c:b b:a a", "a b c d e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(planOf(tc.tasks))
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Order()); got != tc.want {
				t.Fatalf("order %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlanCycles(t *testing.T) {
	for _, tc := range []struct{ tasks, want string }{
		{"a:b b:a", "dependency cycle: a -> b -> a"},
		{"r a:r,c b:a c:b", "dependency cycle: a -> c -> b -> a"},
		// The cycle is reported, not the task merely waiting on it.
		{"w:x x:y y:x", "dependency cycle: x -> y -> x"},
		{"a:a b", "dependency cycle: a -> a"},
	} {
		t.Run(tc.tasks, func(t *testing.T) {
			_, err := NewPlan(planOf(tc.tasks))
			checkErr(t, err, "report: "+tc.want+" (each depends on the next)")
		})
	}
}

// planOf builds tasks from "id:dep,dep id ...".
func planOf(spec string) []PlanTask {
	var tasks []PlanTask
	for _, word := range strings.Fields(spec) {
		id, deps, _ := strings.Cut(word, ":")
		t := PlanTask{ID: id, Title: "task " + id}
		if deps != "" {
			t.DependsOn = strings.Split(deps, ",")
		}
		tasks = append(tasks, t)
	}
	return tasks
}

// TestPlanAt: a task list under another export's name, and its errors
// naming that export.
func TestPlanAt(t *testing.T) {
	const report = "status: completed\ndeviations: []\nexports:\n  tasks: [{id: t, title: not this one}]\n  work:\n"
	for _, tc := range []struct{ name, key, work, wantIDs, wantErr string }{
		{"its own list", "work", "    - {id: a, title: x}\n    - {id: b, title: y, depends-on: [a]}\n", "a b", ""},
		{"no such export", "steps", "    - {id: a, title: x}\n", "", "report: line 4: no exports.steps: the plan writer lists its tasks there"},
		{"not a list", "work", "    a: b\n", "", "report: line 6: work: want a list of tasks, found a mapping"},
		{"not a task", "work", "    - do it\n", "", `report: line 6: work: want a task (id, title, depends-on, files, fast-gate), found "do it"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task, err := ParseTask([]byte(report + tc.work))
			if err != nil {
				t.Fatal(err)
			}
			p, err := task.PlanAt(tc.key)
			checkErr(t, err, tc.wantErr)
			if got := ids(p.Order()); got != tc.wantIDs {
				t.Fatalf("tasks %q, want %q", got, tc.wantIDs)
			}
		})
	}
}
