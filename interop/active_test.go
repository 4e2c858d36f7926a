package interop

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	activeJSONMarker = `{
  "pipeline_id": "9a7c2f1e-0b1d-4c55-8e0a-3f7b2d9c1a00",
  "skill": "build",
  "phase": "2",
  "start_time": "2026-04-13T15:00:00Z",
  "scratch_dir": "/home/u/.claude/projects/x/memory",
  "dispatch_dir": "/tmp/crucible-dispatch-9a7c",
  "branch": "feat/a<b>&c",
  "baseline_sha": "c818f16d0f3a2b1e4c5d6e7f8091a2b3c4d5e6f7"
}
`
	activeLegacyMarker = "pipeline: build-20260413-150000\nsession-id: 9a7c2f1e\nstarted: 2026-04-13T15:00:00Z\ndispatch-dir: /tmp/crucible-dispatch-9a7c\n"
)

var activeFull = Active{
	PipelineID: "9a7c2f1e-0b1d-4c55-8e0a-3f7b2d9c1a00", Skill: "build", Phase: "2", StartTime: "2026-04-13T15:00:00Z",
	ScratchDir: "/home/u/.claude/projects/x/memory", DispatchDir: "/tmp/crucible-dispatch-9a7c",
	Branch: "feat/a<b>&c", BaselineSHA: "c818f16d0f3a2b1e4c5d6e7f8091a2b3c4d5e6f7",
}

func TestParseActive(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Active
	}{
		{"JSON", activeJSONMarker, activeFull},
		{
			name: "JSON, compact, numeric phase, unknown keys, nulls",
			in:   `{"pipeline_id":"p","skill":"debugging","phase":3,"extra":{"x":[1]},"branch":null,"session_id":"s"}`,
			want: Active{PipelineID: "p", Skill: "debugging", Phase: "3"},
		},
		{
			name: "JSON, byte order mark, CRLF, leading blank lines",
			in:   "\ufeff\r\n\r\n{\r\n\"pipeline_id\": \"p\",\r\n\"phase\": \"4\"\r\n}\r\n",
			want: Active{PipelineID: "p", Phase: "4"},
		},
		{
			name: "JSON, duplicate key: last wins",
			in:   `{"skill":"a","skill":"b"}`,
			want: Active{Skill: "b"},
		},
		{
			name: "JSON, empty object",
			in:   `{}`,
			want: Active{},
		},
		{
			name: "JSON, escapes",
			in:   `{"branch":"a\u00e9\n\"b\""}`,
			want: Active{Branch: "aé\n\"b\""},
		},
		{"legacy", activeLegacyMarker, Active{PipelineID: "build-20260413-150000", SessionID: "9a7c2f1e",
			StartTime: "2026-04-13T15:00:00Z", DispatchDir: "/tmp/crucible-dispatch-9a7c", Legacy: true}},
		{
			name: "legacy, other order, CRLF, spacing, blank lines, unknown key",
			in:   "\r\n  started :2026-04-13T15:00:00Z  \r\n\r\npipeline:p\r\nnote: x: y\r\n",
			want: Active{PipelineID: "p", StartTime: "2026-04-13T15:00:00Z", Legacy: true},
		},
		{
			name: "legacy, pipeline only, empty value",
			in:   "pipeline:",
			want: Active{Legacy: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseActive([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseActive: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseActive:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseActiveErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty", "", 0, "empty marker"},
		{"blank", " \r\n\t\n", 0, "empty marker"},
		{"byte order mark only", "\ufeff", 0, "empty marker"},
		{"prose", "hello world\n", 1, `want a JSON object or "key: value" lines, found "hello world"`},
		{"legacy with prose", "pipeline: p\nsession-id: s\nsome prose\n", 3, `want a JSON object or "key: value" lines, found "some prose"`},
		{"legacy key with space", "pipeline: p\nsession id: s\n", 2, `want a JSON object or "key: value" lines, found "session id: s"`},
		{"legacy empty key", "pipeline: p\n: s\n", 2, `want a JSON object or "key: value" lines, found ": s"`},
		{"legacy duplicate", "pipeline: p\nstarted: a\nstarted: b\n", 3, `duplicate key "started" (first on line 2)`},
		{"legacy invalid UTF-8", "pipeline: p\ndispatch-dir: /tmp/\xff\n", 2, "dispatch-dir: value is not valid UTF-8"},
		{"legacy without pipeline", "session-id: s\nstarted: t\n", 0, `missing key "pipeline"`},
		{"legacy keys are case-sensitive", "Pipeline: p\n", 0, `missing key "pipeline"`},
		{"JSON array", `[{"pipeline_id":"p"}]`, 1, `want a JSON object or "key: value" lines, found "[{\"pipeline_id\":\"p\"}]"`},
		{"JSON number phase fraction", "{\n\"phase\": 2.5\n}", 2, "invalid phase 2.5: want a string or an integer"},
		{"JSON bool phase", `{"phase":true}`, 1, "invalid phase true: want a string or an integer"},
		{"JSON number branch", "{\"skill\":\"build\",\n\n  \"branch\": 7}", 3, "invalid branch 7: want a string"},
		{"JSON object pipeline_id", `{"pipeline_id":{"a":1}}`, 1, `invalid pipeline_id {"a":1}: want a string`},
		{"JSON truncated", "{\"skill\":\"build\",\n", 2, "invalid JSON: unexpected end of input"},
		{"JSON unterminated string", "{\"skill\":\"bu", 1, "invalid JSON: unexpected end of input"},
		{"JSON bad token", "{\n\"skill\" \"build\"}", 2, "invalid JSON: expected colon after object key"},
		{"JSON trailing data", "{\"skill\":\"build\"}\n{}", 2, "invalid JSON: data after the object"},
		{"JSON trailing garbage", "{\"skill\":\"build\"} x", 1, "invalid JSON: invalid character 'x' looking for beginning of value"},
		{"JSON non-string key", `{1:"a"}`, 1, "invalid JSON: invalid character '1'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseActive([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseActive succeeded: %#v", a)
			}
			var ae *ActiveError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v, want *ActiveError", err, err)
			}
			if ae.Line != tt.line || ae.Msg != tt.msg {
				t.Errorf("error = line %d %q\n      want line %d %q", ae.Line, ae.Msg, tt.line, tt.msg)
			}
			if want := "line " + itoa(tt.line) + ": " + tt.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if !reflect.DeepEqual(a, Active{}) {
				t.Errorf("marker on error = %#v, want zero", a)
			}
		})
	}
}

func TestActiveRender(t *testing.T) {
	if got := string(activeFull.Render()); got != activeJSONMarker {
		t.Errorf("Render()\n got %s\nwant %s", got, activeJSONMarker)
	}
	legacy, err := ParseActive([]byte(activeLegacyMarker))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "pipeline_id": "build-20260413-150000",
  "skill": "",
  "phase": "",
  "start_time": "2026-04-13T15:00:00Z",
  "scratch_dir": "",
  "dispatch_dir": "/tmp/crucible-dispatch-9a7c",
  "branch": "",
  "baseline_sha": ""
}
`
	if got := string(legacy.Render()); got != want {
		t.Errorf("Render() of the older form\n got %s\nwant %s", got, want)
	}
	back, err := ParseActive(legacy.Render())
	if err != nil {
		t.Fatal(err)
	}
	legacy.SessionID, legacy.Legacy = "", false // the JSON form has no place for them
	if !reflect.DeepEqual(back, legacy) {
		t.Errorf("older form after a render:\n got %#v\nwant %#v", back, legacy)
	}
}

func TestActiveRoundTrip(t *testing.T) {
	for _, a := range []Active{
		activeFull,
		{},
		{PipelineID: "p", Phase: "1"},
		{Branch: "a\"b\\c\n\u2028<&>\x01", Skill: " spaced "},
	} {
		out := a.Render()
		if !strings.HasSuffix(string(out), "}\n") {
			t.Errorf("no trailing newline: %q", out)
		}
		got, err := ParseActive(out)
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Errorf("ParseActive(Render()) = %#v, %v\nwant %#v", got, err, a)
		}
	}
}

func FuzzParseActive(f *testing.F) {
	f.Add([]byte(activeJSONMarker))
	f.Add([]byte(activeLegacyMarker))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseActive(data)
		if err != nil {
			var ae *ActiveError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v, want *ActiveError", err, err)
			}
			if ae.Line < 0 || ae.Line > strings.Count(string(data), "\n")+1 {
				t.Fatalf("line out of range in %v", err)
			}
			if !reflect.DeepEqual(a, Active{}) {
				t.Fatalf("non-zero marker with error %v", err)
			}
			return
		}
		if !a.Legacy && a.SessionID != "" {
			t.Fatalf("session id from the JSON form: %#v", a)
		}
		out := a.Render()
		a2, err := ParseActive(out)
		if err != nil {
			t.Fatalf("ParseActive(Render()): %v\ninput %q\nrendered %q", err, data, out)
		}
		a.SessionID, a.Legacy = "", false
		if !reflect.DeepEqual(a, a2) {
			t.Fatalf("round trip differs:\n got %#v\nwant %#v\ninput %q\nrendered %q", a2, a, data, out)
		}
		if again := a2.Render(); string(again) != string(out) {
			t.Fatalf("render not stable:\n%q\n%q", out, again)
		}
	})
}
