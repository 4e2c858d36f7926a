package hooks

// An edit of a JSON document that keeps what it does not change: members
// stay in their order, and every value is kept as its bytes (numbers,
// string escapes), so that a settings file written by someone else reads
// the same after our entries went in or out. Only whitespace is remade:
// the document is written back with two-space indentation, as Claude Code
// writes its own (JSON.stringify(settings, null, 2)).

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jsonMember is a member of an object: its key (as written) and value.
type jsonMember struct {
	rawKey []byte
	key    string
	value  []byte
}

// jsonObject is an object's members, in order.
type jsonObject []jsonMember

// parseJSONObject splits a valid JSON object into its members. A value
// that is not an object is an error; so is a key given twice (which value
// counts is a reader's guess).
func parseJSONObject(raw []byte) (jsonObject, error) {
	s := jsonScanner{b: raw}
	s.space()
	if !s.eat('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	obj := jsonObject{}
	seen := map[string]bool{}
	for s.space(); !s.eat('}'); s.space() {
		if len(obj) > 0 && !s.eat(',') {
			return nil, fmt.Errorf("not a JSON object")
		}
		s.space()
		rawKey := s.value()
		var key string
		if err := json.Unmarshal(rawKey, &key); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		if seen[key] {
			return nil, fmt.Errorf("the key %q is given twice", key)
		}
		seen[key] = true
		s.space()
		if !s.eat(':') {
			return nil, fmt.Errorf("not a JSON object")
		}
		s.space()
		obj = append(obj, jsonMember{rawKey: rawKey, key: key, value: s.value()})
	}
	return obj, nil
}

// parseJSONArray splits a valid JSON array into its elements.
func parseJSONArray(raw []byte) ([][]byte, error) {
	s := jsonScanner{b: raw}
	s.space()
	if !s.eat('[') {
		return nil, fmt.Errorf("not a JSON array")
	}
	elems := [][]byte{}
	for s.space(); !s.eat(']'); s.space() {
		if len(elems) > 0 && !s.eat(',') {
			return nil, fmt.Errorf("not a JSON array")
		}
		s.space()
		elems = append(elems, s.value())
	}
	return elems, nil
}

// get is the index of key's member, -1 when there is none.
func (o jsonObject) get(key string) int {
	for i, m := range o {
		if m.key == key {
			return i
		}
	}
	return -1
}

// set gives key the value, in its place, or as a new last member.
func (o jsonObject) set(key string, value []byte) jsonObject {
	if i := o.get(key); i >= 0 {
		o[i].value = value
		return o
	}
	rawKey, _ := json.Marshal(key)
	return append(o, jsonMember{rawKey: rawKey, key: key, value: value})
}

// remove drops key's member.
func (o jsonObject) remove(key string) jsonObject {
	if i := o.get(key); i >= 0 {
		return append(o[:i:i], o[i+1:]...)
	}
	return o
}

// bytes is the object written back compactly, its values as they were.
func (o jsonObject) bytes() []byte {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, m.rawKey...), ':'), m.value...)
	}
	return append(b, '}')
}

// jsonArrayBytes is an array of elements written back.
func jsonArrayBytes(elems [][]byte) []byte {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// indentJSON is a document as written to a file: indented by two spaces,
// with a final newline.
func indentJSON(raw []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		panic(err) // raw is made of valid values
	}
	return append(out.Bytes(), '\n')
}

// jsonScanner walks a document json.Valid accepted.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *jsonScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// value is the next value's bytes: a string, a number or literal, or an
// object or array with everything in it.
func (s *jsonScanner) value() []byte {
	start, depth := s.i, 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
		case c == '{' || c == '[':
			depth++
			s.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return s.b[start:s.i]
			}
			depth--
			s.i++
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return s.b[start:s.i]
		default:
			s.i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return s.b[start:s.i]
		}
	}
	return s.b[start:s.i]
}
