package pipeline

import (
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// TestStepAndRetryChecked: Apply refuses a step event or a retry that
// replay could not pair with the walk.
func TestStepAndRetryChecked(t *testing.T) {
	one := 1
	seven := 7
	for _, c := range []struct {
		name string
		typ  string
		data any
		want string // "" for accepted
	}{
		{"step done", TypeStep, StepData{Phase: ledger.Design, Step: "design-gate", Round: 2, Status: StepDone, Result: "PASS"}, ""},
		{"bad status", TypeStep, StepData{Phase: ledger.Design, Step: "design", Status: "finished"}, `invalid status "finished"`},
		{"bad phase", TypeStep, StepData{Phase: 5, Step: "design", Status: StepDone}, "invalid phase 5"},
		{"bad step", TypeStep, StepData{Phase: ledger.Design, Step: "../x", Status: StepDone}, "invalid step"},
		{"bad round", TypeStep, StepData{Phase: ledger.Design, Step: "g", Round: -1, Status: StepDone}, "invalid round -1"},
		{"retry of a finished one", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", RetryOf: &one}, ""},
		{"retry of an unknown one", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", RetryOf: &seven}, "retries dispatch 7"},
		{"retry reason, no retry", TypeDispatchStart, DispatchStart{Seq: 2, Role: "r", Phase: 1, Template: "t", RetryReason: "gone"}, "has a retry reason but retries no dispatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := started(t)
			for _, e := range []struct {
				typ  string
				data any
			}{{TypeDispatchStart, DispatchStart{Seq: 1, Role: "r", Phase: 1, Template: "t"}}, {TypeDispatchFinish, DispatchFinish{Seq: 1, Status: "error"}}} {
				if _, err := st.Apply(ev(t, st, e.typ, e.data)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := st.Apply(ev(t, st, c.typ, c.data))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
