package report

import (
	"reflect"
	"testing"
)

func TestParseFindings(t *testing.T) {
	for _, tc := range []struct {
		file    string
		want    Findings
		wantErr string
	}{
		{file: "findings.yaml", want: Findings{
			Fatal: []Finding{{Title: "The parser accepts a negative length", File: "report/yaml.go:40",
				Detail: "A length of -1 slips past the check and indexes before the buffer.\n", Line: 4}},
			Significant: []Finding{
				{Title: "No test covers an empty plan", File: "report/plan_test.go", Line: 9},
				{Title: "Error lines are off by one for flow mappings", Detail: "the node's line is the opening brace, not the key", Line: 11}},
			Minor: []Finding{{Title: "Typo in the package comment", Line: 14}},
		}},
		{file: "findings-clean.yaml", want: Findings{Fatal: []Finding{}, Significant: []Finding{},
			Minor: []Finding{{Title: "Consider naming the constant", Line: 5}}}},
		{file: "findings-empty.yaml"},
		{file: "findings-reviewer.yaml", want: Findings{
			Fatal:         []Finding{{Title: "Data race on the counter", File: "worker.go:88", Line: 4}},
			Significant:   []Finding{{Title: "Error is swallowed", File: "worker.go:120", Line: 7}},
			Minor:         []Finding{},
			Architectural: []Finding{}}},

		{file: "findings-missing.yaml", wantErr: "report: line 1: no findings: a review round's report lists them (fatal, significant, minor), empty lists when clean"},
		{file: "findings-counts.yaml", wantErr: `report: line 2: fatal: want a list of findings, found "0"`},
		{file: "findings-untitled.yaml", wantErr: "report: line 3: significant: a finding with neither title nor detail"},
		{file: "task-garbage.yaml", wantErr: "report: line 1: did not find expected ',' or ']'"},
		{file: "task-alias-bomb.yaml", wantErr: "report: line 2: YAML aliases are not accepted in a report (*a)"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ParseFindings(readTestdata(t, tc.file))
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n  %#v\nwant\n  %#v", got, tc.want)
			}
		})
	}
}

func TestParseFindingsInline(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Findings
		wantErr  string
	}{
		{name: "null findings is no round", in: "findings:\n", wantErr: "report: line 1: findings: nothing under it: a clean round says so with empty lists (fatal: [], significant: [], minor: [])"},
		{name: "empty mapping is a clean round", in: "findings: {}\n"},
		{name: "null list", in: "findings:\n  fatal:\n", want: Findings{}},
		{name: "only details", in: "findings:\n  minor:\n    - detail: spacing\n", want: Findings{Minor: []Finding{{Detail: "spacing", Line: 3}}}},
		{name: "findings list", in: "findings: [a]\n", wantErr: "report: line 1: findings: want a mapping of fatal, significant and minor lists, found a list"},
		{name: "critical and fatal both", in: "findings:\n  fatal: []\n  critical: [x]\n", wantErr: "report: line 3: findings: a second fatal list (first on line 2)"},
		{name: "null item", in: "findings:\n  fatal:\n    -\n", wantErr: "report: line 3: fatal: want a finding (title, file, detail), found nothing"},
		{name: "list item", in: "findings:\n  fatal:\n    - [a]\n", wantErr: "report: line 3: fatal: want a finding (title, file, detail), found a list"},
		{name: "title mapping", in: "findings:\n  fatal:\n    - title: {a: b}\n", wantErr: "report: line 3: title: want a string, found a mapping"},
		{name: "architectural concerns", in: "findings:\n  fatal: []\n  architectural:\n    - title: a second store\n      detail: the design keeps state twice\n",
			want: Findings{Fatal: []Finding{}, Architectural: []Finding{{Title: "a second store", Detail: "the design keeps state twice", Line: 4}}}},
		{name: "architectural concerns, crucible's words", in: "findings:\n  Architectural-Concerns: [one owner]\n",
			want: Findings{Architectural: []Finding{{Title: "one owner", Line: 2}}}},
		{name: "unknown severity refused", in: "findings:\n  blocker: [x]\n  Minor: [y]\n", wantErr: `report: line 2: findings: unknown severity "blocker": a round's findings are fatal, significant, minor or architectural (critical and important count as fatal and significant)`},
		{name: "unknown severity, empty, ignored", in: "findings:\n  blocker: []\n  nits:\n  Minor: [y]\n", want: Findings{Minor: []Finding{{Title: "y", Line: 4}}}},
		{name: "duplicate finding key", in: "findings:\n  fatal:\n    - {title: a, title: b}\n", wantErr: `report: line 3: duplicate key "title" (first on line 3)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFindings([]byte(tc.in))
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n  %#v\nwant\n  %#v", got, tc.want)
			}
		})
	}
}
