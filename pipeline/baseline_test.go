package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// TestBaselineChecked: Apply takes a known-failing baseline only with a
// command that failed and failures of one line each.
func TestBaselineChecked(t *testing.T) {
	for _, c := range []struct {
		name string
		data BaselineData
		want string // "" for accepted
	}{
		{"failures", BaselineData{Command: "go test ./...", Exit: 1, Failing: []string{"--- FAIL: TestA", "FAIL example.com/a"}}, ""},
		{"none named", BaselineData{Command: "make check", Exit: 2}, ""},
		{"no command", BaselineData{Command: " ", Exit: 1}, "no command"},
		{"passed", BaselineData{Command: "make check"}, "no known-failing baseline"},
		{"two lines", BaselineData{Command: "make check", Exit: 1, Failing: []string{"FAIL: a\nFAIL: b"}}, "not one line"},
		{"empty", BaselineData{Command: "make check", Exit: 1, Failing: []string{""}}, "not one line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := started(t)
			_, err := st.Apply(ev(t, st, TypeBaseline, c.data))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestBaselineView: status's view keeps the baseline and the steps done
// against it, each once; the recent events say so.
func TestBaselineView(t *testing.T) {
	st := started(t)
	for _, e := range []struct {
		typ  string
		data any
	}{
		{TypeBaseline, BaselineData{Command: "sh test/all.sh", Exit: 1, Failing: []string{"FAIL: legacy"}}},
		{TypeStep, StepData{Phase: ledger.Completion, Step: "acceptance-green", Status: StepDone, Result: "exit 0"}},
		{TypeStep, StepData{Phase: ledger.Completion, Step: "test-suite", Status: StepDone, Baseline: true}},
		{TypeStep, StepData{Phase: ledger.Execute, Step: "check", Task: "2", Status: StepDone, Baseline: true}},
		{TypeStep, StepData{Phase: ledger.Completion, Step: "test-suite", Status: StepDone, Baseline: true}},
	} {
		if _, err := st.Apply(ev(t, st, e.typ, e.data)); err != nil {
			t.Fatal(err)
		}
	}
	b := st.View.Baseline
	if b == nil || b.Command != "sh test/all.sh" || b.Failing != 1 || !slices.Equal(b.Steps, []string{"test-suite", "check of task 2"}) {
		t.Fatalf("view's baseline = %+v", b)
	}
	var recent []string
	for _, r := range st.View.Recent {
		recent = append(recent, r.Text)
	}
	want := []string{"step test-suite done against the known-failing baseline", "step check of task 2 done against the known-failing baseline",
		"step test-suite done against the known-failing baseline", "step acceptance-green done", "known-failing baseline: sh test/all.sh (exit 1, 1 failure)"}
	if !slices.Equal(recent, want) {
		t.Errorf("recent events:\n%q\nwant\n%q", recent, want)
	}
}
