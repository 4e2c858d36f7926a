package interop

// Codec for crucible's dispatch manifest, manifest.jsonl.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ManifestLine is one line of manifest.jsonl.
//
// A line read by ParseManifest keeps its text in Raw, so that Render gives it
// back byte for byte (unknown keys, key order and spacing included).
type ManifestLine struct {
	Seq           int
	File          string
	Role          string
	Phase         string // crucible writes a string ("2"); a JSON integer is accepted and kept as its decimal text
	Task          *int
	Status        string // one of ManifestStatuses
	DurationS     *int
	Summary       *string
	InputChars    *int
	OutputChars   *int
	ModelTier     *string
	ToolCalls     *int
	ReplayOf      *int
	ReplaySession *string
	Mutation      *string
	Timestamp     *string // git-crucible's addition
	Template      *string // git-crucible's addition
	Raw           []byte  // the line as read (no newline); nil for a line built in code
}

// ManifestError is a manifest line that ParseManifest skipped. Line is 1-based.
type ManifestError struct {
	Line int
	Msg  string
}

func (e *ManifestError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ManifestStatuses lists the statuses a manifest line may carry.
var ManifestStatuses = []string{"dispatched", "completed", "failed", "skipped", "error"}

// MaxManifestLine is the longest manifest line ParseManifest accepts, in bytes,
// not counting its newline. Crucible keeps lines under 4 KiB, but an agent's
// summary may run long and must still be imported; the cap only keeps a
// hostile file from costing unbounded memory per line.
const MaxManifestLine = 1 << 20

// Manifest keys, in the order Render writes them.
const (
	mkSeq           = "seq"
	mkFile          = "file"
	mkRole          = "role"
	mkPhase         = "phase"
	mkTask          = "task"
	mkStatus        = "status"
	mkDurationS     = "duration_s"
	mkSummary       = "summary"
	mkInputChars    = "input_chars"
	mkOutputChars   = "output_chars"
	mkModelTier     = "model_tier"
	mkToolCalls     = "tool_calls"
	mkReplayOf      = "replay_of"
	mkReplaySession = "replay_session"
	mkMutation      = "mutation"
	mkTimestamp     = "timestamp"
	mkTemplate      = "template"
)

// ParseManifest reads every line of a manifest. Lines are split at '\n' only,
// so a '\r' before it stays in Raw (JSON reads it as white space) and a CRLF
// file is written back as it was. Blank lines are skipped silently. A line
// that is malformed is returned as a problem and skipped, never fatal: over
// MaxManifestLine bytes, not a JSON object, a missing or invalid seq (an
// integer >= 1), a missing or unknown status, a missing or empty role, or a
// known key holding the wrong JSON type (null stands for "absent" everywhere).
// Keys are matched exactly; unknown keys are allowed and kept in Raw; a key
// given twice takes its last value, as encoding/json does. Zero valid lines
// is not an error here: the caller decides.
func ParseManifest(data []byte) (lines []ManifestLine, problems []*ManifestError) {
	n := 0
	for len(data) > 0 {
		n++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		if manifestBlank(raw) {
			continue
		}
		l, msg := parseManifestLine(raw)
		if msg != "" {
			problems = append(problems, &ManifestError{Line: n, Msg: msg})
			continue
		}
		lines = append(lines, l)
	}
	return lines, problems
}

// manifestBlank: only JSON white space.
func manifestBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func parseManifestLine(raw []byte) (ManifestLine, string) {
	if len(raw) > MaxManifestLine {
		return ManifestLine{}, fmt.Sprintf("line is %d bytes, over the %d-byte limit", len(raw), MaxManifestLine)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return ManifestLine{}, "not a JSON object"
	}
	l := ManifestLine{Raw: bytes.Clone(raw)}

	seq, ok := manifestInt(obj[mkSeq])
	switch {
	case !ok:
		return ManifestLine{}, fmt.Sprintf("invalid seq %s: want an integer >= 1", clip(string(obj[mkSeq])))
	case seq == nil:
		return ManifestLine{}, "missing seq"
	case *seq < 1:
		return ManifestLine{}, fmt.Sprintf("invalid seq %d: want an integer >= 1", *seq)
	}
	l.Seq = *seq

	status, ok := manifestString(obj[mkStatus])
	switch {
	case !ok:
		return ManifestLine{}, fmt.Sprintf("invalid status %s: want a string", clip(string(obj[mkStatus])))
	case status == nil:
		return ManifestLine{}, "missing status"
	case !slices.Contains(ManifestStatuses, *status):
		return ManifestLine{}, fmt.Sprintf("invalid status %q (want %s)", clip(*status), strings.Join(ManifestStatuses, ", "))
	}
	l.Status = *status

	role, ok := manifestString(obj[mkRole])
	switch {
	case !ok:
		return ManifestLine{}, fmt.Sprintf("invalid role %s: want a string", clip(string(obj[mkRole])))
	case role == nil:
		return ManifestLine{}, "missing role"
	case *role == "":
		return ManifestLine{}, "empty role"
	}
	l.Role = *role

	file, ok := manifestString(obj[mkFile])
	if !ok {
		return ManifestLine{}, fmt.Sprintf("invalid file %s: want a string", clip(string(obj[mkFile])))
	}
	if file != nil {
		l.File = *file
	}

	phase, ok := manifestPhase(obj[mkPhase])
	if !ok {
		return ManifestLine{}, fmt.Sprintf("invalid phase %s: want a string or an integer", clip(string(obj[mkPhase])))
	}
	l.Phase = phase

	ints := []struct {
		key string
		dst **int
	}{
		{mkTask, &l.Task}, {mkDurationS, &l.DurationS}, {mkInputChars, &l.InputChars},
		{mkOutputChars, &l.OutputChars}, {mkToolCalls, &l.ToolCalls}, {mkReplayOf, &l.ReplayOf},
	}
	for _, f := range ints {
		v, ok := manifestInt(obj[f.key])
		if !ok {
			return ManifestLine{}, fmt.Sprintf("invalid %s %s: want an integer or null", f.key, clip(string(obj[f.key])))
		}
		*f.dst = v
	}
	strs := []struct {
		key string
		dst **string
	}{
		{mkSummary, &l.Summary}, {mkModelTier, &l.ModelTier}, {mkReplaySession, &l.ReplaySession},
		{mkMutation, &l.Mutation}, {mkTimestamp, &l.Timestamp}, {mkTemplate, &l.Template},
	}
	for _, f := range strs {
		v, ok := manifestString(obj[f.key])
		if !ok {
			return ManifestLine{}, fmt.Sprintf("invalid %s %s: want a string or null", f.key, clip(string(obj[f.key])))
		}
		*f.dst = v
	}
	return l, ""
}

func manifestNull(raw json.RawMessage) bool {
	return raw == nil || string(raw) == "null"
}

// manifestInt: nil for absent or null; false for anything but a JSON integer
// that fits in an int.
func manifestInt(raw json.RawMessage) (*int, bool) {
	if manifestNull(raw) {
		return nil, true
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false
	}
	return &v, true
}

// manifestString: nil for absent or null; false for anything but a JSON string.
func manifestString(raw json.RawMessage) (*string, bool) {
	if manifestNull(raw) {
		return nil, true
	}
	var v string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	return &v, true
}

// manifestPhase: a JSON string, or a JSON integer kept as its text; "" for
// absent or null.
func manifestPhase(raw json.RawMessage) (string, bool) {
	if manifestNull(raw) {
		return "", true
	}
	if s, ok := manifestString(raw); ok {
		return *s, true
	}
	if manifestDecimalInt(string(raw)) {
		return string(raw), true
	}
	return "", false
}

// manifestDecimalInt: an optional '-' and one or more decimal digits.
func manifestDecimalInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Latest returns, per seq, the last line for it, in seq order.
func Latest(lines []ManifestLine) []ManifestLine {
	if len(lines) == 0 {
		return nil
	}
	last := map[int]int{} // seq -> index of its last line
	for i, l := range lines {
		last[l.Seq] = i
	}
	out := make([]ManifestLine, 0, len(last))
	for _, i := range last {
		out = append(out, lines[i])
	}
	slices.SortFunc(out, func(a, b ManifestLine) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// Render writes one line, without a newline: Raw when it is not empty, else
// the canonical form: compact JSON, keys in the order seq, file, role, phase,
// task, status, duration_s, summary, input_chars, output_chars, model_tier,
// tool_calls, replay_of, replay_session, mutation, timestamp, template; nil
// pointers written as null except timestamp and template, which are left out
// when nil; phase always a string; no HTML escaping ("a.md -> b.md" keeps its
// '>'). Invalid UTF-8 in a string is written as U+FFFD, as encoding/json does.
func (l ManifestLine) Render() []byte {
	if len(l.Raw) > 0 {
		return bytes.Clone(l.Raw)
	}
	b := make([]byte, 0, 256)
	b = append(b, '{')
	b = appendManifestKey(b, mkSeq, true)
	b = strconv.AppendInt(b, int64(l.Seq), 10)
	b = appendManifestKey(b, mkFile, false)
	b = appendJSONStringNoHTML(b, l.File)
	b = appendManifestKey(b, mkRole, false)
	b = appendJSONStringNoHTML(b, l.Role)
	b = appendManifestKey(b, mkPhase, false)
	b = appendJSONStringNoHTML(b, l.Phase)
	b = appendManifestInt(b, mkTask, l.Task)
	b = appendManifestKey(b, mkStatus, false)
	b = appendJSONStringNoHTML(b, l.Status)
	b = appendManifestInt(b, mkDurationS, l.DurationS)
	b = appendManifestString(b, mkSummary, l.Summary)
	b = appendManifestInt(b, mkInputChars, l.InputChars)
	b = appendManifestInt(b, mkOutputChars, l.OutputChars)
	b = appendManifestString(b, mkModelTier, l.ModelTier)
	b = appendManifestInt(b, mkToolCalls, l.ToolCalls)
	b = appendManifestInt(b, mkReplayOf, l.ReplayOf)
	b = appendManifestString(b, mkReplaySession, l.ReplaySession)
	b = appendManifestString(b, mkMutation, l.Mutation)
	if l.Timestamp != nil {
		b = appendManifestString(b, mkTimestamp, l.Timestamp)
	}
	if l.Template != nil {
		b = appendManifestString(b, mkTemplate, l.Template)
	}
	return append(b, '}')
}

func appendManifestKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendManifestInt(b []byte, key string, v *int) []byte {
	b = appendManifestKey(b, key, false)
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

func appendManifestString(b []byte, key string, v *string) []byte {
	b = appendManifestKey(b, key, false)
	if v == nil {
		return append(b, "null"...)
	}
	return appendJSONStringNoHTML(b, *v)
}

// appendJSONStringNoHTML appends s as a JSON string, escaped as encoding/json
// does but leaving '<', '>' and '&' as they are.
func appendJSONStringNoHTML(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil { // cannot fail for a string
		panic(err)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
