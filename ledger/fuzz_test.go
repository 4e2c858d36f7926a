package ledger

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(freshGolden))
	f.Add([]byte(strings.ReplaceAll(freshGolden, "\n", "\r\n")))
	f.Add([]byte(freshGolden[:len(freshGolden)/2]))
	f.Add([]byte("# Build Gate Ledger\n## Phase 1: Design\nStatus: SKIPPED\nAcknowledged: true\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			n := strings.Count(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") + 1
			if pe.Line < 1 || pe.Line > n {
				t.Fatalf("error line %d outside 1..%d: %v", pe.Line, n, err)
			}
			if !reflect.DeepEqual(l, Ledger{}) {
				t.Fatalf("partial ledger returned with an error: %+v", l)
			}
			return
		}
		for _, p := range Phases {
			if !l.Entry(p).Status.Valid() {
				t.Fatalf("phase %d parsed with invalid status %q", p, l.Entry(p).Status)
			}
		}
		r1 := Render(&l)
		l2, err := Parse(r1)
		if err != nil {
			t.Fatalf("Parse(Render(Parse(x))) failed: %v\nrendered:\n%q", err, r1)
		}
		if !reflect.DeepEqual(l2, l) {
			t.Fatalf("Parse(Render(l)) != l\n got  %+v\n want %+v", l2, l)
		}
		if r2 := Render(&l2); !bytes.Equal(r1, r2) {
			t.Fatalf("Render not stable:\n%q\n%q", r1, r2)
		}
	})
}

// representable is Validate's rule written independently: no line break
// and no white space at either end, per value.
func representable(v string) bool {
	if strings.ContainsAny(v, "\r\n") {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(v); v != "" && unicode.IsSpace(r) {
		return false
	}
	if r, _ := utf8.DecodeLastRuneInString(v); v != "" && unicode.IsSpace(r) {
		return false
	}
	return true
}

// fuzzLedger builds a ledger from fuzzed strings; shape picks each phase's
// status (7 of 8 values valid), which value fills each optional field, and
// Acknowledged.
func fuzzLedger(run, pid, goal, mode, v1, v2, v3 string, shape uint64) Ledger {
	l := Ledger{Run: run, PipelineID: pid, Goal: goal, Mode: mode}
	vals := [4]string{"", v1, v2, v3}
	for i := range l.Phases {
		bits := shape >> (16 * i)
		e := &l.Phases[i]
		if s := int(bits & 7); s < len(Statuses) {
			e.Status = Statuses[s]
		} else {
			e.Status = Status(v1) // usually invalid
		}
		e.Gate = vals[bits>>3&3]
		e.Artifact = vals[bits>>5&3]
		e.Tasks = vals[bits>>7&3]
		e.Reason = vals[bits>>9&3]
		e.PipelineID = vals[bits>>11&3]
		e.Acknowledged = bits>>13&1 == 1
	}
	return l
}

func FuzzRoundTrip(f *testing.F) {
	f.Add("run-1", "pipe-1", "goal", "mode", "2026-01-01T00:00:00Z", "docs/a.md", "why: because", uint64(0))
	f.Add("", "", "", "", "", "", "", uint64(0x3fff_3fff_3fff_3fff))
	f.Add("r", "p", "g", "m", " lead", "trail ", "a\nb", uint64(0x1234_5678_9abc_def0))
	f.Add("r\r", "p", "ü", "## Phase 1: Design", "Status: PASS", "\u00a0x", "x\u2028", uint64(0x2a2a_1515_0707_3838))
	f.Add("# Build Gate Ledger", ":", "a:b", "\t", "true", "SKIPPED", "x\x00\xff", uint64(0xffff_ffff_ffff_ffff))
	f.Fuzz(func(t *testing.T, run, pid, goal, mode, v1, v2, v3 string, shape uint64) {
		l := fuzzLedger(run, pid, goal, mode, v1, v2, v3, shape)
		ok := true
		for _, v := range []string{l.Run, l.PipelineID, l.Goal, l.Mode} {
			ok = ok && representable(v)
		}
		for _, e := range l.Phases {
			ok = ok && e.Status.Valid()
			for _, v := range []string{e.Gate, e.Artifact, e.Tasks, e.Reason, e.PipelineID} {
				ok = ok && representable(v)
			}
		}
		err := l.Validate()
		if ok != (err == nil) {
			t.Fatalf("Validate() = %v, but representable = %v for %+v", err, ok, l)
		}
		if err != nil {
			return
		}
		data := Render(&l)
		got, err := Parse(data)
		if err != nil {
			t.Fatalf("Parse(Render(l)): %v\n%q", err, data)
		}
		if !reflect.DeepEqual(got, l) {
			t.Fatalf("Parse(Render(l)) != l\n got  %+v\n want %+v\n%q", got, l, data)
		}
	})
}
