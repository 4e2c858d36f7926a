package interop

// Codecs for the crucible skills' file formats: the phase handoff manifest.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Handoff is a crucible phase handoff manifest (handoff-N-to-M.md), written by
// the build skill at the phase boundaries 1→2, 2→3 and 3→4:
//
//	# Phase Handoff: N → M
//	**Timestamp:** ISO-8601
//	**Goal:** <original request, verbatim>
//	**Mode:** feature | refactor
//
//	## Inputs for Phase M
//	- **<name>:** <path or value>
//
//	## Decisions Carried Forward
//	- [DEC-N] <decision>: <reason>
//
//	## Active Constraints
//	- <constraint>
//
//	## Shed Receipt
//	- <what was shed> → <where it lives>
//
// Lists are nil when their section is absent or empty.
type Handoff struct {
	From, To    int    // 1..4, To == From+1
	Timestamp   string // not checked: the skills write ISO-8601
	Goal        string // verbatim; may span several lines, joined with "\n"
	Mode        string // not checked: the skills write feature or refactor
	Inputs      []HandoffInput
	Decisions   []HandoffDecision
	Constraints []string
	Shed        []HandoffShed
}

// HandoffInput is one "- **<name>:** <value>" line of "## Inputs for Phase M".
type HandoffInput struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HandoffDecision is one "- [DEC-N] <text>: <reason>" line of "## Decisions
// Carried Forward". ID is "DEC-N" without the brackets, or "" when the line
// does not start with "[DEC-<digits>]"; Reason is "" when the line has no ": ".
type HandoffDecision struct {
	ID     string `json:"id,omitempty"`
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
}

// HandoffShed is one "- <what> → <where>" line of "## Shed Receipt", split at
// the first free-standing "→" or "->"; Where is "" when the line has none.
type HandoffShed struct {
	What  string `json:"what"`
	Where string `json:"where"`
}

// HandoffError locates what is wrong in a handoff manifest. Line is 1-based,
// or 0 for a problem with the whole file (a missing title or header line).
type HandoffError struct {
	Line int
	Msg  string
}

func (e *HandoffError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

const (
	handoffTitlePrefix  = "# Phase Handoff:"
	handoffTitleForm    = "# Phase Handoff: N → M"
	handoffInputsPrefix = "Inputs for Phase "
	handoffDecisions    = "Decisions Carried Forward"
	handoffConstraints  = "Active Constraints"
	handoffShed         = "Shed Receipt"
)

// handoffFields are the header's bold keys, in the order Render writes them.
var handoffFields = []string{"Timestamp", "Goal", "Mode"}

// ParseHandoff reads a handoff manifest. Errors are *HandoffError, and the
// Handoff is zero on error.
//
// The first non-blank line must be the title "# Phase Handoff: N → M" ("->" is
// accepted for the arrow) with 1 <= N, M <= 4 and M = N+1. The header lines
// "**Timestamp:**", "**Goal:**" and "**Mode:**" follow, each required once, in
// any order; any other bold key there is an error naming it. The goal runs
// from its line to the next header line or "## " heading, so it may span
// several lines: continuation lines are kept verbatim (but for trailing white
// space), and the goal as a whole is trimmed of surrounding white space and
// blank lines. Then come the sections "## Inputs for Phase M" (M must be the
// title's), "## Decisions Carried Forward", "## Active Constraints" and
// "## Shed Receipt", each at most once, in any order, holding "- " bullets
// only; an unknown section is an error naming it. Blank lines are ignored
// outside the goal, CRLF line ends and a leading UTF-8 byte order mark are
// accepted, and values are trimmed.
func ParseHandoff(data []byte) (Handoff, error) {
	lines := hsLines(data)
	var h Handoff
	fail := func(n int, format string, args ...any) (Handoff, error) {
		return Handoff{}, &HandoffError{Line: n, Msg: fmt.Sprintf(format, args...)}
	}

	i := 0
	for i < len(lines) && lines[i] == "" {
		i++
	}
	if i == len(lines) {
		return fail(0, "missing title %q", handoffTitleForm)
	}
	from, to, msg := parseHandoffTitle(strings.TrimSpace(lines[i]))
	if msg != "" {
		return fail(i+1, "%s", msg)
	}
	h.From, h.To = from, to
	i++

	// Header: the bold lines, up to the first section.
	seen := map[string]int{} // header key -> its line
	var goal []string
	inGoal := false
	for ; i < len(lines); i++ {
		n, t := i+1, strings.TrimSpace(lines[i])
		if _, ok := hsHeading(t); ok {
			break
		}
		key, value, bold := hsBold(t)
		if bold && isHandoffField(key) {
			inGoal = false
			if first, dup := seen[key]; dup {
				return fail(n, "duplicate %q line (first on line %d)", "**"+key+":**", first)
			}
			seen[key] = n
			switch key {
			case "Timestamp":
				h.Timestamp = value
			case "Goal":
				goal, inGoal = []string{value}, true
			case "Mode":
				h.Mode = value
			}
			continue
		}
		switch {
		case inGoal:
			goal = append(goal, lines[i])
		case t == "":
		case bold:
			return fail(n, "unknown header field %q", "**"+clip(key)+":**")
		default:
			return fail(n, "unexpected line %q in the header (want %q, %q or %q)",
				clip(t), "**Timestamp:**", "**Goal:**", "**Mode:**")
		}
	}
	h.Goal = strings.TrimSpace(strings.Join(goal, "\n"))

	// Sections.
	sectionLine := map[string]int{} // section title -> its heading's line
	var section string
	for ; i < len(lines); i++ {
		n, t := i+1, strings.TrimSpace(lines[i])
		if t == "" {
			continue
		}
		if title, ok := hsHeading(t); ok {
			switch {
			case title == handoffDecisions, title == handoffConstraints, title == handoffShed:
			case strings.HasPrefix(title, handoffInputsPrefix):
				if want := handoffInputsPrefix + strconv.Itoa(h.To); title != want {
					return fail(n, "section %q does not match the title's phase %d (want %q)", clip(title), h.To, want)
				}
			default:
				return fail(n, "unknown section %q", clip(title))
			}
			if first, dup := sectionLine[title]; dup {
				return fail(n, "duplicate section %q (first on line %d)", title, first)
			}
			sectionLine[title] = n
			section = title
			continue
		}
		item, ok := hsBullet(t)
		if !ok {
			return fail(n, "want a %q bullet in section %q, found %q", "- ", section, clip(t))
		}
		switch section {
		case handoffDecisions:
			h.Decisions = append(h.Decisions, ParseHandoffDecision(item))
		case handoffConstraints:
			h.Constraints = append(h.Constraints, item)
		case handoffShed:
			h.Shed = append(h.Shed, ParseHandoffShed(item))
		default: // the inputs section
			in, msg := parseHandoffInput(item)
			if msg != "" {
				return fail(n, "%s", msg)
			}
			h.Inputs = append(h.Inputs, in)
		}
	}

	for _, k := range handoffFields {
		if _, ok := seen[k]; !ok {
			return fail(0, "missing %q line", "**"+k+":**")
		}
	}
	return h, nil
}

func isHandoffField(k string) bool {
	return k == "Timestamp" || k == "Goal" || k == "Mode"
}

// parseHandoffTitle reads "# Phase Handoff: N → M"; msg is "" when it is valid.
func parseHandoffTitle(t string) (from, to int, msg string) {
	bad := fmt.Sprintf("want title %q, found %q", handoffTitleForm, clip(t))
	rest, ok := strings.CutPrefix(t, handoffTitlePrefix)
	if !ok {
		return 0, 0, bad
	}
	a, b, ok := strings.Cut(rest, "→")
	if !ok {
		if a, b, ok = strings.Cut(rest, "->"); !ok {
			return 0, 0, bad
		}
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	for _, s := range []string{a, b} {
		if len(s) != 1 || s[0] < '1' || s[0] > '4' {
			return 0, 0, fmt.Sprintf("invalid phase %q in title (want 1 to 4)", clip(s))
		}
	}
	from, to = int(a[0]-'0'), int(b[0]-'0')
	if to != from+1 {
		return 0, 0, fmt.Sprintf("handoff from phase %d to phase %d: want the next phase, %d", from, to, from+1)
	}
	return from, to, ""
}

// parseHandoffInput reads "**<name>:** <value>"; "**<name>**: <value>" is
// accepted too. msg is "" when it is valid.
func parseHandoffInput(item string) (in HandoffInput, msg string) {
	bad := fmt.Sprintf("want an input %q, found %q", "- **<name>:** <value>", clip(item))
	rest, ok := strings.CutPrefix(item, "**")
	if !ok {
		return HandoffInput{}, bad
	}
	name, after, ok := strings.Cut(rest, "**")
	if !ok {
		return HandoffInput{}, bad
	}
	if n, colon := strings.CutSuffix(name, ":"); colon {
		name = n
	} else if a, colon := strings.CutPrefix(after, ":"); colon {
		after = a
	} else {
		return HandoffInput{}, bad
	}
	if name == "" {
		return HandoffInput{}, "empty input name"
	}
	return HandoffInput{Name: name, Value: strings.TrimSpace(after)}, ""
}

// ParseHandoffDecision reads "[DEC-N] <text>: <reason>": the ID prefix is
// optional, and the text ends at the first ": ".
func ParseHandoffDecision(item string) HandoffDecision {
	var d HandoffDecision
	if strings.HasPrefix(item, "[DEC-") {
		if j := strings.IndexByte(item, ']'); j > len("[DEC-") && hsDigits(item[len("[DEC-"):j]) &&
			(j+1 == len(item) || item[j+1] == ' ' || item[j+1] == '\t') {
			d.ID = item[1:j]
			item = strings.TrimSpace(item[j+1:])
		}
	}
	text, reason, _ := strings.Cut(item, ": ")
	d.Text, d.Reason = strings.TrimSpace(text), strings.TrimSpace(reason)
	return d
}

// ParseHandoffShed splits "<what> → <where>" at the first arrow ("→" or
// "->") that stands alone: preceded by white space or the start of the item,
// and followed by white space or its end. An item without one is all What.
func ParseHandoffShed(item string) HandoffShed {
	for k := 0; k < len(item); k++ {
		var w int
		switch {
		case strings.HasPrefix(item[k:], "→"):
			w = len("→")
		case strings.HasPrefix(item[k:], "->"):
			w = len("->")
		default:
			continue
		}
		if r, _ := utf8.DecodeLastRuneInString(item[:k]); k > 0 && !unicode.IsSpace(r) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(item[k+w:]); k+w < len(item) && !unicode.IsSpace(r) {
			continue
		}
		return HandoffShed{What: strings.TrimSpace(item[:k]), Where: strings.TrimSpace(item[k+w:])}
	}
	return HandoffShed{What: item}
}

// Render writes h in the layout of the crucible build skill: the title (with
// "→"), the three header lines in the order Timestamp, Goal, Mode, then the
// four sections in the order Inputs, Decisions, Constraints, Shed Receipt —
// each written even when empty, each preceded by one blank line, each heading
// followed directly by its bullets — and a trailing newline. Empty values
// leave no trailing space ("**Mode:**", "-"). For every h that ParseHandoff
// returns, ParseHandoff(h.Render()) gives back h; values other than Goal must
// not contain line breaks.
func (h Handoff) Render() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Phase Handoff: %d → %d\n", h.From, h.To)
	hsLine(&b, "**Timestamp:**", h.Timestamp)
	hsLine(&b, "**Goal:**", h.Goal)
	hsLine(&b, "**Mode:**", h.Mode)

	fmt.Fprintf(&b, "\n## %s%d\n", handoffInputsPrefix, h.To)
	for _, in := range h.Inputs {
		hsLine(&b, "- **"+in.Name+":**", in.Value)
	}

	b.WriteString("\n## " + handoffDecisions + "\n")
	for _, d := range h.Decisions {
		s := d.Text
		if d.Reason != "" {
			s += ": " + d.Reason
		}
		if d.ID != "" {
			hsLine(&b, "- ["+d.ID+"]", s)
		} else {
			hsLine(&b, "-", s)
		}
	}

	b.WriteString("\n## " + handoffConstraints + "\n")
	for _, c := range h.Constraints {
		hsLine(&b, "-", c)
	}

	b.WriteString("\n## " + handoffShed + "\n")
	for _, s := range h.Shed {
		switch {
		case s.Where == "":
			hsLine(&b, "-", s.What)
		case s.What == "":
			hsLine(&b, "- →", s.Where)
		default:
			hsLine(&b, "-", s.What+" → "+s.Where)
		}
	}
	return b.Bytes()
}

// Helpers shared by the handoff and status codecs (markdown-ish line formats).

// hsLines splits a file into lines: a leading UTF-8 byte order mark is dropped,
// and so is each line's trailing white space (the '\r' of a CRLF included).
func hsLines(data []byte) []string {
	lines := strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return lines
}

// hsHeading reports whether the trimmed line t is a "## " heading, and its
// trimmed title.
func hsHeading(t string) (title string, ok bool) {
	if t == "##" {
		return "", true
	}
	if len(t) > 2 && t[:2] == "##" && (t[2] == ' ' || t[2] == '\t') {
		return strings.TrimSpace(t[3:]), true
	}
	return "", false
}

// hsBullet reports whether the trimmed line t is a "- " bullet, and its
// trimmed text; a lone "-" is an empty bullet.
func hsBullet(t string) (item string, ok bool) {
	if t == "-" {
		return "", true
	}
	if len(t) > 1 && t[0] == '-' && (t[1] == ' ' || t[1] == '\t') {
		return strings.TrimSpace(t[2:]), true
	}
	return "", false
}

// hsBold reads a trimmed "**Key:** value" line; value is trimmed.
func hsBold(t string) (key, value string, ok bool) {
	rest, ok := strings.CutPrefix(t, "**")
	if !ok {
		return "", "", false
	}
	key, value, ok = strings.Cut(rest, ":**")
	if !ok {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// hsLine writes prefix, a space and value, or prefix alone when value is
// empty, and a newline.
func hsLine(b *bytes.Buffer, prefix, value string) {
	b.WriteString(prefix)
	if value != "" {
		b.WriteString(" " + value)
	}
	b.WriteByte('\n')
}

func hsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// RenderHandoff is the handoff document of d for a pipeline in state st,
// recorded at time at: the pipeline's goal verbatim and its mode. It is a
// pipeline.HandoffRenderer.
func RenderHandoff(d pipeline.HandoffData, st *pipeline.State, at string) []byte {
	h := Handoff{From: int(d.From), To: int(d.To), Timestamp: at, Goal: st.Goal, Mode: st.Mode, Constraints: d.Constraints}
	for _, in := range d.Inputs {
		h.Inputs = append(h.Inputs, HandoffInput(in))
	}
	for _, dec := range d.Decisions {
		h.Decisions = append(h.Decisions, HandoffDecision(dec))
	}
	for _, sh := range d.Shed {
		h.Shed = append(h.Shed, HandoffShed(sh))
	}
	return h.Render()
}

// Data is the event payload that records h: the handoff out of phase
// h.From, kept at its place in the chain's tree.
func (h Handoff) Data() pipeline.HandoffData {
	from := ledger.Phase(h.From)
	d := pipeline.HandoffData{From: from, To: from + 1, Path: pipeline.HandoffPath(from), Constraints: h.Constraints}
	for _, in := range h.Inputs {
		d.Inputs = append(d.Inputs, pipeline.HandoffInput(in))
	}
	for _, dec := range h.Decisions {
		d.Decisions = append(d.Decisions, pipeline.HandoffDecision(dec))
	}
	for _, sh := range h.Shed {
		d.Shed = append(d.Shed, pipeline.HandoffShed(sh))
	}
	return d
}
