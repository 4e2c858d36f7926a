package report

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/git-crucible/git-crucible/internal/lazy"
)

// Finding is one issue a reviewer or red-team round raised.
type Finding struct {
	Title  string
	File   string // where, as written (may carry a line: "a.go:12")
	Detail string
	Line   int // where the finding is in the report
}

// Findings is a review or red-team round's report, by severity.
type Findings struct {
	Fatal, Significant, Minor []Finding
	// Architectural are crucible's architectural concerns: beyond what a
	// fix round may settle, they go to a person at once.
	Architectural []Finding
}

// severityKeys maps the keys under findings: to a severity. Crucible's code
// reviewers say critical and important where the red team says fatal and
// significant; dropping their lists as unknown keys would pass a gate on
// findings never counted.
var severityKeys = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"fatal": "fatal", "critical": "fatal",
		"significant": "significant", "important": "significant",
		"minor":         "minor",
		"architectural": "architectural", "architectural-concerns": "architectural", "architectural-concern": "architectural",
	}
}}

// ParseFindings reads a reviewer's or red-team round's report: a findings
// key holding fatal, significant and minor lists, each item a mapping
// (title, file, detail) or a plain string taken as its title. A report
// without findings is an error, and so is "findings:" with nothing under
// it (a report cut short cannot be told from a clean one); empty lists,
// or "findings: {}", are a clean round. Keys are matched without regard
// to case; a severity it does not know is an error when it lists
// anything (findings it would not count must not pass a gate), and
// ignored when empty.
func ParseFindings(data []byte) (Findings, error) {
	root, err := document(data)
	if err != nil {
		return Findings{}, err
	}
	fs, err := fields(root)
	if err != nil {
		return Findings{}, err
	}
	f := lookup(fs, "findings")
	if f == nil {
		return Findings{}, errorf(root.Line, "no findings: a review round's report lists them (fatal, significant, minor), empty lists when clean")
	}
	v := f.value
	if isNull(v) {
		return Findings{}, errorf(v.Line, "findings: nothing under it: a clean round says so with empty lists (fatal: [], significant: [], minor: [])")
	}
	if v.Kind != yaml.MappingNode {
		return Findings{}, errorf(v.Line, "findings: want a mapping of fatal, significant and minor lists, found %s", kind(v))
	}
	var out Findings
	seen := map[string]int{} // severity -> line of the key that gave it
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, list := v.Content[i], v.Content[i+1]
		sev, ok := severityKeys.Get()[strings.ToLower(k.Value)]
		if !ok || k.Kind != yaml.ScalarNode {
			if isNull(list) || list.Kind == yaml.SequenceNode && len(list.Content) == 0 {
				continue
			}
			return Findings{}, errorf(k.Line, "findings: unknown severity %q: a round's findings are fatal, significant, minor or architectural (critical and important count as fatal and significant)", clip(k.Value))
		}
		if first, dup := seen[sev]; dup {
			return Findings{}, errorf(k.Line, "findings: a second %s list (first on line %d)", sev, first)
		}
		seen[sev] = k.Line
		items, err := findingList(k.Value, list)
		if err != nil {
			return Findings{}, err
		}
		switch sev {
		case "fatal":
			out.Fatal = items
		case "significant":
			out.Significant = items
		case "architectural":
			out.Architectural = items
		default:
			out.Minor = items
		}
	}
	return out, nil
}

func findingList(key string, n *yaml.Node) ([]Finding, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errorf(n.Line, "%s: want a list of findings, found %s", clip(key), kind(n))
	}
	out := make([]Finding, 0, len(n.Content))
	for _, item := range n.Content {
		f := Finding{Line: item.Line}
		switch {
		case item.Kind == yaml.ScalarNode && !isNull(item):
			f.Title = item.Value
		case item.Kind == yaml.MappingNode:
			if _, err := decode(item, map[string]reader{
				"title":  str(&f.Title),
				"file":   str(&f.File),
				"detail": str(&f.Detail),
			}); err != nil {
				return nil, err
			}
		default:
			return nil, errorf(item.Line, "%s: want a finding (title, file, detail), found %s", clip(key), kind(item))
		}
		if strings.TrimSpace(f.Title) == "" && strings.TrimSpace(f.Detail) == "" {
			return nil, errorf(item.Line, "%s: a finding with neither title nor detail", clip(key))
		}
		out = append(out, f)
	}
	return out, nil
}
