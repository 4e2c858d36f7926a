package report

import (
	"go.yaml.in/yaml/v3"
)

// Status is how a task agent says its dispatch went.
type Status string

// The statuses of the dispatch seed's output.yaml.
const (
	Completed Status = "completed"
	Failed    Status = "failed"
)

// Task is a task agent's report (implementer, fixer, design-writer,
// test-writer, plan-writer): the dispatch seed's output.yaml.
type Task struct {
	Status        Status
	FilesModified []string
	Verification  Verification
	Deviations    []Deviation
	Exports       map[string]any // as written; nil when absent
	Notes         string
	Error         string // why, when Status is Failed

	exports *yaml.Node // for Plan's line numbers
}

// Verification is output.yaml's verification-summary: the seed's mapping
// (level, evidence-files, result), or a plain string kept as Result.
type Verification struct {
	Level         string // automated | manual | review, as written
	EvidenceFiles []string
	Result        string
}

// Deviation is one way the agent departed from its plan, as it reported
// it; a plain string in the list is kept as Description. Type and
// Severity are kept as written (the seed's values are files_not_in_plan,
// approach_changed, ... and minor, moderate, major).
type Deviation struct {
	Type          string
	Description   string
	Severity      string
	Justification string
	Line          int
}

// ParseTask reads a task agent's output.yaml. A report without a status, or
// a completed one without the deviations key (the seed requires it, as
// "deviations: []" when there were none), breaks the contract and is an
// error; so is a field of the wrong shape. Unknown keys are ignored.
func ParseTask(data []byte) (Task, error) {
	root, err := document(data)
	if err != nil {
		return Task{}, err
	}
	var t Task
	fs, err := decode(root, map[string]reader{
		"status": func(f field) error {
			s, err := text(f)
			if err == nil && s != string(Completed) && s != string(Failed) {
				err = errorf(f.value.Line, "status: want completed or failed, found %s", kind(f.value))
			}
			t.Status = Status(s)
			return err
		},
		"files-modified":       strs(&t.FilesModified),
		"verification-summary": func(f field) (err error) { t.Verification, err = verification(f); return err },
		"deviations":           func(f field) (err error) { t.Deviations, err = deviations(f); return err },
		"exports":              t.readExports,
		"notes":                str(&t.Notes),
		"error":                str(&t.Error),
	})
	if err != nil {
		return Task{}, err
	}
	if t.Status == "" {
		return Task{}, errorf(root.Line, "no status: the report must say completed or failed")
	}
	if t.Status == Completed && lookup(fs, "deviations") == nil {
		return Task{}, errorf(root.Line, `no deviations: a completed report lists them ("deviations: []" when there were none)`)
	}
	return t, nil
}

func verification(f field) (Verification, error) {
	v := f.value
	if v.Kind != yaml.MappingNode {
		s, err := text(f)
		return Verification{Result: s}, err
	}
	var out Verification
	_, err := decode(v, map[string]reader{
		"level":          str(&out.Level),
		"evidence-files": strs(&out.EvidenceFiles),
		"result":         str(&out.Result),
	})
	return out, err
}

func deviations(f field) ([]Deviation, error) {
	v := f.value
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, errorf(v.Line, "deviations: want a list, found %s", kind(v))
	}
	out := make([]Deviation, 0, len(v.Content))
	for _, item := range v.Content {
		d := Deviation{Line: item.Line}
		switch item.Kind {
		case yaml.ScalarNode:
			d.Description = item.Value
		case yaml.MappingNode:
			if _, err := decode(item, map[string]reader{
				"type":          str(&d.Type),
				"description":   str(&d.Description),
				"severity":      str(&d.Severity),
				"justification": str(&d.Justification),
			}); err != nil {
				return nil, err
			}
		default:
			return nil, errorf(item.Line, "deviations: want a deviation, found %s", kind(item))
		}
		out = append(out, d)
	}
	return out, nil
}

func (t *Task) readExports(f field) error {
	v := f.value
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return errorf(v.Line, "exports: want a mapping, found %s", kind(v))
	}
	m, err := plain(v)
	if err != nil {
		return err
	}
	t.Exports, t.exports = m.(map[string]any), v
	return nil
}
