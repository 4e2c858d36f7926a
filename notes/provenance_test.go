package notes

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestProvenanceEncode(t *testing.T) {
	for _, c := range []struct {
		p    Provenance
		want string
	}{
		{Provenance{Pipeline: "build-20261122-100000-abcdef", Phase: 1},
			`{"pipeline":"build-20261122-100000-abcdef","phase":1}`},
		{Provenance{Writer: "w-1", LedgerHead: "0123abcd", Role: "implementer", Seq: 7, Task: 3, Phase: 3, Pipeline: "p"},
			`{"pipeline":"p","phase":3,"task":3,"seq":7,"role":"implementer","ledger_head":"0123abcd","writer":"w-1"}`},
	} {
		got, err := c.p.Encode()
		if err != nil || string(got) != c.want {
			t.Errorf("Encode(%+v) = %s, %v; want %s", c.p, got, err, c.want)
		}
	}
	for _, bad := range []Provenance{{Phase: 1}, {Pipeline: "p"}, {Pipeline: "p", Phase: 1, Seq: -1}} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("Encode(%+v) accepted", bad)
		}
	}
}

// TestParseProvenance: good lines come back whatever the bad ones around
// them, unknown fields are ignored, and each bad line is reported with its
// number.
func TestParseProvenance(t *testing.T) {
	note := strings.Join([]string{
		`{"pipeline":"p","phase":2,"seq":4,"role":"planner"}`,
		``,
		`not json`,
		`{"pipeline":"q","phase":3,"task":1,"future":{"x":[1,2]},"ledger_head":"abc"}`,
		`{"pipeline":"p","phase":"two"}`,
		`{"phase":1}`,
		`null`,
		`{"pipeline":"p","phase":1} trailing`,
		`  {"pipeline":"r","phase":4}  `,
	}, "\n") + "\n"
	recs, errs := ParseProvenance([]byte(note))
	want := []Provenance{
		{Pipeline: "p", Phase: 2, Seq: 4, Role: "planner"},
		{Pipeline: "q", Phase: 3, Task: 1, LedgerHead: "abc"},
		{Pipeline: "r", Phase: 4},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("records %+v\nwant %+v", recs, want)
	}
	var lines []int
	for _, err := range errs {
		var le *LineError
		if !errors.As(err, &le) {
			t.Fatalf("error %v is no *LineError", err)
		}
		lines = append(lines, le.Line)
	}
	if !reflect.DeepEqual(lines, []int{3, 5, 6, 7, 8}) {
		t.Fatalf("bad lines reported: %v (%v)", lines, errs)
	}
	if errs[0].Error() != "line 3: not a JSON object" {
		t.Fatalf("message %q", errs[0])
	}
	if recs, errs := ParseProvenance(nil); recs != nil || errs != nil {
		t.Fatalf("empty note: %v, %v", recs, errs)
	}
}

// FuzzParseProvenance: any note parses without panicking into records and
// errors that account for every non-blank line, and every record it
// accepts encodes to one line that parses back to the same record.
func FuzzParseProvenance(f *testing.F) {
	f.Add([]byte(`{"pipeline":"p","phase":1}` + "\n"))
	f.Add([]byte(`{"pipeline":"p","phase":3,"task":2,"seq":9,"role":"implementer","ledger_head":"0123","writer":"w"}`))
	f.Add([]byte("{\"pipeline\":\"p\",\"phase\":1,\"x\":null}\n\nfree text\n{\"phase\":\"1\"}\n"))
	f.Fuzz(func(t *testing.T, note []byte) {
		recs, errs := ParseProvenance(note)
		lines := 0
		for _, l := range splitLines(note) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(recs)+len(errs) != lines {
			t.Fatalf("%d records and %d errors for %d lines", len(recs), len(errs), lines)
		}
		for _, p := range recs {
			line, err := p.Encode()
			if err != nil {
				t.Fatalf("accepted record %+v does not encode: %v", p, err)
			}
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("record encodes to several lines: %q", line)
			}
			back, errs := ParseProvenance(line)
			if len(errs) != 0 || len(back) != 1 || back[0] != p {
				t.Fatalf("%s parses back as %+v, %v", line, back, errs)
			}
		}
	})
}
