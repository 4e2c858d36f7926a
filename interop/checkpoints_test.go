package interop

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const checkpointsTable = `# Checkpoints

| Hash | Timestamp | Reason | Source |
|------|-----------|--------|--------|
| a1b2c3d4 | 2026-04-13T15:00:00Z | pre-design-gate | build |
| 0f9e8d7c | 2026-04-13T15:20:00Z | pre-plan-gate | build |
| 1234567 | 2026-04-13T16:00:00Z | pre-wave-2 | build |
| c818f16d0f3a2b1e4c5d6e7f8091a2b3c4d5e6f7 | 2026-04-13T17:00:00Z | pre-restore-safety | replay |
`

func TestParseCheckpoints(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		rows     []CheckpointRow
		problems []*CheckpointError
	}{
		{
			name: "table",
			in:   checkpointsTable,
			rows: []CheckpointRow{
				{"a1b2c3d4", "2026-04-13T15:00:00Z", "pre-design-gate", "build"},
				{"0f9e8d7c", "2026-04-13T15:20:00Z", "pre-plan-gate", "build"},
				{"1234567", "2026-04-13T16:00:00Z", "pre-wave-2", "build"},
				{"c818f16d0f3a2b1e4c5d6e7f8091a2b3c4d5e6f7", "2026-04-13T17:00:00Z", "pre-restore-safety", "replay"},
			},
		},
		{
			name: "rows only, CRLF, no closing pipe, indentation, empty cells, file order kept",
			in:   "| bbbbbbbb | t2 | pre-wave-1 | build\r\n   |aaaaaaaa|t1|pre-siege|siege|\r\n| cccccccc |  |  | |\r\n",
			rows: []CheckpointRow{
				{"bbbbbbbb", "t2", "pre-wave-1", "build"},
				{"aaaaaaaa", "t1", "pre-siege", "siege"},
				{"cccccccc", "", "", ""},
			},
		},
		{
			name: "header spellings and aligned separators skipped",
			in: "| hash | when | why | who |\n| :--- | :---: | ---: | - |\n| dddddddd | t | r | s |\n" +
				"| Commit | Time | Reason | Skill |\n|---|---|---|---|\n| eeeeeeee | t | r | s |\n",
			rows: []CheckpointRow{{"dddddddd", "t", "r", "s"}, {"eeeeeeee", "t", "r", "s"}},
		},
		{
			name: "problems",
			in: "| Hash | Timestamp | Reason | Source |\n|---|---|---|---|\n" +
				"| a1b2c3d4 | t | r |\n" + // 3
				"| a1b2c3d4 | t | r | s | extra |\n" + // 4
				"| A1B2C3D4 | t | r | s |\n" + // 5
				"| a1b2c3 | t | r | s |\n" + // 6
				"| a1b2c3d4g | t | r | s |\n" + // 7
				"| " + strings.Repeat("a", 41) + " | t | r | s |\n" + // 8
				"|  | t | r | s |\n" + // 9
				"|\n" + // 10
				"| ffffffff | t | r | s |\n" + // 11
				"not a row | a | b | c | d |\n", // 12
			rows: []CheckpointRow{{"ffffffff", "t", "r", "s"}},
			problems: []*CheckpointError{
				{3, "want 4 cells, found 3"},
				{4, "want 4 cells, found 5"},
				{5, `invalid hash "A1B2C3D4": want 7 to 40 lowercase hex digits`},
				{6, `invalid hash "a1b2c3": want 7 to 40 lowercase hex digits`},
				{7, `invalid hash "a1b2c3d4g": want 7 to 40 lowercase hex digits`},
				{8, `invalid hash "` + strings.Repeat("a", 41) + `": want 7 to 40 lowercase hex digits`},
				{9, `invalid hash "": want 7 to 40 lowercase hex digits`},
				{10, "want 4 cells, found 1"},
			},
		},
		{name: "empty", in: ""},
		{name: "prose only", in: "# Checkpoints\n\nNone yet.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, problems := ParseCheckpoints([]byte(tt.in))
			if !reflect.DeepEqual(rows, tt.rows) {
				t.Errorf("rows:\n got %+v\nwant %+v", rows, tt.rows)
			}
			if !reflect.DeepEqual(problems, tt.problems) {
				t.Errorf("problems:\n got %v\nwant %v", problems, tt.problems)
			}
		})
	}
}

func TestCheckpointErrorString(t *testing.T) {
	var err error = &CheckpointError{Line: 3, Msg: "want 4 cells, found 3"}
	var ce *CheckpointError
	if !errors.As(err, &ce) || err.Error() != "line 3: want 4 cells, found 3" {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestRenderCheckpoints(t *testing.T) {
	rows := []CheckpointRow{
		{"a1b2c3d4", "2026-04-13T15:00:00Z", "pre-design-gate", "build"},
		{"1234567", "", "pre-qg-fix-round-3", "quality-gate"},
	}
	want := "| Hash | Timestamp | Reason | Source |\n|------|-----------|--------|--------|\n" +
		"| a1b2c3d4 | 2026-04-13T15:00:00Z | pre-design-gate | build |\n" +
		"| 1234567 |  | pre-qg-fix-round-3 | quality-gate |\n"
	out := RenderCheckpoints(rows)
	if string(out) != want {
		t.Errorf("RenderCheckpoints\n got %q\nwant %q", out, want)
	}
	got, problems := ParseCheckpoints(out)
	if problems != nil || !reflect.DeepEqual(got, rows) {
		t.Errorf("ParseCheckpoints(RenderCheckpoints()) = %+v, %v", got, problems)
	}
	if got := string(RenderCheckpoints(nil)); got != "| Hash | Timestamp | Reason | Source |\n|------|-----------|--------|--------|\n" {
		t.Errorf("RenderCheckpoints(nil) = %q", got)
	}
	rows, _ = ParseCheckpoints([]byte(checkpointsTable))
	if got := string(RenderCheckpoints(rows)); got != strings.TrimPrefix(checkpointsTable, "# Checkpoints\n\n") {
		t.Errorf("re-export:\n%s", got)
	}
}

func FuzzParseCheckpoints(f *testing.F) {
	f.Add([]byte(checkpointsTable))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, problems := ParseCheckpoints(data)
		nlines := strings.Count(string(data), "\n") + 1
		if len(rows)+len(problems) > nlines {
			t.Fatalf("%d rows and %d problems from %d lines", len(rows), len(problems), nlines)
		}
		prev := 0
		for _, p := range problems {
			if p.Line <= prev || p.Line > nlines || p.Msg == "" {
				t.Fatalf("bad problem %v after line %d", p, prev)
			}
			prev = p.Line
		}
		for _, r := range rows {
			if !checkpointHash(r.Hash) {
				t.Fatalf("bad hash accepted: %q", r.Hash)
			}
		}
		out := RenderCheckpoints(rows)
		rows2, problems2 := ParseCheckpoints(out)
		if problems2 != nil || !reflect.DeepEqual(rows, rows2) {
			t.Fatalf("round trip differs:\n got %+v %v\nwant %+v\ninput %q\nrendered %q", rows2, problems2, rows, data, out)
		}
		if again := RenderCheckpoints(rows2); string(again) != string(out) {
			t.Fatalf("render not stable")
		}
	})
}
