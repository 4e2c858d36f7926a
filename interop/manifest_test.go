package interop

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mfInt(v int) *int       { return &v }
func mfStr(s string) *string { return &s }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

const manifestFixture = "dispatch-manifest-example.jsonl"

func TestParseManifestFixture(t *testing.T) {
	data := readFixture(t, manifestFixture)
	lines, problems := ParseManifest(data)
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	raw := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(raw) || len(lines) != 4 {
		t.Fatalf("%d lines parsed, file has %d", len(lines), len(raw))
	}
	for i, l := range lines {
		if got := string(l.Render()); got != raw[i] {
			t.Errorf("line %d: Render()\n got %s\nwant %s", i+1, got, raw[i])
		}
	}
	want := []ManifestLine{
		{Seq: 1, File: "1-plan-writer.md", Role: "plan-writer", Phase: "2", Status: "completed",
			DurationS: mfInt(83), Summary: mfStr("Plan written: 8 tasks, 3 waves")},
		{Seq: 2, File: "2-plan-reviewer.md", Role: "plan-reviewer", Phase: "2", Status: "completed",
			DurationS: mfInt(45), Summary: mfStr("2 issues found: dependency gap, missing edge case")},
		{Seq: 3, File: "3-build-implementer.md", Role: "implementer", Phase: "3", Task: mfInt(1), Status: "completed",
			DurationS: mfInt(120), Summary: mfStr("Auth middleware implemented, 4 tests green")},
		{Seq: 4, File: "4-build-reviewer.md", Role: "reviewer", Phase: "3", Task: mfInt(1), Status: "dispatched"},
	}
	for i := range want {
		want[i].Raw = []byte(raw[i])
		if !reflect.DeepEqual(lines[i], want[i]) {
			t.Errorf("line %d:\n got %+v\nwant %+v", i+1, lines[i], want[i])
		}
	}
	if got := Latest(lines); !reflect.DeepEqual(got, lines) {
		t.Errorf("Latest changed distinct seqs: %+v", got)
	}
}

func TestParseManifestValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ManifestLine
	}{
		{
			name: "all fields",
			in: `{"seq":7,"file":"7-build-implementer.md","role":"implementer","phase":"3","task":2,"status":"failed",` +
				`"duration_s":12,"summary":"tests <red> & \"flaky\"","input_chars":1000,"output_chars":250,"model_tier":"sonnet",` +
				`"tool_calls":9,"replay_of":3,"replay_session":"abc","mutation":"a.md -> b.md","timestamp":"2026-04-13T15:00:00Z","template":"build-implementer"}`,
			want: ManifestLine{Seq: 7, File: "7-build-implementer.md", Role: "implementer", Phase: "3", Task: mfInt(2), Status: "failed",
				DurationS: mfInt(12), Summary: mfStr(`tests <red> & "flaky"`), InputChars: mfInt(1000), OutputChars: mfInt(250),
				ModelTier: mfStr("sonnet"), ToolCalls: mfInt(9), ReplayOf: mfInt(3), ReplaySession: mfStr("abc"),
				Mutation: mfStr("a.md -> b.md"), Timestamp: mfStr("2026-04-13T15:00:00Z"), Template: mfStr("build-implementer")},
		},
		{
			name: "minimal",
			in:   `{"seq":1,"status":"skipped","role":"r"}`,
			want: ManifestLine{Seq: 1, Status: "skipped", Role: "r"},
		},
		{
			name: "nulls everywhere",
			in: `{"seq":2,"file":null,"role":"r","phase":null,"task":null,"status":"error","duration_s":null,"summary":null,` +
				`"input_chars":null,"output_chars":null,"model_tier":null,"tool_calls":null,"replay_of":null,` +
				`"replay_session":null,"mutation":null,"timestamp":null,"template":null}`,
			want: ManifestLine{Seq: 2, Role: "r", Status: "error"},
		},
		{
			name: "numeric phase kept as its text",
			in:   `{"seq":3,"role":"r","phase":4,"status":"completed"}`,
			want: ManifestLine{Seq: 3, Role: "r", Phase: "4", Status: "completed"},
		},
		{
			name: "unknown keys, spacing, key order",
			in:   ` { "status" : "dispatched", "extra": {"a": [1, 2]}, "role": "r", "seq": 10, "Seq": "ignored" } `,
			want: ManifestLine{Seq: 10, Role: "r", Status: "dispatched"},
		},
		{
			name: "CRLF: the carriage return stays in Raw",
			in:   "{\"seq\":1,\"role\":\"r\",\"status\":\"completed\"}\r",
			want: ManifestLine{Seq: 1, Role: "r", Status: "completed"},
		},
		{
			name: "escapes decoded",
			in:   `{"seq":1,"role":"r\u00e9","status":"completed","summary":"a\nb\u2028"}`,
			want: ManifestLine{Seq: 1, Role: "ré", Status: "completed", Summary: mfStr("a\nb\u2028")},
		},
		{
			name: "duplicate key: last wins",
			in:   `{"seq":1,"seq":2,"role":"r","status":"completed"}`,
			want: ManifestLine{Seq: 2, Role: "r", Status: "completed"},
		},
		{
			name: "zero and negative counts are read",
			in:   `{"seq":1,"role":"r","status":"completed","duration_s":0,"task":-1}`,
			want: ManifestLine{Seq: 1, Role: "r", Status: "completed", DurationS: mfInt(0), Task: mfInt(-1)},
		},
		{
			name: "a 100 KiB summary",
			in:   `{"seq":1,"role":"r","status":"completed","summary":"` + strings.Repeat("y", 100<<10) + `"}`,
			want: ManifestLine{Seq: 1, Role: "r", Status: "completed", Summary: mfStr(strings.Repeat("y", 100<<10))},
		},
		{
			name: "longest line",
			in:   `{"seq":1,"role":"r","status":"completed","summary":"` + strings.Repeat("x", MaxManifestLine-54) + `"}`,
			want: ManifestLine{Seq: 1, Role: "r", Status: "completed", Summary: mfStr(strings.Repeat("x", MaxManifestLine-54))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, problems := ParseManifest([]byte(tt.in + "\n"))
			if len(problems) != 0 || len(lines) != 1 {
				t.Fatalf("ParseManifest: %d lines, problems %v", len(lines), problems)
			}
			tt.want.Raw = []byte(tt.in)
			if !reflect.DeepEqual(lines[0], tt.want) {
				t.Errorf("ParseManifest:\n got %+v\nwant %+v", lines[0], tt.want)
			}
			if got := lines[0].Render(); !bytes.Equal(got, []byte(tt.in)) {
				t.Errorf("Render() = %q, want %q", got, tt.in)
			}
		})
	}
}

func TestParseManifestProblems(t *testing.T) {
	tests := []struct {
		name string
		in   string
		msg  string
	}{
		{"not JSON", `seq=1`, "not a JSON object"},
		{"truncated", `{"seq":1,"role":"r","status":"completed"`, "not a JSON object"},
		{"array", `[{"seq":1}]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"string", `"seq"`, "not a JSON object"},
		{"two objects", `{"seq":1,"role":"r","status":"completed"} {}`, "not a JSON object"},
		{"too long", `{"seq":1,"role":"r","status":"completed","summary":"` + strings.Repeat("x", MaxManifestLine-53) + `"}`,
			"line is 1048577 bytes, over the 1048576-byte limit"},
		{"missing seq", `{"role":"r","status":"completed"}`, "missing seq"},
		{"null seq", `{"seq":null,"role":"r","status":"completed"}`, "missing seq"},
		{"seq 0", `{"seq":0,"role":"r","status":"completed"}`, "invalid seq 0: want an integer >= 1"},
		{"negative seq", `{"seq":-3,"role":"r","status":"completed"}`, "invalid seq -3: want an integer >= 1"},
		{"string seq", `{"seq":"1","role":"r","status":"completed"}`, `invalid seq "1": want an integer >= 1`},
		{"fractional seq", `{"seq":1.5,"role":"r","status":"completed"}`, "invalid seq 1.5: want an integer >= 1"},
		{"exponent seq", `{"seq":1e2,"role":"r","status":"completed"}`, "invalid seq 1e2: want an integer >= 1"},
		{"overflowing seq", `{"seq":99999999999999999999,"role":"r","status":"completed"}`,
			"invalid seq 99999999999999999999: want an integer >= 1"},
		{"missing status", `{"seq":1,"role":"r"}`, "missing status"},
		{"unknown status", `{"seq":1,"role":"r","status":"done"}`,
			`invalid status "done" (want dispatched, completed, failed, skipped, error)`},
		{"status case", `{"seq":1,"role":"r","status":"Completed"}`,
			`invalid status "Completed" (want dispatched, completed, failed, skipped, error)`},
		{"numeric status", `{"seq":1,"role":"r","status":1}`, "invalid status 1: want a string"},
		{"missing role", `{"seq":1,"status":"completed"}`, "missing role"},
		{"empty role", `{"seq":1,"role":"","status":"completed"}`, "empty role"},
		{"role array", `{"seq":1,"role":["r"],"status":"completed"}`, `invalid role ["r"]: want a string`},
		{"file number", `{"seq":1,"role":"r","status":"completed","file":3}`, "invalid file 3: want a string"},
		{"phase bool", `{"seq":1,"role":"r","status":"completed","phase":true}`, "invalid phase true: want a string or an integer"},
		{"phase fraction", `{"seq":1,"role":"r","status":"completed","phase":2.5}`, "invalid phase 2.5: want a string or an integer"},
		{"task string", `{"seq":1,"role":"r","status":"completed","task":"1"}`, `invalid task "1": want an integer or null`},
		{"duration float", `{"seq":1,"role":"r","status":"completed","duration_s":1.25}`, "invalid duration_s 1.25: want an integer or null"},
		{"tool_calls object", `{"seq":1,"role":"r","status":"completed","tool_calls":{}}`, "invalid tool_calls {}: want an integer or null"},
		{"replay_of string", `{"seq":1,"role":"r","status":"completed","replay_of":"3"}`, `invalid replay_of "3": want an integer or null`},
		{"summary number", `{"seq":1,"role":"r","status":"completed","summary":5}`, "invalid summary 5: want a string or null"},
		{"model_tier bool", `{"seq":1,"role":"r","status":"completed","model_tier":false}`, "invalid model_tier false: want a string or null"},
		{"timestamp number", `{"seq":1,"role":"r","status":"completed","timestamp":1712000000}`, "invalid timestamp 1712000000: want a string or null"},
		{"template array", `{"seq":1,"role":"r","status":"completed","template":[]}`, "invalid template []: want a string or null"},
		{"long value clipped", `{"seq":1,"role":"r","status":"completed","task":"` + strings.Repeat("9", 80) + `"}`,
			`invalid task "` + strings.Repeat("9", 56) + `...: want an integer or null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"seq":1,"role":"ok","status":"completed"}` + "\n\n" + tt.in + "\n"
			lines, problems := ParseManifest([]byte(in))
			if len(lines) != 1 || lines[0].Role != "ok" {
				t.Errorf("lines = %+v, want the good line only", lines)
			}
			if len(problems) != 1 {
				t.Fatalf("problems = %v, want one", problems)
			}
			if p := problems[0]; p.Line != 3 || p.Msg != tt.msg {
				t.Errorf("problem = line %d %q\n        want line 3 %q", p.Line, p.Msg, tt.msg)
			}
			if want := "line 3: " + tt.msg; problems[0].Error() != want {
				t.Errorf("Error() = %q, want %q", problems[0].Error(), want)
			}
		})
	}
}

func TestParseManifestLines(t *testing.T) {
	in := "\n" +
		`{"seq":1,"role":"a","status":"dispatched"}` + "\r\n" +
		"  \t\r\n" +
		"garbage\n" +
		`{"seq":1,"role":"a","status":"completed"}` + "\n" +
		`{"seq":2,"role":"b"}` + "\n" +
		`{"seq":2,"role":"b","status":"dispatched"}` // no final newline
	lines, problems := ParseManifest([]byte(in))
	var got []string
	for _, l := range lines {
		got = append(got, string(l.Raw))
	}
	want := []string{
		`{"seq":1,"role":"a","status":"dispatched"}` + "\r",
		`{"seq":1,"role":"a","status":"completed"}`,
		`{"seq":2,"role":"b","status":"dispatched"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n got %q\nwant %q", got, want)
	}
	wantProblems := []*ManifestError{{Line: 4, Msg: "not a JSON object"}, {Line: 6, Msg: "missing status"}}
	if !reflect.DeepEqual(problems, wantProblems) {
		t.Errorf("problems = %v, want %v", problems, wantProblems)
	}
	var out []byte
	for _, l := range lines {
		out = append(append(out, l.Render()...), '\n')
	}
	if wantOut := strings.Join(want, "\n") + "\n"; string(out) != wantOut {
		t.Errorf("re-export = %q, want %q", out, wantOut)
	}

	for _, in := range []string{"", "\n", "\r\n \n\t"} {
		if lines, problems := ParseManifest([]byte(in)); lines != nil || problems != nil {
			t.Errorf("ParseManifest(%q) = %v, %v, want nothing", in, lines, problems)
		}
	}
}

func TestParseManifestRawIsACopy(t *testing.T) {
	data := []byte(`{"seq":1,"role":"r","status":"completed"}`)
	lines, _ := ParseManifest(data)
	data[1] = 'X'
	if string(lines[0].Raw) != `{"seq":1,"role":"r","status":"completed"}` {
		t.Errorf("Raw shares the input's memory: %q", lines[0].Raw)
	}
}

func TestManifestRenderCanonical(t *testing.T) {
	tests := []struct {
		name string
		l    ManifestLine
		want string
	}{
		{
			name: "dispatched line: nulls, no timestamp or template",
			l:    ManifestLine{Seq: 4, File: "4-build-reviewer.md", Role: "reviewer", Phase: "3", Task: mfInt(1), Status: "dispatched"},
			want: `{"seq":4,"file":"4-build-reviewer.md","role":"reviewer","phase":"3","task":1,"status":"dispatched",` +
				`"duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":null,"tool_calls":null,` +
				`"replay_of":null,"replay_session":null,"mutation":null}`,
		},
		{
			name: "everything, no HTML escaping",
			l: ManifestLine{Seq: 12, File: "12-plan-writer.md", Role: "plan-writer", Phase: "2", Status: "completed",
				DurationS: mfInt(83), Summary: mfStr(`<b> & "q" \ é` + "\n"), InputChars: mfInt(5000), OutputChars: mfInt(1200),
				ModelTier: mfStr("opus"), ToolCalls: mfInt(0), ReplayOf: mfInt(1), ReplaySession: mfStr("s-2"),
				Mutation: mfStr("orig.md -> repl.md"), Timestamp: mfStr("2026-04-13T15:00:00Z"), Template: mfStr("plan-writer")},
			want: `{"seq":12,"file":"12-plan-writer.md","role":"plan-writer","phase":"2","task":null,"status":"completed",` +
				`"duration_s":83,"summary":"<b> & \"q\" \\ é\n","input_chars":5000,"output_chars":1200,"model_tier":"opus",` +
				`"tool_calls":0,"replay_of":1,"replay_session":"s-2","mutation":"orig.md -> repl.md",` +
				`"timestamp":"2026-04-13T15:00:00Z","template":"plan-writer"}`,
		},
		{
			name: "empty strings are written, template without timestamp",
			l:    ManifestLine{Seq: 1, Status: "completed", Summary: mfStr(""), Template: mfStr("")},
			want: `{"seq":1,"file":"","role":"","phase":"","task":null,"status":"completed","duration_s":null,"summary":"",` +
				`"input_chars":null,"output_chars":null,"model_tier":null,"tool_calls":null,"replay_of":null,` +
				`"replay_session":null,"mutation":null,"template":""}`,
		},
		{
			name: "Raw wins",
			l:    ManifestLine{Seq: 1, Role: "x", Status: "completed", Raw: []byte(`{"seq":1}`)},
			want: `{"seq":1}`,
		},
		{
			name: "empty Raw is not set",
			l:    ManifestLine{Seq: 1, Role: "x", Status: "skipped", Raw: []byte{}},
			want: `{"seq":1,"file":"","role":"x","phase":"","task":null,"status":"skipped","duration_s":null,"summary":null,` +
				`"input_chars":null,"output_chars":null,"model_tier":null,"tool_calls":null,"replay_of":null,` +
				`"replay_session":null,"mutation":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.l.Render()); got != tt.want {
				t.Errorf("Render()\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestManifestRoundTrip(t *testing.T) {
	lines := []ManifestLine{
		{Seq: 1, File: "1-plan-writer.md", Role: "plan-writer", Phase: "2", Status: "dispatched"},
		{Seq: 1, File: "1-plan-writer.md", Role: "plan-writer", Phase: "2", Status: "completed", DurationS: mfInt(83),
			Summary: mfStr("Plan written: 8 tasks, 3 waves"), InputChars: mfInt(4000), OutputChars: mfInt(900),
			ModelTier: mfStr("opus"), ToolCalls: mfInt(14), Timestamp: mfStr("2026-04-13T15:00:00Z"), Template: mfStr("plan-writer")},
		{Seq: 2, Role: "r", Status: "failed", Task: mfInt(3), ReplayOf: mfInt(1), ReplaySession: mfStr("sess"),
			Mutation: mfStr("a.md -> b.md"), Summary: mfStr("<&> \u2028 \x7f \t")},
		{Seq: 1 << 40, Role: "big", Status: "error", DurationS: mfInt(-5), Timestamp: mfStr("")},
	}
	for _, l := range lines {
		out := l.Render()
		got, problems := ParseManifest(out)
		if len(problems) != 0 || len(got) != 1 {
			t.Fatalf("ParseManifest(%s): %d lines, problems %v", out, len(got), problems)
		}
		want := l
		want.Raw = out
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got[0], want)
		}
	}
}

func TestLatest(t *testing.T) {
	line := func(seq int, status string) ManifestLine {
		return ManifestLine{Seq: seq, Role: "r", Status: status}
	}
	in := []ManifestLine{
		line(3, "dispatched"),
		line(1, "dispatched"),
		line(1, "completed"),
		line(2, "dispatched"),
		line(3, "failed"),
		line(3, "dispatched"), // a replay re-dispatch: the last line wins
	}
	want := []ManifestLine{line(1, "completed"), line(2, "dispatched"), line(3, "dispatched")}
	if got := Latest(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Latest:\n got %+v\nwant %+v", got, want)
	}
	if got := Latest(nil); got != nil {
		t.Errorf("Latest(nil) = %v", got)
	}

	data := []byte(`{"seq":2,"role":"r","status":"dispatched"}` + "\n" +
		`{"seq":1,"role":"r","status":"dispatched"}` + "\n" +
		`{"seq":2,"role":"r","status":"completed","duration_s":5}` + "\n")
	lines, _ := ParseManifest(data)
	latest := Latest(lines)
	if len(latest) != 2 || latest[0].Seq != 1 || latest[1].Status != "completed" || *latest[1].DurationS != 5 {
		t.Errorf("Latest of parsed lines = %+v", latest)
	}
	if string(latest[1].Raw) != `{"seq":2,"role":"r","status":"completed","duration_s":5}` {
		t.Errorf("Latest lost Raw: %q", latest[1].Raw)
	}
}

func TestManifestErrorIsError(t *testing.T) {
	var err error = &ManifestError{Line: 2, Msg: "missing seq"}
	var me *ManifestError
	if !errors.As(err, &me) || err.Error() != "line 2: missing seq" {
		t.Errorf("Error() = %q", err.Error())
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add(readFixture(f, manifestFixture))
	f.Add([]byte(`{"seq":1,"role":"r","status":"completed","mutation":"a -> b","timestamp":"t","template":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, problems := ParseManifest(data)
		nlines := bytes.Count(data, []byte("\n")) + 1
		if len(lines)+len(problems) > nlines {
			t.Fatalf("%d lines and %d problems from %d lines", len(lines), len(problems), nlines)
		}
		prev := 0
		for _, p := range problems {
			if p.Line <= prev || p.Line > nlines || p.Msg == "" {
				t.Fatalf("bad problem %v after line %d", p, prev)
			}
			prev = p.Line
		}
		for _, l := range lines {
			if l.Seq < 1 || l.Role == "" || len(l.Raw) > MaxManifestLine {
				t.Fatalf("invalid line accepted: %+v", l)
			}
			if !bytes.Contains(data, l.Raw) || !bytes.Equal(l.Render(), l.Raw) {
				t.Fatalf("Raw %q is not the input's line", l.Raw)
			}
			// The line as read parses alone to itself.
			again, ps := ParseManifest(l.Raw)
			if len(ps) != 0 || len(again) != 1 || !reflect.DeepEqual(again[0], l) {
				t.Fatalf("reparse of %q: %+v %v", l.Raw, again, ps)
			}
			// The canonical form too.
			c := l
			c.Raw = nil
			out := c.Render()
			if len(out) > MaxManifestLine {
				continue
			}
			got, ps := ParseManifest(out)
			c.Raw = out
			if len(ps) != 0 || len(got) != 1 || !reflect.DeepEqual(got[0], c) {
				t.Fatalf("canonical round trip of %q:\nrendered %s\n got %+v %v\nwant %+v", l.Raw, out, got, ps, c)
			}
		}
		latest := Latest(lines)
		for i := 1; i < len(latest); i++ {
			if latest[i-1].Seq >= latest[i].Seq {
				t.Fatalf("Latest not in strict seq order: %d then %d", latest[i-1].Seq, latest[i].Seq)
			}
		}
	})
}
