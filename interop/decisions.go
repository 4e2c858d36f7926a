package interop

// Codec for crucible's decision journal, crucible-decisions-<session-id>.log.

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
)

// Decision is one line of the decision journal:
//
//	[<timestamp>] DECISION: <type> | choice=<what> | reason=<why> | alternatives=<rejected>
type Decision struct {
	Time                               string // RFC 3339, UTC
	Type, Choice, Reason, Alternatives string
}

// DecisionError is a journal line that ParseDecisions skipped. Line is 1-based.
type DecisionError struct {
	Line int
	Msg  string
}

func (e *DecisionError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// DecisionsFile is the name export gives pipeline id's journal, as crucible
// names it in /tmp; import reads every file that DecisionsGlob matches.
func DecisionsFile(id string) string { return "crucible-decisions-" + id + ".log" }

// DecisionsGlob matches the decision journals of a directory.
const DecisionsGlob = "crucible-decisions-*.log"

const (
	djDecision     = "] DECISION: "
	djChoice       = " | choice="
	djReason       = " | reason="
	djAlternatives = " | alternatives="
)

// ParseDecisions reads a decision journal. A line is "[<timestamp>]
// DECISION: <type> | choice=<what>", then optionally " | reason=<why>", then
// optionally " | alternatives=<rejected>", in that order; each value is the
// text up to the next of those marks, so a type may hold " | reason=" but a
// choice may not. The timestamp is one git reads as a date (no zone meaning
// local time) and comes back as RFC 3339 in UTC. Blank lines are skipped;
// any other line is reported and skipped, as manifest lines are.
func ParseDecisions(data []byte) (entries []Decision, problems []*DecisionError) {
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		d, msg := parseDecision(line)
		if msg != "" {
			problems = append(problems, &DecisionError{Line: n + 1, Msg: msg})
			continue
		}
		entries = append(entries, d)
	}
	return entries, problems
}

func parseDecision(line string) (Decision, string) {
	var d Decision
	stamp, rest, ok := strings.Cut(strings.TrimPrefix(line, "["), djDecision)
	if !ok || !strings.HasPrefix(line, "[") {
		return d, fmt.Sprintf("not a decision line %q (want \"[<timestamp>] DECISION: <type> | choice=<what> | ...\")", clip(line))
	}
	t, err := gitext.ParseDate(stamp)
	if err != nil {
		return d, fmt.Sprintf("invalid timestamp %q", clip(stamp))
	}
	d.Time = t.UTC().Format(time.RFC3339)
	if d.Type, rest, ok = strings.Cut(rest, djChoice); !ok {
		return d, "no choice= after the decision type"
	}
	choice, reason, hasReason := strings.Cut(rest, djReason)
	switch {
	case !hasReason:
		d.Choice, d.Alternatives, _ = strings.Cut(choice, djAlternatives)
	case strings.Contains(choice, djAlternatives):
		return d, "alternatives= before reason= (want type, choice, reason, alternatives in that order)"
	default:
		d.Choice = choice
		d.Reason, d.Alternatives, _ = strings.Cut(reason, djAlternatives)
	}
	if strings.TrimSpace(d.Type) == "" || strings.TrimSpace(d.Choice) == "" {
		return d, "a decision needs a type and a choice"
	}
	return d, ""
}

// Render writes d as one journal line, its newline included, with every
// field. ParseDecisions(d.Render()) gives back d when Time is RFC 3339 in
// UTC, no value holds a line break, and Choice and Reason hold none of the
// marks that follow them (" | reason=", " | alternatives=").
func (d Decision) Render() []byte {
	return []byte("[" + d.Time + djDecision + d.Type + djChoice + d.Choice + djReason + d.Reason +
		djAlternatives + d.Alternatives + "\n")
}
