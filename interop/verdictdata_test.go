package interop

import (
	"errors"
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

func TestMarkerVerdictData(t *testing.T) {
	m := Marker{Verdict: "FAIL", Phase: ledger.Plan, PipelineID: "p1", Rounds: 3, FinalScore: 7,
		Fields: []Field{{Key: "Verdict", Value: "FAIL"}, {Key: "X", Value: "y"}}}
	got, err := m.VerdictData("p1", ledger.Plan)
	want := pipeline.VerdictData{Phase: ledger.Plan, Verdict: "FAIL", PipelineID: "p1", Rounds: 3, Score: 7,
		Marker: []pipeline.MarkerField{{Key: "Verdict", Value: "FAIL"}, {Key: "X", Value: "y"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, c := range []struct {
		id   string
		p    ledger.Phase
		want string
	}{
		{"p2", ledger.Plan, "is for pipeline p1, not p2"},
		{"p1", ledger.Design, "is for phase plan (2), not 1"},
	} {
		_, err := m.VerdictData(c.id, c.p)
		var mm *MarkerMismatchError
		if !errors.As(err, &mm) || err.Error() != c.want {
			t.Errorf("%s %d: %v, want %q", c.id, c.p, err, c.want)
		}
	}
}
