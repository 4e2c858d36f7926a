package interop

// Codecs for the crucible skills' file formats: the quality-gate verdict marker.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Marker is a crucible quality-gate verdict marker (gate-verdict-<run-id>.md), version 1 or 2.
//
// The typed fields are read from the known keys; Fields keeps every line. Keys
// introduced by version 2 (ArtifactHash, MaxScore, Reason, ScoreTrajectory,
// Severity-Histogram) are read and checked in a version 1 marker too; only
// ArtifactHash's presence and the verdict list depend on the version.
type Marker struct {
	Version           int          // 1, or 2 when "MarkerVersion: 2"
	Verdict           string       // PASS FAIL STAGNATION ESCALATED ARCHITECTURAL SUSTAINED_REGRESSION (v2); PASS FAIL STAGNATION ESCALATED (v1)
	Phase             ledger.Phase // design→1, plan→2, code→4; also accepts what ledger.ParsePhase accepts
	PipelineID        string       // required, never empty
	Rounds            int          // 0 when absent
	FinalScore        int          // 0 when absent
	MaxScore          int          // v2, 0 when absent
	Timestamp         string
	RunID             string
	ArtifactHash      string // v2, required there: 64 lowercase hex (sha256)
	Reason            string
	ScoreTrajectory   []string        // v2, comma-separated values, kept as strings (tokens may contain '|'); nil when absent or empty
	SeverityHistogram json.RawMessage // v2, must be valid JSON when present; nil when absent
	Fields            []Field         // every "Key: value" line in file order, known and unknown keys alike
}

// Field is one "Key: value" line of a marker; Value is trimmed.
type Field struct{ Key, Value string }

// MarkerError locates what is wrong in a verdict marker. Line is 1-based, or 0
// for a problem with the whole file (a missing required key).
type MarkerError struct {
	Line int
	Msg  string
}

func (e *MarkerError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Verdicts lists the verdict values a marker may carry.
var Verdicts = []string{"PASS", "FAIL", "STAGNATION", "ESCALATED", "ARCHITECTURAL", "SUSTAINED_REGRESSION"}

// v1Verdicts is how many of Verdicts a version 1 marker may carry.
const v1Verdicts = 4

// ValidVerdict reports whether v is one of Verdicts (any marker version).
func ValidVerdict(v string) bool { return verdictIndex(v) >= 0 }

func verdictIndex(v string) int {
	for i, w := range Verdicts {
		if v == w {
			return i
		}
	}
	return -1
}

// Known marker keys.
const (
	keyMarkerVersion     = "MarkerVersion"
	keyArtifactHash      = "ArtifactHash"
	keyVerdict           = "Verdict"
	keyPhase             = "Phase"
	keyPipelineID        = "PipelineID"
	keyRounds            = "Rounds"
	keyFinalScore        = "FinalScore"
	keyMaxScore          = "MaxScore"
	keyReason            = "Reason"
	keyScoreTrajectory   = "ScoreTrajectory"
	keySeverityHistogram = "Severity-Histogram"
	keyTimestamp         = "Timestamp"
	keyRunID             = "RunID"
)

// PhaseName is the marker's spelling of p: "design", "plan", "code" for
// phases 1, 2 and 4, "execute" for phase 3 (which has no gate, but ParseMarker
// accepts it), and "" for an invalid phase.
func PhaseName(p ledger.Phase) string {
	switch p {
	case ledger.Design:
		return "design"
	case ledger.Plan:
		return "plan"
	case ledger.Execute:
		return "execute"
	case ledger.Completion:
		return "code"
	}
	return ""
}

func parseMarkerPhase(s string) (ledger.Phase, bool) {
	if strings.EqualFold(s, "code") {
		return ledger.Completion, true
	}
	p, err := ledger.ParsePhase(s)
	return p, err == nil
}

// ParseMarker reads a verdict marker. Lines are "Key: value", split at the
// first ':'; the key must be non-empty and free of white space, the value is
// trimmed. Blank lines and lines starting with '#' are skipped, CRLF line ends
// and a leading UTF-8 byte order mark are accepted. Unknown keys are kept in
// Fields; a known key may appear once. Errors are *MarkerError.
func ParseMarker(data []byte) (Marker, error) {
	m := Marker{Version: 1}
	text := strings.TrimPrefix(string(data), "\ufeff")
	firstLine := map[string]int{} // known key -> line it was on
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		fail := func(format string, args ...any) (Marker, error) {
			return Marker{}, &MarkerError{Line: n, Msg: fmt.Sprintf(format, args...)}
		}
		line := strings.TrimSpace(raw) // also drops the '\r' of a CRLF
		if line == "" || line[0] == '#' {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return fail("want a %q line, found %q", "Key: value", clip(line))
		}
		if !validKey(key) {
			return fail("invalid key %q", clip(key))
		}
		value = strings.TrimSpace(value)
		m.Fields = append(m.Fields, Field{Key: key, Value: value})

		if !knownKey(key) {
			continue
		}
		if first, dup := firstLine[key]; dup {
			return fail("duplicate key %q (first on line %d)", key, first)
		}
		firstLine[key] = n
		switch key {
		case keyMarkerVersion:
			switch value {
			case "1":
				m.Version = 1
			case "2":
				m.Version = 2
			default:
				return fail("unsupported marker version %q", clip(value))
			}
		case keyArtifactHash:
			if !isSHA256Hex(value) {
				return fail("invalid ArtifactHash %q: want 64 lowercase hex digits", clip(value))
			}
			m.ArtifactHash = value
		case keyVerdict:
			if !ValidVerdict(value) {
				return fail("invalid verdict %q", clip(value))
			}
			m.Verdict = value
		case keyPhase:
			p, ok := parseMarkerPhase(value)
			if !ok {
				return fail("invalid phase %q (want design, plan, code, or what the ledger accepts)", clip(value))
			}
			m.Phase = p
		case keyPipelineID:
			if value == "" {
				return fail("empty PipelineID")
			}
			m.PipelineID = value
		case keyRounds, keyFinalScore, keyMaxScore:
			v, ok := parseCount(value)
			if !ok {
				return fail("invalid %s %q: want a non-negative integer", key, clip(value))
			}
			switch key {
			case keyRounds:
				m.Rounds = v
			case keyFinalScore:
				m.FinalScore = v
			default:
				m.MaxScore = v
			}
		case keyReason:
			m.Reason = value
		case keyScoreTrajectory:
			m.ScoreTrajectory = splitTrajectory(value)
		case keySeverityHistogram:
			if !json.Valid([]byte(value)) {
				return fail("invalid Severity-Histogram: not valid JSON")
			}
			m.SeverityHistogram = json.RawMessage(value)
		case keyTimestamp:
			m.Timestamp = value
		case keyRunID:
			m.RunID = value
		}
	}

	if m.Version == 1 && m.Verdict != "" && verdictIndex(m.Verdict) >= v1Verdicts {
		return Marker{}, &MarkerError{Line: firstLine[keyVerdict],
			Msg: fmt.Sprintf("verdict %q needs MarkerVersion: 2", m.Verdict)}
	}
	required := []string{keyVerdict, keyPhase, keyPipelineID}
	if m.Version == 2 {
		required = append(required, keyArtifactHash)
	}
	for _, k := range required {
		if _, ok := firstLine[k]; !ok {
			return Marker{}, &MarkerError{Line: 0, Msg: fmt.Sprintf("missing required key %q", k)}
		}
	}
	return m, nil
}

func knownKey(k string) bool {
	switch k {
	case keyMarkerVersion, keyArtifactHash, keyVerdict, keyPhase, keyPipelineID,
		keyRounds, keyFinalScore, keyMaxScore, keyReason, keyScoreTrajectory,
		keySeverityHistogram, keyTimestamp, keyRunID:
		return true
	}
	return false
}

// validKey: non-empty, no white space, no byte order mark (which ParseMarker
// strips at the start of a file, so a key carrying one would not survive
// RenderMarker as the first line).
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if unicode.IsSpace(r) || r == '\ufeff' {
			return false
		}
	}
	return true
}

func isSHA256Hex(s string) bool { return len(s) == 64 && isLowerHex(s) }

// isLowerHex reports whether s is all lowercase hexadecimal digits.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parseCount accepts decimal digits only (no sign) that fit in an int.
func parseCount(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

// splitTrajectory splits at commas and trims each token; "" gives nil.
func splitTrajectory(s string) []string {
	if s == "" {
		return nil
	}
	toks := strings.Split(s, ",")
	for i := range toks {
		toks[i] = strings.TrimSpace(toks[i])
	}
	return toks
}

// RenderMarker writes m as a verdict marker. When m.Fields is not empty it is
// the whole content: each Field becomes a "Key: value" line, in order, and the
// typed fields are ignored (so ParseMarker(RenderMarker(m)) gives back m for a
// parsed m). When m.Fields is empty it writes the known fields in crucible's
// order: MarkerVersion (version 2 only), ArtifactHash, Verdict, Phase,
// PipelineID, Rounds, FinalScore, MaxScore, Reason, ScoreTrajectory,
// Severity-Histogram, Timestamp, RunID, leaving out empty strings, a nil
// trajectory or histogram and a zero MaxScore; Rounds and FinalScore are always
// written (a passing gate's score is 0). Values must not contain line breaks.
func RenderMarker(m Marker) []byte {
	fields := m.Fields
	if len(fields) == 0 {
		fields = markerFields(m)
	}
	var b bytes.Buffer
	for _, f := range fields {
		b.WriteString(f.Key + ":")
		if f.Value != "" {
			b.WriteString(" " + f.Value)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func markerFields(m Marker) []Field {
	var out []Field
	add := func(k, v string) {
		if v != "" {
			out = append(out, Field{k, v})
		}
	}
	if m.Version == 2 {
		add(keyMarkerVersion, "2")
	}
	add(keyArtifactHash, m.ArtifactHash)
	add(keyVerdict, m.Verdict)
	add(keyPhase, PhaseName(m.Phase))
	add(keyPipelineID, m.PipelineID)
	add(keyRounds, strconv.Itoa(m.Rounds))
	add(keyFinalScore, strconv.Itoa(m.FinalScore))
	if m.MaxScore != 0 {
		add(keyMaxScore, strconv.Itoa(m.MaxScore))
	}
	add(keyReason, m.Reason)
	add(keyScoreTrajectory, strings.Join(m.ScoreTrajectory, ","))
	add(keySeverityHistogram, string(m.SeverityHistogram))
	add(keyTimestamp, m.Timestamp)
	add(keyRunID, m.RunID)
	return out
}

// clip shortens s for an error message, at a rune boundary.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	i := max - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// MarkerMismatchError is a marker offered for another pipeline or phase
// than its own.
type MarkerMismatchError struct {
	Marker     Marker
	PipelineID string
	Phase      ledger.Phase
}

func (e *MarkerMismatchError) Error() string {
	if e.Marker.PipelineID != e.PipelineID {
		return fmt.Sprintf("is for pipeline %s, not %s", e.Marker.PipelineID, e.PipelineID)
	}
	return fmt.Sprintf("is for phase %s (%d), not %d", PhaseName(e.Marker.Phase), e.Marker.Phase, e.Phase)
}

// VerdictData is the gate.verdict payload that records m as the verdict on
// phase p of pipeline id: a *MarkerMismatchError when m is for another.
func (m Marker) VerdictData(id string, p ledger.Phase) (pipeline.VerdictData, error) {
	if m.PipelineID != id || m.Phase != p {
		return pipeline.VerdictData{}, &MarkerMismatchError{Marker: m, PipelineID: id, Phase: p}
	}
	d := pipeline.VerdictData{Phase: p, Verdict: m.Verdict, PipelineID: id, Rounds: m.Rounds, Score: m.FinalScore}
	for _, f := range m.Fields {
		d.Marker = append(d.Marker, pipeline.MarkerField{Key: f.Key, Value: f.Value})
	}
	return d, nil
}
