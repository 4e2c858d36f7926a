package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/report"
)

func TestFromPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tasks   []report.PlanTask
		levels  [][]string
		wantErr string
	}{
		{"independent tasks share a level",
			[]report.PlanTask{{ID: "1", Files: []string{"a"}}, {ID: "2", DependsOn: []string{"1"}, Files: []string{"b"}}, {ID: "3", Files: []string{"c"}}},
			[][]string{{"1", "3"}, {"2"}}, ""},
		{"a chain is one task a level",
			[]report.PlanTask{{ID: "1"}, {ID: "2", DependsOn: []string{"1"}}},
			[][]string{{"1"}, {"2"}}, ""},
		{"tasks of one level naming one file are refused",
			[]report.PlanTask{{ID: "1", Files: []string{"a"}, Line: 3}, {ID: "2", Files: []string{"./a"}, Line: 7}},
			nil, `line 7: tasks "1" and "2" (line 3) of level 1 both name a and neither depends on the other`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := FromPlan("the goal", "implementer", 2, tc.tasks)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Levels(); !reflect.DeepEqual(got, tc.levels) {
				t.Errorf("levels %v, want %v", got, tc.levels)
			}
			if got := m.Ready(); !reflect.DeepEqual(got, tc.levels[0]) {
				t.Errorf("ready %v, want the first level %v", got, tc.levels[0])
			}
			if m.MaxParallel != 2 || m.Goal != "the goal" || m.Tasks[0].Agent != "implementer" {
				t.Errorf("manifest %+v: want max-parallel 2, the goal and agent implementer", m)
			}
		})
	}
}
