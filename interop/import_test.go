package interop

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

func TestRunSpan(t *testing.T) {
	dur := 300
	stamp := "2026-04-13T15:20:00Z"
	sent := map[int]string{1: "2026-04-13T14:40:00Z", 2: "2026-04-13T15:10:00Z"}
	lines := []ManifestLine{
		{Seq: 1, Status: "dispatched"},
		{Seq: 2, Status: "completed", DurationS: &dur}, // finished 15:15
	}
	gates := &ledger.Ledger{Run: "2026-04-13T14:00:00Z"}
	gates.Phases[0].Gate = "2026-04-13T16:00:00Z"
	active := Active{StartTime: "2026-04-13T13:55:00Z"}
	for _, tc := range []struct {
		name                 string
		gates                *ledger.Ledger
		active               Active
		lines                []ManifestLine
		sent                 map[int]string
		started, first, last string
	}{
		{"the ledger's Run first", gates, active, lines, sent,
			"2026-04-13T14:00:00Z", "2026-04-13T14:00:00Z", "2026-04-13T15:15:00Z"},
		{"then .pipeline-active", nil, active, lines, sent,
			"2026-04-13T13:55:00Z", "2026-04-13T13:55:00Z", "2026-04-13T15:15:00Z"},
		{"then the first dispatch sent", nil, Active{}, lines, sent,
			"2026-04-13T14:40:00Z", "2026-04-13T14:40:00Z", "2026-04-13T15:15:00Z"},
		{"a line's own timestamp counts, a final one's as its end", nil, Active{},
			[]ManifestLine{{Seq: 3, Status: "completed", Timestamp: &stamp, DurationS: &dur}}, nil,
			"", "2026-04-13T15:20:00Z", "2026-04-13T15:20:00Z"},
		{"no dispatch time: the last gate ends it", gates, Active{}, nil, nil,
			"2026-04-13T14:00:00Z", "2026-04-13T14:00:00Z", "2026-04-13T16:00:00Z"},
		{"nothing says", nil, Active{StartTime: "soon"}, lines, nil, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, first, last := runSpan(tc.gates, tc.active, nil, tc.lines, tc.sent)
			if started != tc.started || first != tc.first || last != tc.last {
				t.Fatalf("runSpan = %q, %q, %q; want %q, %q, %q", started, first, last, tc.started, tc.first, tc.last)
			}
		})
	}
}

// TestInferUnverified: import takes a ledger's PASS as verified only with a
// PASS marker of the ledger's pipeline and phase; the others are INFERRED.
func TestInferUnverified(t *testing.T) {
	const id = "build-20260413-140000"
	pass := func(p ledger.Phase) Marker { return Marker{Verdict: "PASS", Phase: p, PipelineID: id} }
	tests := []struct {
		name    string
		status  [4]ledger.Status
		markers []Marker
		want    []ledger.Phase
	}{
		{"no PASS", [4]ledger.Status{ledger.Skipped, ledger.InProgress, ledger.NotStarted, ledger.NotStarted}, nil, []ledger.Phase{}},
		{"each PASS with its marker", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.Complete, ledger.Pass},
			[]Marker{pass(ledger.Design), pass(ledger.Plan), pass(ledger.Completion)}, []ledger.Phase{}},
		{"no marker at all", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.Complete, ledger.InProgress}, nil,
			[]ledger.Phase{ledger.Design, ledger.Plan}},
		{"another pipeline's, another phase's, a FAIL", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.InProgress, ledger.NotStarted},
			[]Marker{{Verdict: "PASS", Phase: ledger.Design, PipelineID: "build-other"}, pass(ledger.Completion),
				{Verdict: "FAIL", Phase: ledger.Plan, PipelineID: id}},
			[]ledger.Phase{ledger.Design, ledger.Plan}},
		{"a Phase 3 PASS", [4]ledger.Status{ledger.Pass, ledger.Pass, ledger.Pass, ledger.NotStarted},
			[]Marker{pass(ledger.Design), pass(ledger.Plan)}, []ledger.Phase{ledger.Execute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ledger.Ledger{PipelineID: id}
			for i, s := range tt.status {
				l.Phases[i] = ledger.Entry{Status: s, Gate: "2026-04-13T14:30:00"}
			}
			markers := map[string]Marker{}
			for i, m := range tt.markers {
				markers[fmt.Sprintf("gate-verdict-%d.md", i)] = m
			}
			got := inferUnverified(&l, markers)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("inferred %v, want %v", got, tt.want)
			}
			for i, s := range tt.status {
				e, p := l.Phases[i], ledger.Phase(i+1)
				want := ledger.Entry{Status: s, Gate: "2026-04-13T14:30:00"}
				if slices.Contains(tt.want, p) {
					want.Status, want.Reason = ledger.Inferred, InferredReason
				}
				if e != want {
					t.Errorf("phase %d: %+v, want %+v", p, e, want)
				}
			}
		})
	}
}
