package replay

import (
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func TestOutlookOf(t *testing.T) {
	state := func(status string, last int, inFlight []string, entries ...ledger.Entry) *pipeline.State {
		st := &pipeline.State{Status: status, Gates: ledger.New("p", "r", "g", "feature")}
		copy(st.Gates.Ledger.Phases[:], entries)
		st.Dispatch.Last = last
		if len(inFlight) > 0 {
			st.Dispatch.InFlight = map[string]pipeline.InFlight{}
			for _, s := range inFlight {
				st.Dispatch.InFlight[s] = pipeline.InFlight{}
			}
		}
		return st
	}
	pass, complete := ledger.Entry{Status: ledger.Pass}, ledger.Entry{Status: ledger.Complete}
	inProgress, notStarted := ledger.Entry{Status: ledger.InProgress}, ledger.Entry{Status: ledger.NotStarted}
	for _, c := range []struct {
		name string
		st   *pipeline.State
		want *Outlook
	}{
		{"never dispatched", state(pipeline.StatusOpen, 0, nil), nil},
		{"abandoned", state(pipeline.StatusAbandoned, 3, nil, inProgress), nil},
		{"finished", state(pipeline.StatusOpen, 9, nil, pass, pass, complete, pass), nil},
		{"crashed in phase 3", state(pipeline.StatusOpen, 11, []string{"11", "9"}, pass, pass, inProgress, notStarted),
			&Outlook{Phase: ledger.Execute, InFlight: []int{9, 11}}},
		{"phase 3 done, phase 4 not begun", state(pipeline.StatusOpen, 11, nil, pass, pass, complete, notStarted),
			&Outlook{Phase: ledger.Completion, InFlight: []int{}}},
		{"an acknowledged skip is closed", state(pipeline.StatusOpen, 2, nil, ledger.Entry{Status: ledger.Skipped, Acknowledged: true}, ledger.Entry{Status: ledger.Fail}),
			&Outlook{Phase: ledger.Plan, InFlight: []int{}}},
		{"an unacknowledged one is not", state(pipeline.StatusOpen, 2, nil, ledger.Entry{Status: ledger.Skipped}),
			&Outlook{Phase: ledger.Design, InFlight: []int{}}},
	} {
		if got := OutlookOf(c.st); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: OutlookOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}
