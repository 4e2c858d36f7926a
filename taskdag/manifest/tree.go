package manifest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/git-crucible/git-crucible/internal/tomlpos"
	"go.yaml.in/yaml/v3"
)

// MaxSize is the largest manifest accepted, in bytes: real ones are a few
// kilobytes, and the bound keeps a hostile file from costing much.
const MaxSize = 1 << 20

// node is one value of a manifest, whichever syntax it came in, with the
// line it starts on: YAML and TOML both become this tree, so one decoder
// reads the schema and reports lines for both.
type node struct {
	line  int
	kind  nodeKind
	tag   string // scalars: "str", "int", "bool", "float", "null", "time"
	text  string // scalars
	keys  []pair // mappings, in document order
	items []*node
}

type nodeKind int

const (
	scalarNode nodeKind = iota
	mapNode
	listNode
)

type pair struct {
	key  string
	line int
	val  *node
}

func (n *node) describe() string {
	switch n.kind {
	case mapNode:
		return "a mapping"
	case listNode:
		return "a list"
	}
	if n.tag == "null" {
		return "nothing"
	}
	return strconv.Quote(clip(n.text))
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 60
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// yamlTree parses YAML into a node tree, refusing aliases (so nothing is
// ever expanded) and duplicate keys (which one counts would be a guess).
func yamlTree(data []byte) (*node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, errorf(0, "empty manifest")
	}
	return fromYAML(doc.Content[0])
}

// yamlError turns the library's "yaml: line N: msg" into an *Error.
func yamlError(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				return errorf(n, "%s", text)
			}
		}
	}
	return errorf(0, "%s", msg)
}

func fromYAML(y *yaml.Node) (*node, error) {
	n := &node{line: y.Line}
	switch y.Kind {
	case yaml.AliasNode:
		return nil, errorf(y.Line, "YAML aliases are not accepted in a manifest (*%s)", clip(y.Value))
	case yaml.ScalarNode:
		n.kind, n.text = scalarNode, y.Value
		n.tag = strings.TrimPrefix(y.ShortTag(), "!!")
		if n.tag == "timestamp" {
			n.tag = "time"
		}
	case yaml.SequenceNode:
		n.kind = listNode
		for _, c := range y.Content {
			item, err := fromYAML(c)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
	case yaml.MappingNode:
		n.kind = mapNode
		seen := map[string]int{}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, errorf(k.Line, "a key must be a plain name")
			}
			if first, dup := seen[k.Value]; dup {
				return nil, errorf(k.Line, "duplicate key %q (first on line %d)", clip(k.Value), first)
			}
			seen[k.Value] = k.Line
			v, err := fromYAML(y.Content[i+1])
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, pair{key: k.Value, line: k.Line, val: v})
		}
	default:
		return nil, errorf(y.Line, "want a mapping of keys")
	}
	return n, nil
}

// tomlTree parses TOML into a node tree; BurntSushi's decoder checks the
// syntax and tomlpos finds each key's line.
func tomlTree(data []byte) (*node, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		if pe, ok := err.(toml.ParseError); ok {
			return nil, errorf(pe.Position.Line, "%s", pe.Message)
		}
		return nil, errorf(0, "%v", err)
	}
	t := &tomlLines{lines: tomlpos.Lines(data)}
	return t.value("", doc), nil
}

type tomlLines struct{ lines map[string]int }

func (t *tomlLines) value(path string, v any) *node {
	n := &node{line: tomlpos.LineOf(t.lines, path)}
	switch v := v.(type) {
	case map[string]any:
		n.kind = mapNode
		for k, val := range v {
			p := tomlpos.Join(path, k)
			n.keys = append(n.keys, pair{key: k, line: tomlpos.LineOf(t.lines, p), val: t.value(p, val)})
		}
		sort.SliceStable(n.keys, func(i, j int) bool {
			a, b := n.keys[i], n.keys[j]
			if a.line != b.line {
				return a.line < b.line
			}
			return a.key < b.key
		})
	case []map[string]any:
		n.kind = listNode
		for i, item := range v {
			n.items = append(n.items, t.value(path+"."+strconv.Itoa(i), item))
		}
	case []any:
		n.kind = listNode
		for i, item := range v {
			n.items = append(n.items, t.value(path+"."+strconv.Itoa(i), item))
		}
	case string:
		n.tag, n.text = "str", v
	case int64:
		n.tag, n.text = "int", strconv.FormatInt(v, 10)
	case bool:
		n.tag, n.text = "bool", strconv.FormatBool(v)
	case float64:
		n.tag, n.text = "float", strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		n.tag, n.text = "time", tomlTime(v)
	default:
		n.tag, n.text = "str", fmt.Sprint(v)
	}
	return n
}

// tomlTime writes a TOML date back as the manifest had it, for dates
// (the seed's created field) at least.
func tomlTime(v time.Time) string {
	if v.Location().String() == "date-local" {
		return v.Format(time.DateOnly)
	}
	return v.Format(time.RFC3339Nano)
}
