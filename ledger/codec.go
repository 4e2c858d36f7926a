package ledger

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

const ledgerTitle = "# Build Gate Ledger"

// ParseError locates what is wrong in a ledger file.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Validate reports a value that crucible's line format cannot carry: a line
// break, or white space at either end (the format trims it).
func (l *Ledger) Validate() error {
	for _, f := range []struct{ what, v string }{{"Run", l.Run}, {"PipelineID", l.PipelineID}, {"Goal", l.Goal}, {"Mode", l.Mode}} {
		if bad := badValue(f.v); bad != "" {
			return fmt.Errorf("%s %s", f.what, bad)
		}
	}
	for _, p := range Phases {
		e := l.Entry(p)
		if !e.Status.Valid() {
			return fmt.Errorf("phase %d: invalid status %q", p, e.Status)
		}
		var buf [maxFields]field
		for _, f := range e.fields(buf[:0]) {
			if bad := badValue(f.value); bad != "" {
				return fmt.Errorf("phase %d %s %s", p, f.key, bad)
			}
		}
	}
	return nil
}

// badValue says what keeps v from being a ledger line's value, "" if nothing.
func badValue(v string) string {
	switch {
	case strings.ContainsAny(v, "\r\n"):
		return "contains a line break"
	case v != strings.TrimSpace(v):
		return "has white space at an end"
	}
	return ""
}

type field struct{ key, value string }

// fields lists the block's lines in crucible's key order; empty ones are
// left out. They are appended to buf, which has room for all of them, so
// that a caller's array can hold them: every ledger action checks them.
func (e *Entry) fields(buf []field) []field {
	out := append(buf, field{"Status", string(e.Status)})
	add := func(key, value string) {
		if value != "" {
			out = append(out, field{key, value})
		}
	}
	add("Gate", e.Gate)
	add("Artifact", e.Artifact)
	add("Tasks", e.Tasks)
	add("Reason", e.Reason)
	if e.Acknowledged || e.Status == Skipped {
		add("Acknowledged", strconv.FormatBool(e.Acknowledged))
	}
	add("PipelineID", e.PipelineID)
	return out
}

// maxFields is how many lines a block has at most.
const maxFields = 7

// Render writes l as build-gate-ledger.md. Values must pass Validate.
func Render(l *Ledger) []byte {
	var b bytes.Buffer
	b.WriteString(ledgerTitle + "\n")
	for _, f := range []field{{"Run", l.Run}, {"PipelineID", l.PipelineID}, {"Goal", l.Goal}, {"Mode", l.Mode}} {
		writeField(&b, f)
	}
	for _, p := range Phases {
		fmt.Fprintf(&b, "\n## Phase %d: %s\n", p, p.Name())
		var buf [maxFields]field
		for _, f := range l.Entry(p).fields(buf[:0]) {
			writeField(&b, f)
		}
	}
	return b.Bytes()
}

func writeField(b *bytes.Buffer, f field) {
	b.WriteString(f.key)
	b.WriteByte(':')
	if f.value != "" {
		b.WriteByte(' ')
		b.WriteString(f.value)
	}
	b.WriteByte('\n')
}

// Parse reads a build-gate-ledger.md: the title, the four header keys, then
// exactly four phase blocks in order with known keys only.
func Parse(data []byte) (Ledger, error) {
	var l Ledger
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	phase := Phase(0) // 0 while in the header
	seenTitle := false
	seen := map[string]bool{}
	var headerLine [5]int // the line of each phase's "## Phase" header
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if strings.ContainsRune(line, '\r') {
			// A reader that breaks lines at a lone CR would see another line here.
			return Ledger{}, &ParseError{Line: n, Msg: "carriage return inside a line"}
		}
		fail := func(format string, args ...any) (Ledger, error) {
			return Ledger{}, &ParseError{Line: n, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case line == "":
			continue
		case !seenTitle:
			if line != ledgerTitle {
				return fail("want %q, found %q", ledgerTitle, clip(line))
			}
			seenTitle = true
			continue
		case strings.HasPrefix(line, "## "):
			want := phase + 1
			if want > Completion || line != fmt.Sprintf("## Phase %d: %s", want, want.Name()) {
				if want > Completion {
					return fail("unexpected section %q after Phase 4", clip(line))
				}
				return fail("want %q, found %q", fmt.Sprintf("## Phase %d: %s", want, want.Name()), clip(line))
			}
			phase = want
			headerLine[phase] = n
			seen = map[string]bool{}
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(key, " \t") {
			return fail("want a %q line, found %q", "Key: value", clip(line))
		}
		value = strings.TrimSpace(value)
		if seen[key] {
			return fail("duplicate key %q", key)
		}
		seen[key] = true
		if phase == 0 {
			switch key {
			case "Run":
				l.Run = value
			case "PipelineID":
				l.PipelineID = value
			case "Goal":
				l.Goal = value
			case "Mode":
				l.Mode = value
			default:
				return fail("unknown header key %q", key)
			}
			continue
		}
		e := l.Entry(phase)
		switch key {
		case "Status":
			s := Status(value)
			if !s.Valid() {
				return fail("unknown status %q", clip(value))
			}
			e.Status = s
		case "Gate":
			e.Gate = value
		case "Artifact":
			e.Artifact = value
		case "Tasks":
			e.Tasks = value
		case "Reason":
			e.Reason = value
		case "Acknowledged":
			if value != "true" && value != "false" {
				return fail("Acknowledged must be true or false, found %q", clip(value))
			}
			e.Acknowledged = value == "true"
		case "PipelineID":
			e.PipelineID = value
		default:
			return fail("unknown key %q in Phase %d", key, phase)
		}
	}
	if !seenTitle {
		return Ledger{}, &ParseError{Line: 1, Msg: "not a gate ledger: no " + strconv.Quote(ledgerTitle) + " line"}
	}
	if phase != Completion {
		last := len(lines) // the last line; a final line break does not start one
		if last > 1 && lines[last-1] == "" {
			last--
		}
		return Ledger{}, &ParseError{Line: last, Msg: fmt.Sprintf("want four phase blocks, found %d", phase)}
	}
	for _, p := range Phases {
		if l.Entry(p).Status == "" {
			return Ledger{}, &ParseError{Line: headerLine[p], Msg: fmt.Sprintf("Phase %d has no Status", p)}
		}
	}
	return l, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
