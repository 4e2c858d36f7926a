package pipeline

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

// TestLedgerOfMatchesDecodeState walks a pipeline through every kind of
// transition and checks the fast reader against the full decoder at each step.
func TestLedgerOfMatchesDecodeState(t *testing.T) {
	st := started(t)
	steps := []struct {
		typ  string
		data any
	}{
		{LedgerType(ledger.Begin), LedgerData{Phase: 1}},
		{TypeVerdict, VerdictData{Phase: 1, Verdict: "PASS", PipelineID: "p1"}},
		{LedgerType(ledger.PassGate), LedgerData{Phase: 1, Artifact: "docs/design.md"}},
		{LedgerType(ledger.Skip), LedgerData{Phase: 2, Reason: "small"}},
		{LedgerType(ledger.Ack), LedgerData{Phase: 2, Confirm: "SKIP GATE"}},
		{LedgerType(ledger.Begin), LedgerData{Phase: 3}},
		{LedgerType(ledger.FailPhase), LedgerData{Phase: 3, Reason: "tests red"}},
		{LedgerType(ledger.Begin), LedgerData{Phase: 3}},
		{LedgerType(ledger.CompletePhase), LedgerData{Phase: 3, Done: 2, Total: 2}},
		{LedgerType(ledger.Infer), LedgerData{Phase: 4, Reason: "rebuilt"}},
	}
	for i, s := range steps {
		if _, err := st.Apply(ev(t, st, s.typ, s.data)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		assertSameLedger(t, st.Encode())
	}
}

func assertSameLedger(t *testing.T, b []byte) {
	t.Helper()
	if _, ok := scanGates(b); !ok {
		t.Fatalf("scanGates gave up on a state this code wrote:\n%s", b)
	}
	full, ferr := DecodeState(b)
	fast, err := LedgerOf(b)
	if (ferr == nil) != (err == nil) {
		t.Fatalf("DecodeState err %v, LedgerOf err %v", ferr, err)
	}
	if ferr == nil && !reflect.DeepEqual(full.Gates.Ledger, fast) {
		t.Fatalf("LedgerOf:\n%+v\nDecodeState:\n%+v", fast, full.Gates.Ledger)
	}
}

// FuzzLedgerOf: on any state.json this code could have written (one that
// re-encodes to itself), LedgerOf reads the same ledger as DecodeState; on
// anything else it may refuse, but it never panics.
func FuzzLedgerOf(f *testing.F) {
	f.Add(started(&testing.T{}).Encode())
	f.Add([]byte(`{"format":1,"gates":{"ledger":{"phases":[{},{},{},{}]}}}`))
	f.Add([]byte(`{"format":1,"gates":{"ledger":{"phases":[{"status":7},{"acknowledged":"yes"},{},{}]}}}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		full, ferr := DecodeState(b)
		fast, err := LedgerOf(b)
		if ferr == nil && bytes.Equal(full.Encode(), b) && (err != nil || !reflect.DeepEqual(full.Gates.Ledger, fast)) {
			t.Fatalf("DecodeState read %+v, LedgerOf %+v (%v)", full.Gates.Ledger, fast, err)
		}
	})
}

// FuzzScanGates: whatever scanGates reads, it reads as the general way
// does, and it reads nothing that is not JSON.
func FuzzScanGates(f *testing.F) {
	f.Add(started(&testing.T{}).Encode())
	f.Add([]byte(`{"format":1,"gates":{"ledger":{"run":"r","goal":"a \\"b\\" \\u00e9","phases":[{"status":"PASS","acknowledged":true},{},{},{"reason":"x"}]},"track":[1.5,-2,"s",null,false]},"conflicts":[{"phase":2,"event":"e","type":"t"},{"event":"f"}],"status":"open","view":{"a":[{}]}}`))
	f.Add([]byte(`{"format":1.0,"gates":{"ledger":{"phases":[{},{},{},{}]}},"x":1e5}`))
	f.Add([]byte(`{"format":1,"format":1,"gates":{"ledger":{"phases":[{},{},{},{}]}}}`))
	f.Add([]byte(`{"format":1,"gates":{"ledger":{"phases":[{"status":7},{"acknowledged":"yes"},{},{}]}}}`))
	f.Add([]byte(`{"\u0066ormat":1,"gates":{"ledger":{"phases":[{},{},{},{}]}}}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := scanGates(b)
		if !ok {
			return
		}
		slow, err := gatesOfValues(b)
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("scanGates read %+v, the general way %+v (%v)", fast, slow, err)
		}
		if !json.Valid(b) {
			t.Fatalf("scanGates read text that is not JSON")
		}
	})
}
