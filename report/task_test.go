package report

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkErr fails t unless err is an *Error reading want exactly ("" for no error).
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("error %T %v, want *Error %q", err, err, want)
	}
	if err.Error() != want {
		t.Fatalf("error\n  %s\nwant\n  %s", err, want)
	}
}

func TestParseTask(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    Task
		wantErr string
	}{
		{file: "task-completed.yaml", want: Task{
			Status:        Completed,
			FilesModified: []string{"src/routes/users/list.ts", "src/routes/users/create.ts"},
			Verification: Verification{Level: "automated", EvidenceFiles: []string{"verification.log", "test-results.json"},
				Result: "all tests passed (15/15), build successful"},
			Deviations: []Deviation{{Type: "files_not_in_plan",
				Description:   "Also modified src/utils/validation.ts to add shared validation helper",
				Severity:      "minor",
				Justification: "Both routes needed the same email validation logic", Line: 13}},
			Exports: map[string]any{"handler-pattern": "defineHandler", "breaking-changes": false, "retries": 2,
				"touched": []any{"list", "create"}},
			Notes: "Migrated both routes. The create route had a custom error\nhandler that was refactored into the middleware chain.\n",
		}},
		{file: "task-failed.yaml", want: Task{Status: Failed, FilesModified: []string{},
			Verification: Verification{Result: "go test ./... fails: TestParse (expected 3, got 2)"},
			Error:        "The acceptance test needs a network service this sandbox does not have.\n"}},
		{file: "task-minimal.yaml", want: Task{Status: Completed, Deviations: []Deviation{}}},
		{file: "task-lenient.yaml", want: Task{Status: Completed, FilesModified: []string{"README.md"},
			Deviations: []Deviation{{Description: "wrote the helper in util.go, not in the planned parse.go", Line: 5}},
			Exports:    map[string]any{}}},

		{file: "task-no-status.yaml", wantErr: "report: line 1: no status: the report must say completed or failed"},
		{file: "task-no-deviations.yaml", wantErr: `report: line 1: no deviations: a completed report lists them ("deviations: []" when there were none)`},
		{file: "task-bad-status.yaml", wantErr: `report: line 2: status: want completed or failed, found "done"`},
		{file: "task-duplicate-status.yaml", wantErr: `report: line 3: duplicate key "status" (first on line 1)`},
		{file: "task-files-mapping.yaml", wantErr: "report: line 4: files-modified: want a list of strings, found a mapping"},
		{file: "task-exports-list.yaml", wantErr: "report: line 4: exports: want a mapping, found a list"},
		{file: "task-alias-bomb.yaml", wantErr: "report: line 2: YAML aliases are not accepted in a report (*a)"},
		{file: "task-garbage.yaml", wantErr: "report: line 1: did not find expected ',' or ']'"},
		{file: "task-list.yaml", wantErr: "report: line 1: want a mapping of keys, found a list"},
		{file: "task-empty.yaml", wantErr: "report: empty report"},
		{file: "task-comment.yaml", wantErr: "report: empty report"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ParseTask(readTestdata(t, tc.file))
			checkErr(t, err, tc.wantErr)
			got.exports = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n  %#v\nwant\n  %#v", got, tc.want)
			}
		})
	}
}

func TestParseTaskInline(t *testing.T) {
	for _, tc := range []struct{ name, in, wantErr string }{
		{"null status", "status:\ndeviations: []\n", "report: line 1: status: want completed or failed, found nothing"},
		{"status list", "status: [completed]\n", "report: line 1: status: want a string, found a list"},
		{"capitalised status", "status: Completed\n", `report: line 1: status: want completed or failed, found "Completed"`},
		{"deviations scalar", "status: completed\ndeviations: none\n", `report: line 2: deviations: want a list, found "none"`},
		{"deviation list in list", "status: completed\ndeviations:\n  - [a]\n", "report: line 3: deviations: want a deviation, found a list"},
		{"verification list", "status: completed\ndeviations: []\nverification-summary: [a]\n", "report: line 3: verification-summary: want a string, found a list"},
		{"evidence mapping", "status: completed\ndeviations: []\nverification-summary:\n  evidence-files: {a: b}\n", "report: line 4: evidence-files: want a list of strings, found a mapping"},
		{"null file", "status: completed\ndeviations: []\nfiles-modified: [a.go, ~]\n", "report: line 3: files-modified: want a list of strings, found nothing in it"},
		{"exports complex key", "status: completed\ndeviations: []\nexports:\n  deep:\n    ? [a]\n    : b\n", "report: line 5: want a string key, found a list"},
		{"failed without deviations", "status: failed\nerror: boom\n", ""},
		{"anchor without alias", "status: &s completed\ndeviations: []\n", ""},
		{"merge key refused", "base: &b {x: 1}\nstatus: completed\ndeviations: []\nexports:\n  <<: *b\n", "report: line 5: YAML aliases are not accepted in a report (*b)"},
		{"second document ignored", "status: completed\ndeviations: []\n---\nstatus: nonsense\n", ""},
		{"unknown keys", "status: completed\ndeviations: []\nthoughts: {long: [1, 2]}\n7: seven\n? [complex]\n: key\n", ""},
		{"tab indentation", "status: completed\n\tdeviations: []\n", "report: line 2: found a tab character that violates indentation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTask([]byte(tc.in))
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestParseTaskSizeLimit(t *testing.T) {
	head := "status: completed\ndeviations: []\nnotes: "
	fits := head + strings.Repeat("x", MaxSize-len(head))
	if _, err := ParseTask([]byte(fits)); err != nil {
		t.Fatalf("a report of exactly MaxSize bytes: %v", err)
	}
	_, err := ParseTask([]byte(fits + "x"))
	checkErr(t, err, "report: 1048577 bytes, over the 1048576-byte limit")
}

func TestAliasBombRefused(t *testing.T) {
	// Nine levels of nine aliases would expand to 9^9 strings.
	in := "a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 9; i++ {
		p := "*a" + string(rune('0'+i-1))
		in += "a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat(p+", ", 8) + p + "]\n"
	}
	in += "status: completed\ndeviations: []\nexports: {x: *a8}\n"
	_, err := ParseTask([]byte(in))
	checkErr(t, err, "report: line 2: YAML aliases are not accepted in a report (*a0)")
}
