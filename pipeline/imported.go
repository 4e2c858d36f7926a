package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
)

// Import event types: what a crucible scratch directory said, taken as
// given. They are attestations, not transitions: the rules could not have
// been checked when the skills wrote those files.
const (
	TypeImportFiles    = "import.files"
	TypeImportLedger   = "import.ledger"
	TypeImportDispatch = "import.dispatch"
	TypeImportHandoff  = "import.handoff"
	TypeImportVerdict  = "import.verdict"
)

// ImportFilesData records an import: the directory, the digest of every
// file taken (by name), and how much of manifest.jsonl has been taken.
type ImportFilesData struct {
	Dir            string            `json:"dir"`
	Files          map[string]string `json:"files"` // name -> sha256 of its content
	ManifestLines  int               `json:"manifest_lines"`
	ManifestDigest string            `json:"manifest_digest"` // sha256 of those lines
	// First and Last are the span the files give the wall clock (RFC
	// 3339): from the run's original start to the last time a dispatch
	// records (a gate's or a handoff's when no dispatch says one).
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
}

// ImportLedgerData is an imported build-gate-ledger.md.
type ImportLedgerData struct {
	Ledger ledger.Ledger `json:"ledger"`
}

// ImportDispatchData is one imported manifest.jsonl line, kept verbatim.
type ImportDispatchData struct {
	Line   string `json:"line"`
	Prompt string `json:"prompt,omitempty"` // where its dispatch file is kept
	Output string `json:"output,omitempty"` // where its <seq>-<template>.output.md is kept
	// Time is when the line says it happened, when it has no timestamp of
	// its own: its dispatch file's header time (plus its duration when
	// final), RFC 3339. The event's own time otherwise.
	Time string `json:"time,omitempty"`
	// PromptChars and OutputChars are the sizes in characters of the
	// dispatch file and the output kept at Prompt and Output: crucible's
	// estimate by size, for a line that says no input_chars or
	// output_chars (crucible's seldom do).
	PromptChars int `json:"prompt_chars,omitempty"`
	OutputChars int `json:"output_chars,omitempty"`
}

// InputChars is the size of the imported dispatch's prompt: the line's
// input_chars, else its dispatch file's.
func (d *ImportDispatchData) InputChars(l ImportedDispatch) int {
	if l.InputChars != nil {
		return *l.InputChars
	}
	return d.PromptChars
}

// OutputSize is the size of the imported dispatch's output: the line's
// output_chars, else its output file's.
func (d *ImportDispatchData) OutputSize(l ImportedDispatch) int {
	if l.OutputChars != nil {
		return *l.OutputChars
	}
	return d.OutputChars
}

// ImportVerdictData is an imported gate-verdict marker, kept at Path.
type ImportVerdictData struct {
	Name   string       `json:"name"`
	Path   string       `json:"path"`
	Phase  ledger.Phase `json:"phase"`
	Rounds int          `json:"rounds"`
}

// Imports is what state.json remembers of imports, so that importing the
// same directory again adds nothing.
type Imports struct {
	Files          map[string]string `json:"files,omitempty"`
	ManifestLines  int               `json:"manifest_lines,omitempty"`
	ManifestDigest string            `json:"manifest_digest,omitempty"`
	Seq            int64             `json:"seq,omitempty"` // the last import event
}

// plainFileName: a name that stays inside the directory it is written to.
func plainFileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// OutputName is the file beside dispatch file name that holds its output:
// 3-build-implementer.md gives 3-build-implementer.output.md.
func OutputName(file string) string { return strings.TrimSuffix(file, ".md") + ".output.md" }

// ImportedOutputPath is where the output of an imported dispatch whose
// manifest line names file is kept: DispatchPath's place when file is
// <seq>-<template>.md.
func ImportedOutputPath(seq int, file string) string {
	return fmt.Sprintf("dispatch/%04d/%s", seq/100, OutputName(file))
}

// ImportPath is where an imported file with no home of its own is kept.
func ImportPath(name string) string { return "import/" + name }

// applyImport is State.Apply for the import events, p their payload.
func (s *State) applyImport(e Event, p any) error {
	switch d := p.(type) {
	case *ImportFilesData:
		if err := checkTime("first time", d.First); err != nil {
			return err
		}
		if err := checkTime("last time", d.Last); err != nil {
			return err
		}
		files := make(map[string]string, len(s.Import.Files)+len(d.Files))
		for k, v := range s.Import.Files {
			files[k] = v
		}
		for k, v := range d.Files {
			files[k] = v
		}
		s.Import.Files, s.Import.ManifestLines, s.Import.ManifestDigest = files, d.ManifestLines, d.ManifestDigest
	case *ImportLedgerData:
		if err := d.Ledger.Validate(); err != nil {
			return fmt.Errorf("imported ledger: %w", err)
		}
		if d.Ledger.PipelineID != s.ID {
			return fmt.Errorf("the imported ledger is for pipeline %q, not %q", d.Ledger.PipelineID, s.ID)
		}
		// Verdicts given before the import do not count for a later PASS.
		s.Gates = ledger.Machine{Ledger: d.Ledger, LastSeq: e.Seq}
		for i := range s.Gates.Track {
			s.Gates.Track[i].Since = e.Seq
		}
	case *importedDispatch:
		line := d.line
		// Export writes the prompt under this name, import takes only such.
		if (d.data.Prompt != "" || d.data.Output != "") && CheckName("dispatch file", line.File) != nil {
			return fmt.Errorf("imported manifest line %d names a dispatch file %q that is not a plain file name", line.Seq, line.File)
		}
		if err := checkTime("dispatch time", d.data.Time); err != nil {
			return err
		}
		if d.data.Output != "" && (line.Status == "dispatched" || d.data.Output != ImportedOutputPath(line.Seq, line.File)) {
			return fmt.Errorf("imported manifest line %d: output kept at %q", line.Seq, d.data.Output)
		}
		s.Dispatch.InFlight = cloneInFlight(s.Dispatch.InFlight)
		key := strconv.Itoa(line.Seq)
		if line.Status == "dispatched" {
			s.Dispatch.InFlight[key] = InFlight{Started: e.Time, Template: templateOf(line)}
		} else if _, ok := s.Dispatch.InFlight[key]; ok {
			delete(s.Dispatch.InFlight, key)
			s.Dispatch.Finished++
		}
		if len(s.Dispatch.InFlight) == 0 {
			s.Dispatch.InFlight = nil
		}
		s.Dispatch.Last = max(s.Dispatch.Last, line.Seq)
	case *HandoffData:
		if d.Path != HandoffPath(d.From) || d.To != d.From+1 {
			return fmt.Errorf("imported handoff %d to %d kept at %q", d.From, d.To, d.Path)
		}
	case *ImportVerdictData:
		if !plainFileName(d.Name) { // export writes the marker under it
			return fmt.Errorf("imported marker %q is not a plain file name", d.Name)
		}
		if d.Path != ImportPath(d.Name) {
			return fmt.Errorf("imported marker %s kept at %q", d.Name, d.Path)
		}
	default:
		return fmt.Errorf("unknown event type %q", e.Type)
	}
	s.Import.Seq = e.Seq
	return nil
}

// ImportedDispatch is what the manifest.jsonl line of an import.dispatch
// event says. The event keeps the line verbatim and this is its own reading
// of it, so that replaying a stored chain never depends on the manifest
// codec of the day (which may come to accept more).
type ImportedDispatch struct {
	Seq           int
	File          string
	Role          string
	Phase         string // a JSON string, or a JSON integer as its decimal text
	Task          *int
	Status        string
	DurationS     *int
	Summary       *string
	InputChars    *int
	OutputChars   *int
	ModelTier     *string
	ToolCalls     *int
	ReplayOf      *int
	ReplaySession *string
	Mutation      *string
	Timestamp     *string
	Template      *string
}

// importStatuses are the statuses an imported line may carry.
var importStatuses = lazy.Value[[]string]{New: func() []string { return append([]string{"dispatched"}, DispatchStatuses...) }}

// ImportedLine reads an imported manifest line: one JSON object with a seq
// (>= 1), a known status and a role; keys match exactly, null is absent,
// unknown keys are ignored.
func ImportedLine(raw string) (ImportedDispatch, error) {
	var l ImportedDispatch
	if strings.ContainsRune(raw, '\n') {
		return l, errors.New("an imported manifest line holds a line break")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return l, errors.New("imported manifest line: not a JSON object")
	}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"seq", &l.Seq}, {"file", &l.File}, {"role", &l.Role}, {"task", &l.Task}, {"status", &l.Status},
		{"duration_s", &l.DurationS}, {"summary", &l.Summary}, {"input_chars", &l.InputChars},
		{"output_chars", &l.OutputChars}, {"model_tier", &l.ModelTier}, {"tool_calls", &l.ToolCalls},
		{"replay_of", &l.ReplayOf}, {"replay_session", &l.ReplaySession}, {"mutation", &l.Mutation},
		{"timestamp", &l.Timestamp}, {"template", &l.Template},
	} {
		if v := obj[f.key]; v != nil && string(v) != "null" && json.Unmarshal(v, f.dst) != nil {
			return l, fmt.Errorf("imported manifest line: invalid %s %s", f.key, v)
		}
	}
	phase := obj["phase"]
	switch {
	case phase == nil || string(phase) == "null":
	case phase[0] == '"':
		json.Unmarshal(phase, &l.Phase) // valid: the object decoded
	case decimal(string(phase)):
		l.Phase = string(phase)
	default:
		return l, fmt.Errorf("imported manifest line: invalid phase %s", phase)
	}
	switch {
	case l.Seq < 1:
		return l, fmt.Errorf("imported manifest line: invalid seq %d", l.Seq)
	case !slices.Contains(importStatuses.Get(), l.Status):
		return l, fmt.Errorf("imported manifest line: invalid status %q", l.Status)
	case l.Role == "":
		return l, errors.New("imported manifest line: no role")
	}
	return l, nil
}

// decimal: an optional '-' and one or more decimal digits.
func decimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// templateOf is the template a manifest line names: its file's name
// without "<seq>-" and ".md".
func templateOf(l ImportedDispatch) string {
	if l.Template != nil {
		return *l.Template
	}
	name := strings.TrimSuffix(strings.TrimPrefix(l.File, strconv.Itoa(l.Seq)+"-"), ".md")
	if CheckName("template", name) != nil {
		return "imported"
	}
	return name
}
