package interop

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

const (
	hashA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

	v1Marker = `Verdict: PASS
Phase: plan
PipelineID: build-20260413-150000
Rounds: 2
FinalScore: 0
Timestamp: 2026-04-13T15:20:00
RunID: qg-20260413-151500
`

	v2Marker = `MarkerVersion: 2
ArtifactHash: ` + hashA + `
Verdict: SUSTAINED_REGRESSION
Phase: code
PipelineID: build-20260413-150000
Rounds: 7
FinalScore: 12
MaxScore: 40
Reason: score rose three rounds running
ScoreTrajectory: 30, 22|4, 15,12
Severity-Histogram: {"Fatal":1,"Significant":9,"Minor":3}
Timestamp: 2026-04-13T16:02:11Z
RunID: qg-20260413-154000
`
)

func fields(kv ...string) []Field {
	var out []Field
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Field{kv[i], kv[i+1]})
	}
	return out
}

func TestParseMarkerValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Marker
	}{
		{
			name: "v1",
			in:   v1Marker,
			want: Marker{
				Version:    1,
				Verdict:    "PASS",
				Phase:      ledger.Plan,
				PipelineID: "build-20260413-150000",
				Rounds:     2,
				FinalScore: 0,
				Timestamp:  "2026-04-13T15:20:00",
				RunID:      "qg-20260413-151500",
				Fields: fields(
					"Verdict", "PASS",
					"Phase", "plan",
					"PipelineID", "build-20260413-150000",
					"Rounds", "2",
					"FinalScore", "0",
					"Timestamp", "2026-04-13T15:20:00",
					"RunID", "qg-20260413-151500",
				),
			},
		},
		{
			name: "v2 full",
			in:   v2Marker,
			want: Marker{
				Version:           2,
				Verdict:           "SUSTAINED_REGRESSION",
				Phase:             ledger.Completion,
				PipelineID:        "build-20260413-150000",
				Rounds:            7,
				FinalScore:        12,
				MaxScore:          40,
				Timestamp:         "2026-04-13T16:02:11Z",
				RunID:             "qg-20260413-154000",
				ArtifactHash:      hashA,
				Reason:            "score rose three rounds running",
				ScoreTrajectory:   []string{"30", "22|4", "15", "12"},
				SeverityHistogram: json.RawMessage(`{"Fatal":1,"Significant":9,"Minor":3}`),
				Fields: fields(
					"MarkerVersion", "2",
					"ArtifactHash", hashA,
					"Verdict", "SUSTAINED_REGRESSION",
					"Phase", "code",
					"PipelineID", "build-20260413-150000",
					"Rounds", "7",
					"FinalScore", "12",
					"MaxScore", "40",
					"Reason", "score rose three rounds running",
					"ScoreTrajectory", "30, 22|4, 15,12",
					"Severity-Histogram", `{"Fatal":1,"Significant":9,"Minor":3}`,
					"Timestamp", "2026-04-13T16:02:11Z",
					"RunID", "qg-20260413-154000",
				),
			},
		},
		{
			name: "v2 minimal",
			in:   "MarkerVersion: 2\nArtifactHash: " + hashA + "\nVerdict: ARCHITECTURAL\nPhase: design\nPipelineID: p\n",
			want: Marker{
				Version: 2, Verdict: "ARCHITECTURAL", Phase: ledger.Design, PipelineID: "p", ArtifactHash: hashA,
				Fields: fields("MarkerVersion", "2", "ArtifactHash", hashA, "Verdict", "ARCHITECTURAL", "Phase", "design", "PipelineID", "p"),
			},
		},
		{
			name: "explicit version 1",
			in:   "MarkerVersion: 1\nVerdict: ESCALATED\nPhase: design\nPipelineID: p\n",
			want: Marker{
				Version: 1, Verdict: "ESCALATED", Phase: ledger.Design, PipelineID: "p",
				Fields: fields("MarkerVersion", "1", "Verdict", "ESCALATED", "Phase", "design", "PipelineID", "p"),
			},
		},
		{
			name: "unknown keys kept in order",
			in: "# Gate Verdict\n\nVerdict: FAIL\nGateSkill: quality-gate\nPhase: design\nFatal-Count:   3  \n" +
				"PipelineID: build-1\n**Note:** see: log\nEmpty:\n",
			want: Marker{
				Version: 1, Verdict: "FAIL", Phase: ledger.Design, PipelineID: "build-1",
				Fields: fields(
					"Verdict", "FAIL",
					"GateSkill", "quality-gate",
					"Phase", "design",
					"Fatal-Count", "3",
					"PipelineID", "build-1",
					"**Note", "** see: log",
					"Empty", "",
				),
			},
		},
		{
			name: "CRLF, headings, blank lines, indentation, byte order mark",
			in:   "\ufeff# Verdict\r\n\r\nVerdict: STAGNATION\r\n  Phase:code\r\nPipelineID: build-2 \r\n\r\n## notes\r\nRounds: 15\r\n",
			want: Marker{
				Version: 1, Verdict: "STAGNATION", Phase: ledger.Completion, PipelineID: "build-2", Rounds: 15,
				Fields: fields("Verdict", "STAGNATION", "Phase", "code", "PipelineID", "build-2", "Rounds", "15"),
			},
		},
		{
			name: "empty trajectory is nil, JSON null histogram kept",
			in:   "Verdict: PASS\nPhase: plan\nPipelineID: p\nScoreTrajectory:\nSeverity-Histogram: null\n",
			want: Marker{
				Version: 1, Verdict: "PASS", Phase: ledger.Plan, PipelineID: "p",
				SeverityHistogram: json.RawMessage("null"),
				Fields:            fields("Verdict", "PASS", "Phase", "plan", "PipelineID", "p", "ScoreTrajectory", "", "Severity-Histogram", "null"),
			},
		},
		{
			name: "v2 keys read in a v1 marker",
			in:   "Verdict: FAIL\nPhase: plan\nPipelineID: p\nReason: two fatal\nMaxScore: 9\nArtifactHash: " + hashA + "\n",
			want: Marker{
				Version: 1, Verdict: "FAIL", Phase: ledger.Plan, PipelineID: "p", Reason: "two fatal", MaxScore: 9, ArtifactHash: hashA,
				Fields: fields("Verdict", "FAIL", "Phase", "plan", "PipelineID", "p", "Reason", "two fatal", "MaxScore", "9", "ArtifactHash", hashA),
			},
		},
		{
			name: "no trailing newline",
			in:   "Verdict: PASS\nPhase: 1\nPipelineID: p",
			want: Marker{
				Version: 1, Verdict: "PASS", Phase: ledger.Design, PipelineID: "p",
				Fields: fields("Verdict", "PASS", "Phase", "1", "PipelineID", "p"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMarker([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseMarker: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseMarker:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseMarkerPhase(t *testing.T) {
	tests := []struct {
		in   string
		want ledger.Phase
	}{
		{"design", ledger.Design},
		{"plan", ledger.Plan},
		{"code", ledger.Completion},
		{"Code", ledger.Completion},
		{"1", ledger.Design},
		{"2", ledger.Plan},
		{"4", ledger.Completion},
		{"Design", ledger.Design},
		{"completion", ledger.Completion},
		{"execute", ledger.Execute},
		{"3", ledger.Execute},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := ParseMarker([]byte("Verdict: PASS\nPhase: " + tt.in + "\nPipelineID: p\n"))
			if err != nil {
				t.Fatalf("ParseMarker: %v", err)
			}
			if m.Phase != tt.want {
				t.Errorf("Phase = %d, want %d", m.Phase, tt.want)
			}
		})
	}
}

func TestPhaseName(t *testing.T) {
	tests := []struct {
		p    ledger.Phase
		want string
	}{
		{ledger.Design, "design"},
		{ledger.Plan, "plan"},
		{ledger.Execute, "execute"},
		{ledger.Completion, "code"},
		{0, ""},
		{5, ""},
	}
	for _, tt := range tests {
		if got := PhaseName(tt.p); got != tt.want {
			t.Errorf("PhaseName(%d) = %q, want %q", tt.p, got, tt.want)
		}
		if tt.want == "" {
			continue
		}
		if p, ok := parseMarkerPhase(tt.want); !ok || p != tt.p {
			t.Errorf("parseMarkerPhase(%q) = %d, %v, want %d", tt.want, p, ok, tt.p)
		}
	}
}

func TestValidVerdict(t *testing.T) {
	for _, v := range Verdicts {
		if !ValidVerdict(v) {
			t.Errorf("ValidVerdict(%q) = false", v)
		}
	}
	for _, v := range []string{"", "pass", "COMPLETE", "PASS ", "NEEDS_WORK"} {
		if ValidVerdict(v) {
			t.Errorf("ValidVerdict(%q) = true", v)
		}
	}
}

func TestParseMarkerErrors(t *testing.T) {
	const base = "Verdict: PASS\nPhase: plan\nPipelineID: p\n" // lines 1-3
	const v2base = "MarkerVersion: 2\nArtifactHash: " + hashA + "\n"
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"line without colon", base + "just prose\n", 4, `want a "Key: value" line, found "just prose"`},
		{"long line clipped", base + strings.Repeat("x", 80), 4, `want a "Key: value" line, found "` + strings.Repeat("x", 57) + `..."`},
		{"key with space", "Final Score: 3\n" + base, 1, `invalid key "Final Score"`},
		{"key with space before colon", base + "Rounds : 3\n", 4, `invalid key "Rounds "`},
		{"empty key", base + ": value\n", 4, `invalid key ""`},
		{"byte order mark inside a key", base + "\ufeffX: 1\n", 4, `invalid key "\ufeffX"`},
		{"duplicate known key", base + "Verdict: FAIL\n", 4, `duplicate key "Verdict" (first on line 1)`},
		{"duplicate MarkerVersion", "MarkerVersion: 2\nMarkerVersion: 2\n", 2, `duplicate key "MarkerVersion" (first on line 1)`},
		{"unsupported version 3", "MarkerVersion: 3\n" + base, 1, `unsupported marker version "3"`},
		{"unsupported version empty", "MarkerVersion:\n" + base, 1, `unsupported marker version ""`},
		{"unsupported version 02", "MarkerVersion: 02\n" + base, 1, `unsupported marker version "02"`},
		{"unknown verdict", "Verdict: MAYBE\nPhase: plan\nPipelineID: p\n", 1, `invalid verdict "MAYBE"`},
		{"lower-case verdict", "Verdict: pass\nPhase: plan\nPipelineID: p\n", 1, `invalid verdict "pass"`},
		{"empty verdict", "Verdict:\nPhase: plan\nPipelineID: p\n", 1, `invalid verdict ""`},
		{"v1 with ARCHITECTURAL", "Phase: plan\nVerdict: ARCHITECTURAL\nPipelineID: p\n", 2, `verdict "ARCHITECTURAL" needs MarkerVersion: 2`},
		{"v1 with SUSTAINED_REGRESSION", "MarkerVersion: 1\nPhase: plan\nPipelineID: p\nVerdict: SUSTAINED_REGRESSION\n", 4, `verdict "SUSTAINED_REGRESSION" needs MarkerVersion: 2`},
		{"bad phase", "Verdict: PASS\nPhase: review\nPipelineID: p\n", 2, `invalid phase "review" (want design, plan, code, or what the ledger accepts)`},
		{"phase 0", "Verdict: PASS\nPhase: 0\nPipelineID: p\n", 2, `invalid phase "0" (want design, plan, code, or what the ledger accepts)`},
		{"empty PipelineID", "Verdict: PASS\nPhase: plan\nPipelineID:\n", 3, `empty PipelineID`},
		{"negative Rounds", base + "Rounds: -1\n", 4, `invalid Rounds "-1": want a non-negative integer`},
		{"signed FinalScore", base + "FinalScore: +3\n", 4, `invalid FinalScore "+3": want a non-negative integer`},
		{"empty FinalScore", base + "FinalScore:\n", 4, `invalid FinalScore "": want a non-negative integer`},
		{"text MaxScore", base + "MaxScore: ten\n", 4, `invalid MaxScore "ten": want a non-negative integer`},
		{"overflowing Rounds", base + "Rounds: 99999999999999999999\n", 4, `invalid Rounds "99999999999999999999": want a non-negative integer`},
		{"bad histogram", base + "Severity-Histogram: {Fatal: 1}\n", 4, `invalid Severity-Histogram: not valid JSON`},
		{"empty histogram", base + "Severity-Histogram:\n", 4, `invalid Severity-Histogram: not valid JSON`},
		{"upper-case ArtifactHash", v2base[:31] + strings.ToUpper(hashA) + "\n" + base, 2, `invalid ArtifactHash "` + strings.ToUpper(hashA)[:57] + `...": want 64 lowercase hex digits`},
		{"short ArtifactHash", "MarkerVersion: 2\nArtifactHash: abc123\n" + base, 2, `invalid ArtifactHash "abc123": want 64 lowercase hex digits`},
		{"long ArtifactHash", "MarkerVersion: 2\nArtifactHash: " + hashA + "0\n" + base, 2, `invalid ArtifactHash "` + hashA[:57] + `...": want 64 lowercase hex digits`},
		{"non-hex ArtifactHash", "MarkerVersion: 2\nArtifactHash: " + strings.Repeat("g", 64) + "\n" + base, 2, `invalid ArtifactHash "` + strings.Repeat("g", 57) + `...": want 64 lowercase hex digits`},
		{"bad ArtifactHash in v1", base + "ArtifactHash: sha256:abc\n", 4, `invalid ArtifactHash "sha256:abc": want 64 lowercase hex digits`},
		{"missing Verdict", "Phase: plan\nPipelineID: p\n", 0, `missing required key "Verdict"`},
		{"missing Phase", "Verdict: PASS\nPipelineID: p\n", 0, `missing required key "Phase"`},
		{"missing PipelineID", "Verdict: PASS\nPhase: plan\n", 0, `missing required key "PipelineID"`},
		{"v2 missing ArtifactHash", "MarkerVersion: 2\n" + base, 0, `missing required key "ArtifactHash"`},
		{"lower-case key is not Verdict", "verdict: PASS\nPhase: plan\nPipelineID: p\n", 0, `missing required key "Verdict"`},
		{"empty file", "", 0, `missing required key "Verdict"`},
		{"headings only", "# Gate Verdict\r\n\r\n", 0, `missing required key "Verdict"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMarker([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseMarker succeeded: %#v", m)
			}
			var me *MarkerError
			if !errors.As(err, &me) {
				t.Fatalf("error %T %v, want *MarkerError", err, err)
			}
			if me.Line != tt.line || me.Msg != tt.msg {
				t.Errorf("error = line %d %q\n      want line %d %q", me.Line, me.Msg, tt.line, tt.msg)
			}
			if want := "line " + itoa(tt.line) + ": " + tt.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if !reflect.DeepEqual(m, Marker{}) {
				t.Errorf("marker on error = %#v, want zero", m)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestMarkerErrorString(t *testing.T) {
	err := error(&MarkerError{Line: 0, Msg: `missing required key "Verdict"`})
	if got, want := err.Error(), `line 0: missing required key "Verdict"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestRenderMarkerRoundTrip(t *testing.T) {
	inputs := map[string]string{
		"v1":       v1Marker,
		"v2":       v2Marker,
		"unknown":  "# h\nVerdict: FAIL\nX-Extra: a: b\nPhase: 4\nPipelineID: p\nEmpty:\n",
		"crlf":     "Verdict: PASS\r\nPhase: design\r\nPipelineID: p\r\nScoreTrajectory: ,\r\n",
		"trailing": "Verdict:PASS\nPhase:plan  \nPipelineID:\tp\t\n",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			m, err := ParseMarker([]byte(in))
			if err != nil {
				t.Fatalf("ParseMarker: %v", err)
			}
			out := RenderMarker(m)
			m2, err := ParseMarker(out)
			if err != nil {
				t.Fatalf("ParseMarker(RenderMarker): %v\n%s", err, out)
			}
			if !reflect.DeepEqual(m, m2) {
				t.Errorf("round trip:\n got %#v\nwant %#v", m2, m)
			}
			if again := RenderMarker(m2); string(again) != string(out) {
				t.Errorf("second render differs:\n%s\nvs\n%s", again, out)
			}
		})
	}
	if got := string(RenderMarker(mustParse(t, v1Marker))); got != v1Marker {
		t.Errorf("v1 render:\n%s\nwant\n%s", got, v1Marker)
	}
	if got := string(RenderMarker(mustParse(t, v2Marker))); got != v2Marker {
		t.Errorf("v2 render:\n%s\nwant\n%s", got, v2Marker)
	}
}

func mustParse(t *testing.T, s string) Marker {
	t.Helper()
	m, err := ParseMarker([]byte(s))
	if err != nil {
		t.Fatalf("ParseMarker: %v", err)
	}
	return m
}

func TestRenderMarkerFromTypedFields(t *testing.T) {
	tests := []struct {
		name string
		m    Marker
		want string
	}{
		{
			name: "v1, zero scores written",
			m: Marker{Version: 1, Verdict: "PASS", Phase: ledger.Plan, PipelineID: "build-20260413-150000", Rounds: 2,
				Timestamp: "2026-04-13T15:20:00", RunID: "qg-20260413-151500"},
			want: v1Marker,
		},
		{
			name: "zero Version renders as v1",
			m:    Marker{Verdict: "FAIL", Phase: ledger.Design, PipelineID: "p"},
			want: "Verdict: FAIL\nPhase: design\nPipelineID: p\nRounds: 0\nFinalScore: 0\n",
		},
		{
			name: "v2 in crucible order",
			m: Marker{
				Version: 2, RunID: "qg-20260413-154000", Timestamp: "2026-04-13T16:02:11Z",
				SeverityHistogram: json.RawMessage(`{"Fatal":1,"Significant":9,"Minor":3}`),
				ScoreTrajectory:   []string{"30", "22|4", "15", "12"}, Reason: "score rose three rounds running",
				MaxScore: 40, FinalScore: 12, Rounds: 7, PipelineID: "build-20260413-150000", Phase: ledger.Completion,
				Verdict: "SUSTAINED_REGRESSION", ArtifactHash: hashA,
			},
			want: strings.Replace(v2Marker, "30, 22|4, 15,12", "30,22|4,15,12", 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := RenderMarker(tt.m)
			if string(out) != tt.want {
				t.Fatalf("RenderMarker:\n%s\nwant\n%s", out, tt.want)
			}
			m, err := ParseMarker(out)
			if err != nil {
				t.Fatalf("ParseMarker(RenderMarker): %v", err)
			}
			want := tt.m
			if want.Version == 0 {
				want.Version = 1
			}
			m.Fields = nil
			if !reflect.DeepEqual(m, want) {
				t.Errorf("typed round trip:\n got %#v\nwant %#v", m, want)
			}
		})
	}
}
