package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// ev makes a sealed event following st.
func ev(t *testing.T, st *State, typ string, data any) Event {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	e := Event{Seq: st.Seq + 1, Lamport: st.Lamport + 1, Time: "2026-11-22T10:00:00Z", Writer: "w-1", Type: typ, Data: b}
	if err := e.seal(); err != nil {
		t.Fatal(err)
	}
	return e
}

func started(t *testing.T) *State {
	st := &State{}
	if _, err := st.Apply(ev(t, st, TypeStart, StartData{ID: "p1", Goal: "line one\nline two", Mode: "feature", Branch: "main"})); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStartState(t *testing.T) {
	st := started(t)
	if st.ID != "p1" || st.Status != StatusOpen || st.Phase != ledger.Design || st.Seq != 1 || st.Counters[TypeStart] != 1 {
		t.Fatalf("state %+v", st)
	}
	if st.Goal != "line one\nline two" || st.Gates.Ledger.Goal != "line one line two" {
		t.Fatalf("goal kept verbatim in state, one line in the ledger: %q / %q", st.Goal, st.Gates.Ledger.Goal)
	}
	if err := st.Gates.Ledger.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestApplyRefuses lists every way an event can be out of place; each
// leaves the state as it was.
func TestApplyRefuses(t *testing.T) {
	cases := []struct {
		name string
		mk   func(t *testing.T, st *State) Event
		want string
	}{
		{"seq gap", func(t *testing.T, st *State) Event {
			e := ev(t, st, LedgerType(ledger.Begin), LedgerData{Phase: 1})
			e.Seq++
			return e
		}, "event seq 3 does not follow 1"},
		{"lamport not advancing", func(t *testing.T, st *State) Event {
			e := ev(t, st, LedgerType(ledger.Begin), LedgerData{Phase: 1})
			e.Lamport = st.Lamport
			return e
		}, "lamport clock 1 does not advance past 1"},
		{"second start", func(t *testing.T, st *State) Event {
			return ev(t, st, TypeStart, StartData{ID: "p1", Goal: "g", Mode: "feature"})
		}, "pipeline.start must be the first event and only the first"},
		{"unknown type", func(t *testing.T, st *State) Event { return ev(t, st, "pipeline.frobnicate", struct{}{}) }, `unknown event type "pipeline.frobnicate"`},
		{"ledger.verdict is not a ledger event", func(t *testing.T, st *State) Event {
			return ev(t, st, "ledger.verdict", LedgerData{Phase: 1})
		}, `unknown event type "ledger.verdict"`},
		{"unknown field", func(t *testing.T, st *State) Event {
			return ev(t, st, LedgerType(ledger.Begin), map[string]any{"phase": 1, "extra": true})
		}, `json: unknown field "extra"`},
		{"illegal transition", func(t *testing.T, st *State) Event {
			return ev(t, st, LedgerType(ledger.PassGate), LedgerData{Phase: 1})
		}, "cannot pass phase 1 (Design)"},
		{"verdict for another pipeline", func(t *testing.T, st *State) Event {
			return ev(t, st, TypeVerdict, VerdictData{Phase: 1, Verdict: "PASS", PipelineID: "other"})
		}, "cannot verdict phase 1 (Design)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := started(t)
			before := string(st.Encode())
			_, err := st.Apply(c.mk(t, st))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if string(st.Encode()) != before {
				t.Fatal("a refused event changed the state")
			}
		})
	}
}

func TestAbandonedRefusesEverything(t *testing.T) {
	st := started(t)
	if _, err := st.Apply(ev(t, st, TypeAbandon, AbandonData{Reason: "r"})); err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusAbandoned {
		t.Fatalf("status %s", st.Status)
	}
	for _, typ := range []string{TypeAbandon, LedgerType(ledger.Begin)} {
		if _, err := st.Apply(ev(t, st, typ, LedgerData{Phase: 1})); !errors.Is(err, ErrAbandoned) {
			t.Errorf("%s on an abandoned pipeline: %v", typ, err)
		}
	}
}

func TestStartValidation(t *testing.T) {
	// A branch is a ref name in every clone the pipeline reaches: one that
	// would climb out of refs/ is refused wherever the chain is replayed.
	for _, d := range []StartData{{ID: "p", Goal: "  ", Mode: "feature"}, {ID: "p", Goal: "g", Mode: "bogus"},
		{ID: "p", Goal: "g", Mode: "feature", Branch: "../../../config"}, {ID: "p", Goal: "g", Mode: "feature", Branch: "a..b"}} {
		st := &State{}
		if _, err := st.Apply(ev(t, st, TypeStart, d)); err == nil {
			t.Errorf("start %+v accepted", d)
		}
	}
}

func TestEventIDs(t *testing.T) {
	st := started(t)
	e := ev(t, st, LedgerType(ledger.Begin), LedgerData{Phase: 1})
	if err := e.checkID(); err != nil {
		t.Fatal(err)
	}
	again := ev(t, st, LedgerType(ledger.Begin), LedgerData{Phase: 1})
	if again.ID != e.ID || len(e.ID) != 16 {
		t.Fatalf("ids %q %q: the same event must get the same 16-hex id", e.ID, again.ID)
	}
	e.Data = json.RawMessage(`{"phase":2}`)
	if err := e.checkID(); err == nil {
		t.Fatal("an edited event kept a valid id")
	}
}

func TestDecodeEvents(t *testing.T) {
	st := started(t)
	e := ev(t, st, LedgerType(ledger.Begin), LedgerData{Phase: 1})
	line, _ := json.Marshal(e)
	got, err := DecodeEvents(append(line, '\n'))
	if err != nil || len(got) != 1 || got[0].ID != e.ID {
		t.Fatalf("DecodeEvents = %+v, %v", got, err)
	}
	for in, want := range map[string]string{
		string(line):                         "line 1: no final newline",
		string(line) + "\n{\n":               "line 2:",
		`{"seq":1,"bogus":1}` + "\n":         `line 1: json: unknown field "bogus"`,
		string(line) + "\n" + `{} {}` + "\n": "line 2: trailing data",
	} {
		if _, err := DecodeEvents([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeEvents(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	st := started(t)
	back, err := DecodeState(st.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Encode()) != string(st.Encode()) {
		t.Fatal("state.json does not round-trip")
	}
	if _, err := DecodeState([]byte(`{"format":99}`)); err == nil || !strings.Contains(err.Error(), "unknown format 99") {
		t.Fatalf("future format: %v", err)
	}
}

// TestIndent: state.json's indentation is json.Indent's, byte for byte.
func TestIndent(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[1,2,{"c":null}]}`, `"x"`, `[[],[[]],{}]`,
		`{"s":"a,b:{c}[d]\"e\\\\","t":"\u003c\\\""}`, `{"":0,"n":-1.5e+3,"b":true}`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", " "); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := indent(nil, []byte(in)); string(got) != want.String() {
			t.Errorf("indent(%s):\n%s\nwant\n%s", in, got, want.String())
		}
	}
	st := started(t)
	want, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Encode(); string(got) != string(want)+"\n" {
		t.Errorf("Encode:\n%s\nwant\n%s", got, want)
	}
}

// FuzzIndent: for any JSON value as json.Marshal would write it (compact),
// indent matches json.Indent.
func FuzzIndent(f *testing.F) {
	for _, seed := range []string{`{"a":[1,{"b":"c\"d"}],"e":{}}`, `[[],{}]`, `"\\"`, `{"x":"]}{["}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, b) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", " "); err != nil {
			t.Fatal(err)
		}
		if got := indent(nil, compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indent(%s):\n%q\nwant\n%q", compact.Bytes(), got, want.Bytes())
		}
	})
}

// TestStartedBefore: an imported run keeps its original start, in the
// state and in the ledger's Run line; a start that is no RFC 3339 time is
// refused.
func TestStartedBefore(t *testing.T) {
	st := &State{}
	if _, err := st.Apply(ev(t, st, TypeStart, StartData{ID: "p1", Goal: "g", Mode: "feature", Started: "2026-04-13T14:00:00Z"})); err != nil {
		t.Fatal(err)
	}
	if st.Created != "2026-04-13T14:00:00Z" || st.Gates.Ledger.Run != "2026-04-13T14:00:00Z" {
		t.Fatalf("created %q, run %q", st.Created, st.Gates.Ledger.Run)
	}
	st = &State{}
	_, err := st.Apply(ev(t, st, TypeStart, StartData{ID: "p1", Goal: "g", Mode: "feature", Started: "2026-04-13 14:00"}))
	if err == nil || err.Error() != `invalid start time "2026-04-13 14:00" (want RFC 3339)` {
		t.Fatalf("%v", err)
	}
}
