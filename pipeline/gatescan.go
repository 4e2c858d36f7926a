package pipeline

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/ledger"
)

// scanGates reads the gates out of state.json in one pass that builds
// nothing but them: decoding the state into maps was most of a ledger
// check's own work (119 of its 201 allocations). It reads the form this
// code writes, give or take spacing and member order, and checks the
// syntax of the rest as it skips it; ok is false on anything else — a
// syntax error, an escaped key, a member twice, a value of another type, a
// number that might not fit — and GatesOf decodes the state the general way.
func scanGates(b []byte) (g *Gates, ok bool) {
	s := &gateScanner{b: b}
	g = new(Gates)
	var format float64
	var seen uint64
	ok = s.members([]string{"status"}, []*string{&g.Status}, func(key []byte) bool {
		switch string(key) {
		case "format":
			var ok bool
			format, ok = s.number()
			return s.once(&seen, 1) && ok
		case "gates":
			return s.once(&seen, 2) && s.gates(&g.Ledger)
		case "conflicts":
			return s.once(&seen, 4) && s.conflicts(g)
		}
		return s.skip()
	})
	s.space()
	if !ok || s.i != len(b) || format != StateFormat || seen&2 == 0 {
		return nil, false
	}
	return g, true
}

// gateScanner walks JSON text; depth bounds its nesting.
type gateScanner struct {
	b     []byte
	i     int
	depth int
}

func (s *gateScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// next is the next byte after white space, 0 at the end.
func (s *gateScanner) next() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// once marks bit in seen, false if it was already: a member given twice.
func (s *gateScanner) once(seen *uint64, bit uint64) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// object reads an object, calling member with each key to read its value.
func (s *gateScanner) object(member func(key []byte) bool) bool {
	return s.list('{', '}', func(int) bool {
		key, ok := s.token()
		if !ok || key.escaped || s.next() != ':' {
			return false
		}
		s.i++
		return member(key.text)
	})
}

// members reads an object: its string members names[i] into *into[i],
// each at most once, the others with other.
func (s *gateScanner) members(names []string, into []*string, other func(key []byte) bool) bool {
	var seen uint64
	return s.object(func(key []byte) bool {
		for i, name := range names {
			if string(key) == name {
				return s.once(&seen, 1<<i) && s.str(into[i])
			}
		}
		return other(key)
	})
}

// array reads an array, calling item with each index to read its value.
func (s *gateScanner) array(item func(i int) bool) bool { return s.list('[', ']', item) }

// list reads what is between open and end, items separated by commas.
func (s *gateScanner) list(open, end byte, item func(i int) bool) bool {
	if s.next() != open || s.depth > 64 {
		return false
	}
	s.i++
	s.depth++
	defer func() { s.depth-- }()
	if s.next() == end {
		s.i++
		return true
	}
	for i := 0; ; i++ {
		if !item(i) {
			return false
		}
		switch s.next() {
		case ',':
			s.i++
		case end:
			s.i++
			return true
		default:
			return false
		}
	}
}

// stringToken is a string's text between its quotes.
type stringToken struct {
	text    []byte
	escaped bool
}

// token reads a string token: no control character, escapes left for
// json to check and decode.
func (s *gateScanner) token() (stringToken, bool) {
	if s.next() != '"' {
		return stringToken{}, false
	}
	start := s.i
	var t stringToken
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			t.text = s.b[start+1 : s.i-1]
			return t, true
		case c == '\\':
			t.escaped = true
			s.i++
		case c < 0x20:
			return t, false
		}
	}
	return t, false
}

// str reads a string into dst, decoding escapes and invalid UTF-8 as
// json does.
func (s *gateScanner) str(dst *string) bool {
	start := s.i
	t, ok := s.token()
	if !ok {
		return false
	}
	if !t.escaped && utf8.Valid(t.text) {
		*dst = string(t.text)
		return true
	}
	return json.Unmarshal(s.b[start:s.i], dst) == nil
}

// number reads a number as json reads it into a float64; false for a
// syntax error or one out of a float64's range.
func (s *gateScanner) number() (float64, bool) {
	text, ok := s.numberToken()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(text), 64)
	return f, err == nil
}

// numberToken reads a number's text, in JSON's grammar.
func (s *gateScanner) numberToken() ([]byte, bool) {
	s.space()
	start := s.i
	digits := func() bool {
		n := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		return s.i > n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if !digits() {
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !digits() {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !digits() {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// literal reads true, false or null.
func (s *gateScanner) literal() (string, bool) {
	s.space()
	for _, lit := range []string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return lit, true
		}
	}
	return "", false
}

// skip checks a value's syntax and goes past it. A number json could not
// read into a float64 (an exponent, 300 digits) is refused: json refuses
// one out of range anywhere in the state.
func (s *gateScanner) skip() bool {
	switch c := s.next(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(func(int) bool { return s.skip() })
	case c == '"':
		start := s.i
		t, ok := s.token()
		return ok && (!t.escaped || json.Valid(s.b[start:s.i]))
	case c == '-' || c >= '0' && c <= '9':
		text, ok := s.numberToken()
		for _, d := range text {
			ok = ok && d != 'e' && d != 'E'
		}
		return ok && len(text) < 300
	}
	_, ok := s.literal()
	return ok
}

// gates reads the gates member: its ledger, which must be there.
func (s *gateScanner) gates(l *ledger.Ledger) bool {
	var seen uint64
	return s.object(func(key []byte) bool {
		if string(key) != "ledger" {
			return s.skip()
		}
		return s.once(&seen, 1) && s.ledger(l)
	}) && seen == 1
}

// ledger reads a gate ledger with its four phases.
func (s *gateScanner) ledger(l *ledger.Ledger) bool {
	var seen uint64
	phases := 0
	return s.members([]string{"run", "pipeline_id", "goal", "mode"}, []*string{&l.Run, &l.PipelineID, &l.Goal, &l.Mode}, func(key []byte) bool {
		if string(key) != "phases" {
			return s.skip()
		}
		return s.once(&seen, 1) && s.array(func(i int) bool {
			phases++
			return i < len(l.Phases) && s.entry(&l.Phases[i])
		})
	}) && phases == len(l.Phases)
}

// entry reads one phase of a ledger.
func (s *gateScanner) entry(e *ledger.Entry) bool {
	var status string
	var seen uint64
	ok := s.members([]string{"status", "gate", "artifact", "tasks", "reason", "pipeline_id"},
		[]*string{&status, &e.Gate, &e.Artifact, &e.Tasks, &e.Reason, &e.PipelineID}, func(key []byte) bool {
			if string(key) != "acknowledged" {
				return s.skip()
			}
			lit, ok := s.literal()
			e.Acknowledged = lit == "true"
			return s.once(&seen, 1) && ok && lit != "null"
		})
	e.Status = ledger.Status(status)
	return ok
}

// conflicts reads the merge conflicts, keeping the blocking ones.
func (s *gateScanner) conflicts(g *Gates) bool {
	return s.array(func(int) bool {
		var c Conflict
		var seen uint64
		ok := s.members([]string{"event", "type", "writer", "message"}, []*string{&c.Event, &c.Type, &c.Writer, &c.Message}, func(key []byte) bool {
			if string(key) != "phase" {
				return s.skip()
			}
			f, ok := s.number()
			c.Phase = ledger.Phase(f)
			return s.once(&seen, 1) && ok
		})
		if ok && c.Blocks() {
			g.Conflicts = append(g.Conflicts, c)
		}
		return ok
	})
}
