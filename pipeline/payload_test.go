package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// TestPayloadErrors pins how a payload Apply cannot decode is reported,
// event family by family: findings on stored chains must read as before.
func TestPayloadErrors(t *testing.T) {
	for _, c := range []struct {
		typ, data, want string
	}{
		{TypeVerdict, `{"phase":1,"x":1}`, `gate.verdict: json: unknown field "x"`},
		{LedgerType(ledger.Begin), `{"phase":"one"}`, `ledger.begin: json: cannot unmarshal string into Go struct field LedgerData.phase of type ledger.Phase`},
		{TypeDecision, `{"type":"t","choice":"c"} {}`, `decision: trailing data after the JSON object`},
		{TypeDispatchStart, `{"x":1}`, `dispatch.start: json: unknown field "x"`},
		{TypeHandoff, `[]`, `handoff.write: json: cannot unmarshal array into Go value of type pipeline.HandoffData`},
		{TypeResolve, `{"x":1}`, `pipeline.resolve: json: unknown field "x"`},
		{TypeCheckpoint, `{"x":1}`, `event seq 2 (checkpoint): json: unknown field "x"`},
		{TypeImportFiles, `{"x":1}`, `event seq 2 (import.files): json: unknown field "x"`},
		{TypeImportDispatch, `{"line":"{\"seq\":0}"}`, `imported manifest line: invalid seq 0`},
		{"import.other", `{}`, `unknown event type "import.other"`},
	} {
		st := started(t)
		e := Event{Seq: 2, Lamport: 2, Time: "2026-11-22T10:00:00Z", Writer: "w", Type: c.typ, Data: json.RawMessage(c.data)}
		if _, err := st.Apply(e); err == nil || err.Error() != c.want {
			t.Errorf("%s %s: %v\nwant %s", c.typ, c.data, err, c.want)
		}
	}
}

// TestDescribe pins every event type's one-line summary, which commit
// subjects, log and the recent events in state.json carry; an odd payload
// gives a shorter one.
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		typ, data, want string
	}{
		{TypeStart, `{"id":"p","goal":"two\nlines","mode":"feature"}`, "start: two lines"},
		{TypeAbandon, `{"reason":"r"}`, "abandon"},
		{TypeVerdict, `{"phase":2,"verdict":"FAIL","pipeline_id":"p"}`, "verdict FAIL for phase 2"},
		{TypeVerdict, `{"phase":"x","verdict":"FAIL"}`, "verdict FAIL for phase 0"},
		{LedgerType(ledger.PassGate), `{"phase":1}`, "pass phase 1"},
		{TypeDecision, `{"type":"scope","choice":"a  b"}`, "decision scope: a b"},
		{TypeCheckpoint, `{"id":"c","reason":"before"}`, "checkpoint before"},
		{TypeDispatchStart, `{"seq":3,"role":"implementer","task":4}`, "dispatch 3: implementer on task 4"},
		{TypeDispatchStart, `{"seq":3,"role":"planner"}`, "dispatch 3: planner"},
		{TypeDispatchFinish, `{"seq":3,"status":"completed"}`, "dispatch 3 completed"},
		{TypeHandoff, `{"from":1,"to":2}`, "handoff 1 → 2"},
		{TypeImportHandoff, `{"from":2,"to":3}`, "imported handoff 2 → 3"},
		{TypeImportDispatch, `{"line":"{}"}`, "imported a manifest line"},
		{TypeImportLedger, `{}`, "imported the gate ledger"},
		{TypeImportVerdict, `{}`, "imported a verdict marker"},
		{TypeImportFiles, `{}`, "import"},
		{TypeResolve, `{"phase":2,"reason":"re-ran"}`, "resolve Phase 2 conflicts: re-ran"},
		{TypeResolve, `{"reason":"re-ran"}`, "resolve conflicts: re-ran"},
		{"pipeline.frobnicate", `{}`, "frobnicate"},
		{"import.other", `{}`, "import.other"},
		{TypeVerdict, `not json`, "verdict  for phase 0"},
	} {
		if got := Describe(Event{Type: c.typ, Data: json.RawMessage(c.data)}); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.typ, c.data, got, c.want)
		}
	}
}

// TestImportedNamesArePlain: replay refuses an imported prompt, output or
// verdict marker whose name is not a plain file name, as export would write
// it outside its directory, and a time that is not RFC 3339; a chain
// carrying one fails verification, so a fetch does not take it in.
func TestImportedNamesArePlain(t *testing.T) {
	for _, c := range []struct {
		typ, data, want string
	}{
		{TypeImportDispatch, `{"line":"{\"seq\":1,\"file\":\"../x.md\",\"role\":\"r\",\"status\":\"dispatched\"}","prompt":"dispatch/0000/p.md"}`,
			`imported manifest line 1 names a dispatch file "../x.md" that is not a plain file name`},
		{TypeImportDispatch, `{"line":"{\"seq\":1,\"file\":\"a/x.md\",\"role\":\"r\",\"status\":\"dispatched\"}","prompt":"dispatch/0000/a/x.md"}`,
			`imported manifest line 1 names a dispatch file "a/x.md" that is not a plain file name`},
		{TypeImportVerdict, `{"name":"../gate-verdict-1.md","path":"import/../gate-verdict-1.md","phase":1,"rounds":1}`,
			`imported marker "../gate-verdict-1.md" is not a plain file name`},
		{TypeImportVerdict, `{"name":"..","path":"import/..","phase":1,"rounds":1}`,
			`imported marker ".." is not a plain file name`},
		{TypeImportDispatch, `{"line":"{\"seq\":1,\"file\":\"../x.md\",\"role\":\"r\",\"status\":\"completed\"}","output":"dispatch/0000/../x.output.md"}`,
			`imported manifest line 1 names a dispatch file "../x.md" that is not a plain file name`},
		// An output is kept beside its prompt, for a final line only.
		{TypeImportDispatch, `{"line":"{\"seq\":1,\"file\":\"1-x.md\",\"role\":\"r\",\"status\":\"completed\"}","output":"dispatch/0000/elsewhere.md"}`,
			`imported manifest line 1: output kept at "dispatch/0000/elsewhere.md"`},
		{TypeImportDispatch, `{"line":"{\"seq\":1,\"file\":\"1-x.md\",\"role\":\"r\",\"status\":\"dispatched\"}","output":"dispatch/0000/1-x.output.md"}`,
			`imported manifest line 1: output kept at "dispatch/0000/1-x.output.md"`},
		// Times in payloads are RFC 3339, as event times are.
		{TypeImportDispatch, `{"line":"{\"seq\":1,\"file\":\"1-x.md\",\"role\":\"r\",\"status\":\"dispatched\"}","time":"2026-04-13T14:00:00"}`,
			`invalid dispatch time "2026-04-13T14:00:00" (want RFC 3339)`},
		{TypeDecision, `{"type":"t","choice":"c","time":"yesterday"}`, `invalid decision time "yesterday" (want RFC 3339)`},
		{TypeImportFiles, `{"dir":"/x","files":{},"manifest_lines":0,"manifest_digest":"","first":"now"}`, `invalid first time "now" (want RFC 3339)`},
	} {
		st := started(t)
		e := Event{Seq: 2, Lamport: 2, Time: "2026-11-22T10:00:00Z", Writer: "w", Type: c.typ, Data: json.RawMessage(c.data)}
		if _, err := st.Apply(e); err == nil || err.Error() != c.want {
			t.Errorf("%s %s: %v\nwant %s", c.typ, c.data, err, c.want)
		}
	}
}
