package report

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Verdicts of a level's critique.
const (
	Accepted  = "accepted"
	NeedsWork = "needs-work"
)

// Severities of a critique's issues: only blocking ones make a task
// needs-work.
const (
	Blocking = "blocking"
	Warning  = "warning"
	Nit      = "nit"
)

// Critique is a level's gate critique: the dispatch seed's
// gate-critique.yaml.
type Critique struct {
	Tasks    []string // the tasks reviewed
	Verdict  string   // Accepted or NeedsWork
	Issues   []Issue
	NewTests []NewTest // test files the critique wrote, for their task's commit
	Notes    string
}

// Issue is one problem the critique found in a task's work.
type Issue struct {
	Task        string
	Severity    string // Blocking, Warning or Nit
	File        string
	Description string
	Line        int // where the issue is in the report
}

// NewTest is a test file the critique created for a task.
type NewTest struct {
	Task, File string
	Line       int
}

// NeedsWork lists the tasks with a blocking issue, in the order of their
// first one: the tasks the amendment round fixes.
func (c Critique) NeedsWork() []string {
	var out []string
	for _, is := range c.Issues {
		if is.Severity == Blocking && !slices.Contains(out, is.Task) {
			out = append(out, is.Task)
		}
	}
	return out
}

// IssuesOf lists task's issues.
func (c Critique) IssuesOf(task string) []Issue {
	var out []Issue
	for _, is := range c.Issues {
		if is.Task == task {
			out = append(out, is)
		}
	}
	return out
}

// ParseCritique reads a gate critique. A verdict is required, and must
// agree with the issues: needs-work names a blocking issue, accepted none
// (a critique that contradicts itself is not to be guessed at). An issue
// or new test of a task the critique does not list under tasks is an
// error when it lists any. Keys it does not know (validation,
// skipped-validation) are ignored.
func ParseCritique(data []byte) (Critique, error) {
	root, err := document(data)
	if err != nil {
		return Critique{}, err
	}
	var c Critique
	verdictLine := 0
	if _, err := decode(root, map[string]reader{
		"tasks": strs(&c.Tasks),
		"verdict": func(f field) (err error) {
			verdictLine = f.line
			c.Verdict, err = text(f)
			return err
		},
		"issues": func(f field) (err error) { c.Issues, err = issues(f); return err },
		"new-tests": func(f field) (err error) {
			c.NewTests, err = newTests(f)
			return err
		},
		"notes": str(&c.Notes),
	}); err != nil {
		return Critique{}, err
	}
	switch c.Verdict = strings.ToLower(strings.TrimSpace(c.Verdict)); {
	case verdictLine == 0:
		return Critique{}, errorf(root.Line, "no verdict: a critique says accepted or needs-work")
	case c.Verdict != Accepted && c.Verdict != NeedsWork:
		return Critique{}, errorf(verdictLine, "verdict: want accepted or needs-work, found %q", clip(c.Verdict))
	case c.Verdict == NeedsWork && len(c.NeedsWork()) == 0:
		return Critique{}, errorf(verdictLine, "verdict needs-work with no blocking issue: only a blocking issue makes a task needs-work")
	case c.Verdict == Accepted && len(c.NeedsWork()) > 0:
		return Critique{}, errorf(verdictLine, "verdict accepted with a blocking issue (task %s): a blocking issue makes its task needs-work", clip(c.NeedsWork()[0]))
	}
	if len(c.Tasks) > 0 {
		for _, is := range c.Issues {
			if !slices.Contains(c.Tasks, is.Task) {
				return Critique{}, errorf(is.Line, "issue of task %q, which tasks does not list", clip(is.Task))
			}
		}
		for _, nt := range c.NewTests {
			if !slices.Contains(c.Tasks, nt.Task) {
				return Critique{}, errorf(nt.Line, "new test %s of task %q, which tasks does not list", clip(nt.File), clip(nt.Task))
			}
		}
	}
	return c, nil
}

// items returns a list field's mappings; null is none.
func items(f field, what string) ([]*yaml.Node, error) {
	v := f.value
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, errorf(v.Line, "%s: want a list of %s, found %s", f.key, what, kind(v))
	}
	for _, item := range v.Content {
		if item.Kind != yaml.MappingNode {
			return nil, errorf(item.Line, "%s: want %s (a mapping), found %s", f.key, what, kind(item))
		}
	}
	return v.Content, nil
}

func issues(f field) ([]Issue, error) {
	nodes, err := items(f, "issues")
	if err != nil {
		return nil, err
	}
	out := make([]Issue, 0, len(nodes))
	for _, n := range nodes {
		is := Issue{Line: n.Line}
		if _, err := decode(n, map[string]reader{
			"task-id":     str(&is.Task),
			"severity":    str(&is.Severity),
			"file":        str(&is.File),
			"description": str(&is.Description),
		}); err != nil {
			return nil, err
		}
		is.Severity = strings.ToLower(strings.TrimSpace(is.Severity))
		switch {
		case strings.TrimSpace(is.Task) == "":
			return nil, errorf(n.Line, "issues: an issue without its task-id")
		case is.Severity != Blocking && is.Severity != Warning && is.Severity != Nit:
			return nil, errorf(n.Line, "issues: severity: want blocking, warning or nit, found %q", clip(is.Severity))
		case strings.TrimSpace(is.Description) == "":
			return nil, errorf(n.Line, "issues: an issue without a description")
		}
		out = append(out, is)
	}
	return out, nil
}

func newTests(f field) ([]NewTest, error) {
	nodes, err := items(f, "new tests")
	if err != nil {
		return nil, err
	}
	out := make([]NewTest, 0, len(nodes))
	for _, n := range nodes {
		nt := NewTest{Line: n.Line}
		if _, err := decode(n, map[string]reader{"task-id": str(&nt.Task), "file": str(&nt.File)}); err != nil {
			return nil, err
		}
		if strings.TrimSpace(nt.Task) == "" || strings.TrimSpace(nt.File) == "" {
			return nil, errorf(n.Line, "new-tests: an entry needs a task-id and a file")
		}
		out = append(out, nt)
	}
	return out, nil
}
