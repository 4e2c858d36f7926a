package interop

// Codec for the active-pipeline marker, .pipeline-active.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Active is the active-pipeline marker (.pipeline-active).
//
// The JSON form has no session id: crucible sets its pipeline_id to the
// session id. SessionID is read from the older "key: value" form only, and
// Legacy reports that form; Render writes neither.
type Active struct {
	PipelineID  string // pipeline_id; "pipeline" in the older form
	Skill       string
	Phase       string
	StartTime   string // start_time; "started" in the older form
	ScratchDir  string
	DispatchDir string // dispatch_dir; "dispatch-dir" in the older form
	Branch      string
	BaselineSHA string
	SessionID   string // "session-id", older form only
	Legacy      bool   // read from the older form
}

// ActiveError locates what is wrong in a .pipeline-active marker. Line is
// 1-based, or 0 for a problem with the whole file.
type ActiveError struct {
	Line int
	Msg  string
}

func (e *ActiveError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// activeJSON is the JSON form, its fields in the order Render writes them.
type activeJSON struct {
	PipelineID  string `json:"pipeline_id"`
	Skill       string `json:"skill"`
	Phase       string `json:"phase"`
	StartTime   string `json:"start_time"`
	ScratchDir  string `json:"scratch_dir"`
	DispatchDir string `json:"dispatch_dir"`
	Branch      string `json:"branch"`
	BaselineSHA string `json:"baseline_sha"`
}

// Keys of the older form.
const (
	alPipeline    = "pipeline"
	alSessionID   = "session-id"
	alStarted     = "started"
	alDispatchDir = "dispatch-dir"
)

// ParseActive reads a .pipeline-active marker. A leading UTF-8 byte order
// mark is skipped. When the first non-blank byte is '{' it is the JSON form:
// one object with the string keys pipeline_id, skill, phase (a string, or an
// integer kept as its decimal text), start_time, scratch_dir, dispatch_dir,
// branch and baseline_sha; null reads as ""; unknown keys are ignored; a key
// given twice takes its last value. Otherwise it is the older form: "key:
// value" lines (split at the first ':', both sides trimmed, the key made of
// ASCII letters, digits, '-' and '_', CRLF accepted, blank lines skipped)
// with the keys pipeline (required), session-id, started and dispatch-dir,
// each at most once, their values valid UTF-8 (which the JSON form that
// Render writes needs); unknown keys are ignored. Errors are *ActiveError.
func ParseActive(data []byte) (Active, error) {
	text := bytes.TrimPrefix(data, []byte("\ufeff"))
	body := bytes.TrimLeft(text, " \t\r\n")
	if len(body) == 0 {
		return Active{}, &ActiveError{Line: 0, Msg: "empty marker"}
	}
	if body[0] == '{' {
		return parseActiveJSON(text)
	}
	return parseActiveLegacy(string(text))
}

func parseActiveJSON(text []byte) (Active, error) {
	lineAt := func(off int64) int {
		if off > int64(len(text)) {
			off = int64(len(text))
		}
		return 1 + bytes.Count(text[:off], []byte("\n"))
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	fail := func(err error) (Active, error) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Active{}, &ActiveError{Line: lineAt(se.Offset), Msg: "invalid JSON: " + err.Error()}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Active{}, &ActiveError{Line: lineAt(int64(len(text))), Msg: "invalid JSON: unexpected end of input"}
		}
		return Active{}, &ActiveError{Line: lineAt(dec.InputOffset()), Msg: "invalid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != nil { // '{', checked by the caller
		return fail(err)
	}
	var a activeJSON
	fields := map[string]*string{
		"pipeline_id": &a.PipelineID, "skill": &a.Skill, "phase": &a.Phase, "start_time": &a.StartTime,
		"scratch_dir": &a.ScratchDir, "dispatch_dir": &a.DispatchDir, "branch": &a.Branch, "baseline_sha": &a.BaselineSHA,
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string) // the decoder allows only a string here
		n := lineAt(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(err)
		}
		dst, known := fields[key]
		if !known {
			continue
		}
		if key == "phase" {
			v, ok := manifestPhase(raw)
			if !ok {
				return Active{}, &ActiveError{Line: n, Msg: fmt.Sprintf("invalid phase %s: want a string or an integer", clip(string(raw)))}
			}
			*dst = v
			continue
		}
		v, ok := manifestString(raw)
		if !ok {
			return Active{}, &ActiveError{Line: n, Msg: fmt.Sprintf("invalid %s %s: want a string", key, clip(string(raw)))}
		}
		*dst = ""
		if v != nil {
			*dst = *v
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return Active{}, &ActiveError{Line: lineAt(dec.InputOffset()), Msg: "invalid JSON: data after the object"}
		}
		return fail(err)
	}
	return Active{
		PipelineID: a.PipelineID, Skill: a.Skill, Phase: a.Phase, StartTime: a.StartTime,
		ScratchDir: a.ScratchDir, DispatchDir: a.DispatchDir, Branch: a.Branch, BaselineSHA: a.BaselineSHA,
	}, nil
}

func parseActiveLegacy(text string) (Active, error) {
	a := Active{Legacy: true}
	seen := map[string]int{}
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		key = strings.TrimSpace(key)
		if !ok || !activeLegacyKey(key) {
			return Active{}, &ActiveError{Line: n, Msg: fmt.Sprintf("want a JSON object or %q lines, found %q", "key: value", clip(line))}
		}
		var dst *string
		switch key {
		case alPipeline:
			dst = &a.PipelineID
		case alSessionID:
			dst = &a.SessionID
		case alStarted:
			dst = &a.StartTime
		case alDispatchDir:
			dst = &a.DispatchDir
		default:
			continue
		}
		if first, dup := seen[key]; dup {
			return Active{}, &ActiveError{Line: n, Msg: fmt.Sprintf("duplicate key %q (first on line %d)", key, first)}
		}
		seen[key] = n
		value = strings.TrimSpace(value)
		if !utf8.ValidString(value) {
			return Active{}, &ActiveError{Line: n, Msg: fmt.Sprintf("%s: value is not valid UTF-8", key)}
		}
		*dst = value
	}
	if _, ok := seen[alPipeline]; !ok {
		return Active{}, &ActiveError{Line: 0, Msg: fmt.Sprintf("missing key %q", alPipeline)}
	}
	return a, nil
}

// activeLegacyKey: one or more ASCII letters, digits, '-' or '_'.
func activeLegacyKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Render writes a as the JSON form: the keys pipeline_id, skill, phase,
// start_time, scratch_dir, dispatch_dir, branch, baseline_sha in that order,
// indented by two spaces, no HTML escaping, with a trailing newline.
// SessionID and Legacy are not written (the JSON form has no place for them).
func (a Active) Render() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(activeJSON{
		PipelineID: a.PipelineID, Skill: a.Skill, Phase: a.Phase, StartTime: a.StartTime,
		ScratchDir: a.ScratchDir, DispatchDir: a.DispatchDir, Branch: a.Branch, BaselineSHA: a.BaselineSHA,
	}); err != nil { // cannot fail for strings
		panic(err)
	}
	return b.Bytes()
}
