// Package tomlpos finds the line of each key of a TOML document: BurntSushi's
// decoder says which keys it met, not where, and an error must name its line.
package tomlpos

import (
	"strconv"
	"strings"
)

// Lines maps every table and key of a TOML document to its line, for
// errors in what BurntSushi's decoder accepted (its MetaData has key order
// but no positions). A path joins the keys with dots and an array of
// tables' element index after its key: "phases.0.steps.2.kind". Keys inside
// inline tables and inline arrays are not listed: LineOf falls back to the
// enclosing key. The scanner never fails: on text it does not understand
// it skips to the next line.
func Lines(src []byte) map[string]int {
	s := &scanner{src: src, line: 1, lines: map[string]int{}, arrays: map[string]int{}}
	s.run()
	return s.lines
}

type scanner struct {
	src    []byte
	pos    int
	line   int
	table  string         // path of the current table
	lines  map[string]int // path -> line
	arrays map[string]int // path of an array of tables -> its current index
}

func (s *scanner) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

func (s *scanner) record(path string) {
	if _, ok := s.lines[path]; !ok {
		s.lines[path] = s.line
	}
}

func (s *scanner) run() {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; c {
		case ' ', '\t', '\r':
			s.pos++
		case '\n':
			s.line++
			s.pos++
		case '#':
			s.skipLine()
		case '[':
			s.header()
		default:
			s.keyValue()
		}
	}
}

// skipLine moves to the newline ending the current line (not past it).
func (s *scanner) skipLine() {
	for s.pos < len(s.src) && s.src[s.pos] != '\n' {
		s.pos++
	}
}

func (s *scanner) header() {
	array := s.peek(1) == '['
	s.pos++
	if array {
		s.pos++
	}
	keys := s.key()
	s.skipLine()
	if len(keys) == 0 {
		return
	}
	if !array {
		s.table = s.resolve(keys)
		s.record(s.table)
		return
	}
	path := Join(s.resolve(keys[:len(keys)-1]), keys[len(keys)-1])
	idx, seen := s.arrays[path]
	if seen {
		idx++
	}
	s.arrays[path] = idx
	s.record(path)
	s.table = path + "." + strconv.Itoa(idx)
	s.record(s.table)
}

// resolve turns a header's keys into a path, indexing each array of
// tables it passes through by its current element.
func (s *scanner) resolve(keys []string) string {
	path := ""
	for _, k := range keys {
		path = Join(path, k)
		if idx, ok := s.arrays[path]; ok {
			path += "." + strconv.Itoa(idx)
		}
	}
	return path
}

// Join is the path of key b inside path a, as Lines names it.
func Join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func (s *scanner) keyValue() {
	keys := s.key()
	if len(keys) == 0 || s.peek(0) != '=' {
		s.skipLine()
		return
	}
	path := s.table
	for _, k := range keys {
		path = Join(path, k)
	}
	s.record(path)
	s.pos++
	s.value()
}

// key reads a dotted key of bare and quoted parts, and the blanks after it.
func (s *scanner) key() []string {
	var keys []string
	for {
		s.blanks()
		var k string
		switch c := s.peek(0); {
		case c == '"' || c == '\'':
			start := s.pos + 1
			s.str()
			k = string(s.src[start:max(start, s.pos-1)])
		case isBare(c):
			start := s.pos
			for isBare(s.peek(0)) {
				s.pos++
			}
			k = string(s.src[start:s.pos])
		default:
			return keys
		}
		keys = append(keys, k)
		s.blanks()
		if s.peek(0) != '.' {
			return keys
		}
		s.pos++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (s *scanner) blanks() {
	for c := s.peek(0); c == ' ' || c == '\t'; c = s.peek(0) {
		s.pos++
	}
}

// value skips a value, across lines for arrays, inline tables and
// multi-line strings, up to the newline that ends it.
func (s *scanner) value() {
	depth := 0
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; c {
		case '"', '\'':
			s.str()
		case '[', '{':
			depth++
			s.pos++
		case ']', '}':
			depth--
			s.pos++
		case '#':
			s.skipLine()
		case '\n':
			if depth <= 0 {
				return
			}
			s.line++
			s.pos++
		default:
			s.pos++
		}
	}
}

// str skips a basic, literal or multi-line string, counting its newlines.
func (s *scanner) str() {
	q := s.src[s.pos]
	if s.peek(1) == q && s.peek(2) == q {
		s.pos += 3
		for s.pos < len(s.src) {
			switch c := s.src[s.pos]; {
			case c == '\\' && q == '"':
				if s.peek(1) == '\n' {
					s.line++
				}
				s.pos += 2
			case c == '\n':
				s.line++
				s.pos++
			case c == q && s.peek(1) == q && s.peek(2) == q:
				s.pos += 3
				// Up to two more quotes belong to the string: """a""""
				for i := 0; i < 2 && s.peek(0) == q; i++ {
					s.pos++
				}
				return
			default:
				s.pos++
			}
		}
		return
	}
	s.pos++
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == '\\' && q == '"':
			s.pos += 2
		case c == q:
			s.pos++
			return
		case c == '\n':
			return
		default:
			s.pos++
		}
	}
}

// LineOf is the line of path, or of its nearest listed ancestor; 0 when
// none is listed.
func LineOf(lines map[string]int, path string) int {
	for {
		if l, ok := lines[path]; ok {
			return l
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
}
