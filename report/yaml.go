package report

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxSize is the largest report accepted, in bytes. Real reports are a few
// kilobytes; the limit bounds what a runaway agent can make the engine parse.
const MaxSize = 1 << 20

// Error is what is wrong with a report. Line is 1-based, or 0 when the
// problem is the whole input (too large, empty).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("report: line %d: %s", e.Line, e.Msg)
	}
	return "report: " + e.Msg
}

func errorf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// document parses data and returns its top-level mapping.
func document(data []byte) (*yaml.Node, error) {
	if len(data) > MaxSize {
		return nil, errorf(0, "%d bytes, over the %d-byte limit", len(data), MaxSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, errorf(0, "empty report")
	}
	root := doc.Content[0]
	if err := refuseAliases(root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, errorf(root.Line, "want a mapping of keys, found %s", kind(root))
	}
	return root, nil
}

// yamlError turns the library's "yaml: line N: msg" into an *Error.
func yamlError(err error) *Error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				return errorf(n, "%s", text)
			}
		}
	}
	return errorf(0, "%s", msg)
}

// refuseAliases rejects any alias: the node tree keeps them unexpanded, and
// refusing them here means nothing downstream ever expands one.
func refuseAliases(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		return errorf(n.Line, "YAML aliases are not accepted in a report (*%s)", clip(n.Value))
	}
	for _, c := range n.Content {
		if err := refuseAliases(c); err != nil {
			return err
		}
	}
	return nil
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", clip(n.Value))
	}
	return "a document"
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// field is one key of a mapping, with the node of its value.
type field struct {
	key   string
	line  int
	value *yaml.Node
}

// fields lists m's scalar keys in order (other keys cannot be crucible's and
// are skipped). A key that appears twice is an error: which one counts
// would be a guess.
func fields(m *yaml.Node) ([]field, error) {
	var out []field
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if first, dup := seen[k.Value]; dup {
			return nil, errorf(k.Line, "duplicate key %q (first on line %d)", clip(k.Value), first)
		}
		seen[k.Value] = k.Line
		out = append(out, field{key: k.Value, line: k.Line, value: v})
	}
	return out, nil
}

// reader reads a field's value into its place.
type reader func(field) error

func str(p *string) reader { return func(f field) (err error) { *p, err = text(f); return err } }

func strs(p *[]string) reader { return func(f field) (err error) { *p, err = texts(f); return err } }

// decode reads m's keys that readers names, in the order m has them, and
// returns its fields; the other keys are ignored.
func decode(m *yaml.Node, readers map[string]reader) ([]field, error) {
	fs, err := fields(m)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if read, ok := readers[f.key]; ok {
			if err := read(f); err != nil {
				return nil, err
			}
		}
	}
	return fs, nil
}

// lookup returns the field named key, or nil.
func lookup(fs []field, key string) *field {
	for i := range fs {
		if fs[i].key == key {
			return &fs[i]
		}
	}
	return nil
}

// text reads a scalar as a string; null is "".
func text(f field) (string, error) {
	if isNull(f.value) {
		return "", nil
	}
	if f.value.Kind != yaml.ScalarNode {
		return "", errorf(f.value.Line, "%s: want a string, found %s", f.key, kind(f.value))
	}
	return f.value.Value, nil
}

// texts reads a list of scalars; null is an empty list, and a lone scalar a
// list of one (an easy slip for an agent to make, with one meaning).
func texts(f field) ([]string, error) {
	v := f.value
	switch {
	case isNull(v):
		return nil, nil
	case v.Kind == yaml.ScalarNode:
		return []string{v.Value}, nil
	case v.Kind != yaml.SequenceNode:
		return nil, errorf(v.Line, "%s: want a list of strings, found %s", f.key, kind(v))
	}
	out := make([]string, 0, len(v.Content))
	for _, item := range v.Content {
		if item.Kind != yaml.ScalarNode || isNull(item) {
			return nil, errorf(item.Line, "%s: want a list of strings, found %s in it", f.key, kind(item))
		}
		out = append(out, item.Value)
	}
	return out, nil
}

// plain converts a node to plain Go values: map[string]any, []any and the
// scalars YAML resolves (string, int, float64, bool, nil).
func plain(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, errorf(k.Line, "want a string key, found %s", kind(k))
			}
			if _, dup := m[k.Value]; dup {
				return nil, errorf(k.Line, "duplicate key %q", clip(k.Value))
			}
			v, err := plain(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := plain(c)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	if n.ShortTag() == "!!str" {
		return n.Value, nil // most scalars, without a decoder each
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, yamlError(err)
	}
	return v, nil
}

// clip shortens s for an error message, at a rune boundary.
func clip(s string) string {
	const max = 60
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-3]) + "..."
}
