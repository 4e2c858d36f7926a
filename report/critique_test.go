package report

import (
	"reflect"
	"testing"
)

func TestParseCritique(t *testing.T) {
	for _, tc := range []struct {
		file      string
		want      Critique
		needsWork []string
		wantErr   string
	}{
		{file: "critique.yaml", want: Critique{Tasks: []string{"1a-task", "1b-task"}, Verdict: NeedsWork,
			Issues: []Issue{
				{Task: "1b-task", Severity: Blocking, File: "src/routes/users/create.ts", Description: "Error handler swallows the original error message", Line: 5},
				{Task: "1a-task", Severity: Nit, Description: "a long line", Line: 9}},
			NewTests: []NewTest{{Task: "1b-task", File: "src/tests/create.spec.ts", Line: 17}},
			Notes:    "Overall approach is sound.\n"}, needsWork: []string{"1b-task"}},
		{file: "critique-accepted.yaml", want: Critique{Tasks: []string{"1a-task"}, Verdict: Accepted,
			Issues: []Issue{{Task: "1a-task", Severity: Warning, Description: "the test could name its case", Line: 4}}}},

		{file: "critique-contradiction.yaml", wantErr: "report: line 2: verdict accepted with a blocking issue (task 1a-task): a blocking issue makes its task needs-work"},
		{file: "critique-no-blocking.yaml", wantErr: "report: line 1: verdict needs-work with no blocking issue: only a blocking issue makes a task needs-work"},
		{file: "critique-unknown-task.yaml", wantErr: `report: line 4: issue of task "9z-task", which tasks does not list`},
		{file: "critique-severity.yaml", wantErr: `report: line 3: issues: severity: want blocking, warning or nit, found "fatal"`},
		{file: "findings.yaml", wantErr: "report: line 2: no verdict: a critique says accepted or needs-work"},
		{file: "task-garbage.yaml", wantErr: "report: line 1: did not find expected ',' or ']'"},
		{file: "task-alias-bomb.yaml", wantErr: "report: line 2: YAML aliases are not accepted in a report (*a)"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ParseCritique(readTestdata(t, tc.file))
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n  %#v\nwant\n  %#v", got, tc.want)
			}
			if nw := got.NeedsWork(); !reflect.DeepEqual(nw, tc.needsWork) {
				t.Fatalf("needs work %q, want %q", nw, tc.needsWork)
			}
		})
	}
}

func TestParseCritiqueInline(t *testing.T) {
	for _, tc := range []struct{ name, in, wantErr string }{
		{"bad verdict", "verdict: maybe", `report: line 1: verdict: want accepted or needs-work, found "maybe"`},
		{"issues not a list", "verdict: accepted\nissues: 3", `report: line 2: issues: want a list of issues, found "3"`},
		{"scalar issue", "verdict: accepted\nissues: [x]", `report: line 2: issues: want issues (a mapping), found "x"`},
		{"no task id", "verdict: accepted\nissues:\n  - severity: nit\n    description: d", "report: line 3: issues: an issue without its task-id"},
		{"no description", "verdict: accepted\nissues:\n  - {task-id: a, severity: nit}", "report: line 3: issues: an issue without a description"},
		{"new test without file", "verdict: accepted\nnew-tests: [{task-id: a}]", "report: line 2: new-tests: an entry needs a task-id and a file"},
		{"new test of another task", "tasks: [a]\nverdict: accepted\nnew-tests: [{task-id: b, file: t}]", `report: line 3: new test t of task "b", which tasks does not list`},
		{"upper case", "verdict: Needs-Work\nissues: [{task-id: a, severity: BLOCKING, description: d}]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCritique([]byte(tc.in))
			checkErr(t, err, tc.wantErr)
		})
	}
}
