package interop

import (
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
