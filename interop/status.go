package interop

// Codecs for the crucible skills' file formats: the pipeline status file.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Status is crucible's pipeline-status.md, which the skills overwrite at every
// narration point:
//
//	# Pipeline Status
//	**Updated:** <timestamp>
//	**Started:** <timestamp>
//	**Skill:** build
//	**Phase:** 3 — Execute (Autonomous)
//	**Health:** GREEN|YELLOW|RED
//	**Suggested Action:** <only when not GREEN>
//	**Elapsed:** 1h 12m
//
//	## Recent Events
//	- [HH:MM] <event, newest first, at most 5>
//
//	## Task Progress
//	| # | Task | Tier | Status | Duration |
//	|---|------|------|--------|----------|
//	| 1 | Auth middleware | T3 | DONE | 12m |
//
//	## Quality Gates
//	- Design: PASSED (2 rounds)
//
//	## Checkpoints
//	- Last checkpoint: pre-wave-3 (12:45:30)
//
//	## Compression State
//	Goal: <original request>
//	Key Decisions:
//	- <decision, at most 10>
//	Active Constraints:
//	- <constraint>
//	Next Steps:
//	1. <step>
//
// The header values are kept as written (Health is checked). Lists are nil
// when their section is absent or empty.
type Status struct {
	Updated, Started, Skill, Phase string
	Health                         string // GREEN, YELLOW, RED, or "" when absent
	SuggestedAction                string // only when Health is not GREEN
	Elapsed                        string
	RecentEvents                   []StatusEvent   // newest first, at most 5
	Tasks                          []StatusTask    // rows of "## Task Progress"
	QualityGates                   []string        // "## Quality Gates" bullets, e.g. "Design: PASSED (2 rounds)"
	Checkpoints                    []string        // "## Checkpoints" bullets
	Compression                    Compression     // "## Compression State"
	Extra                          []StatusSection // every other "## " section, in file order
}

// StatusEvent is one "- [HH:MM] text" line of "## Recent Events". Time is what
// the brackets hold, trimmed; it is not checked beyond being non-empty.
type StatusEvent struct{ Time, Text string }

// StatusTask is one row of the "## Task Progress" table
// "| # | Task | Tier | Status | Duration |"; cells are trimmed, and "\|"
// in a cell stands for '|'.
type StatusTask struct{ N, Task, Tier, Status, Duration string }

// StatusSection is a skill-specific "## Title" section the codec does not
// know: its lines are kept verbatim (but for trailing white space), without
// the blank lines at its start and end.
type StatusSection struct {
	Title string
	Lines []string
}

// Compression is the "## Compression State" section of the status file, the
// semantic subset of the Compression State Block that compaction recovery
// reads first.
type Compression struct {
	Goal         string   // "Goal:" text; may span several lines, joined with "\n"
	KeyDecisions []string // "Key Decisions:" bullets, at most 10
	Constraints  []string // "Active Constraints:" bullets
	NextSteps    []string // "Next Steps:" items, without their "1." numbers
}

// StatusError locates what is wrong in a status file. Line is 1-based, or 0
// for a problem with the whole file (a missing title).
type StatusError struct {
	Line int
	Msg  string
}

func (e *StatusError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Health values of the status file.
const (
	healthGreen  = "GREEN"
	healthYellow = "YELLOW"
	healthRed    = "RED"
)

const (
	statusTitle         = "# Pipeline Status"
	statusEvents        = "Recent Events"
	statusTasks         = "Task Progress"
	statusGates         = "Quality Gates"
	statusCheckpoints   = "Checkpoints"
	statusCompression   = "Compression State"
	statusMaxEvents     = 5
	statusMaxDecisions  = 10
	statusTaskHeader    = "| # | Task | Tier | Status | Duration |"
	statusTaskSeparator = "|---|------|------|--------|----------|"
)

// statusFields are the header's bold keys, in the order Render writes them.
var statusFields = []string{"Updated", "Started", "Skill", "Phase", "Health", "Suggested Action", "Elapsed"}

func isStatusField(k string) bool {
	for _, f := range statusFields {
		if k == f {
			return true
		}
	}
	return false
}

var statusTaskColumns = []string{"#", "Task", "Tier", "Status", "Duration"}

// Compression State labels.
const (
	labelGoal        = "Goal:"
	labelDecisions   = "Key Decisions:"
	labelConstraints = "Active Constraints:"
	labelNextSteps   = "Next Steps:"
)

// ParseStatus reads a pipeline status file. Errors are *StatusError, and the
// Status is zero on error.
//
// The first non-blank line must be "# Pipeline Status". The header lines
// "**Updated:**", "**Started:**", "**Skill:**", "**Phase:**", "**Health:**",
// "**Suggested Action:**" and "**Elapsed:**" follow, each at most once, in any
// order, none required; any other bold key is an error naming it. Health must
// be GREEN, YELLOW or RED (or empty); a non-empty Suggested Action with Health
// GREEN is an error. Then come "## " sections in any order, the known ones at
// most once each:
//   - "## Recent Events": "- [time] text" bullets, at most 5;
//   - "## Task Progress": the table header "| # | Task | Tier | Status | Duration |",
//     a separator row of dashes, and rows of five cells;
//   - "## Quality Gates", "## Checkpoints": "- " bullets, kept verbatim;
//   - "## Compression State": the labels "Goal:", "Key Decisions:", "Active
//     Constraints:" and "Next Steps:", each at most once, in any order. The goal
//     runs from "Goal:" to the next label (continuation lines kept verbatim,
//     the whole trimmed); Key Decisions (at most 10) and Active Constraints
//     hold "- " bullets; Next Steps holds "1. " numbered items (or "- "
//     bullets), stored without the number;
//   - any other title goes to Extra, its lines kept verbatim.
//
// Blank lines are ignored outside the goals and the Extra sections, CRLF line
// ends and a leading UTF-8 byte order mark are accepted, and values are
// trimmed.
func ParseStatus(data []byte) (Status, error) {
	s, err := parseStatus(hsLines(data))
	if err != nil {
		return Status{}, err
	}
	return s, nil
}

func statusFail(n int, format string, args ...any) error {
	return &StatusError{Line: n, Msg: fmt.Sprintf(format, args...)}
}

func parseStatus(lines []string) (Status, error) {
	var s Status
	i := 0
	for i < len(lines) && lines[i] == "" {
		i++
	}
	if i == len(lines) {
		return s, statusFail(0, "missing title %q", statusTitle)
	}
	if t := strings.TrimSpace(lines[i]); t != statusTitle {
		return s, statusFail(i+1, "want title %q, found %q", statusTitle, clip(t))
	}
	i++

	// Header: the bold lines, up to the first section.
	seen := map[string]int{} // header key -> its line
	for ; i < len(lines); i++ {
		n, t := i+1, strings.TrimSpace(lines[i])
		if t == "" {
			continue
		}
		if _, ok := hsHeading(t); ok {
			break
		}
		key, value, ok := hsBold(t)
		if !ok {
			return s, statusFail(n, "want a %q header line, found %q", "**Key:** value", clip(t))
		}
		if !isStatusField(key) {
			return s, statusFail(n, "unknown header field %q", "**"+clip(key)+":**")
		}
		if first, dup := seen[key]; dup {
			return s, statusFail(n, "duplicate %q line (first on line %d)", "**"+key+":**", first)
		}
		seen[key] = n
		switch key {
		case "Updated":
			s.Updated = value
		case "Started":
			s.Started = value
		case "Skill":
			s.Skill = value
		case "Phase":
			s.Phase = value
		case "Health":
			switch value {
			case "", healthGreen, healthYellow, healthRed:
			default:
				return s, statusFail(n, "invalid health %q (want GREEN, YELLOW or RED)", clip(value))
			}
			s.Health = value
		case "Suggested Action":
			s.SuggestedAction = value
		case "Elapsed":
			s.Elapsed = value
		}
	}
	if s.Health == healthGreen && s.SuggestedAction != "" {
		return s, statusFail(seen["Suggested Action"], "%q must be left out when Health is GREEN", "**Suggested Action:**")
	}

	// Sections: each runs from its heading to the next.
	known := map[string]int{} // known section title -> its heading's line
	for i < len(lines) {
		head := i + 1
		title, _ := hsHeading(strings.TrimSpace(lines[i]))
		i++
		start := i
		for i < len(lines) {
			if _, ok := hsHeading(strings.TrimSpace(lines[i])); ok {
				break
			}
			i++
		}
		body := lines[start:i]
		var err error
		switch title {
		case statusEvents, statusTasks, statusGates, statusCheckpoints, statusCompression:
			if first, dup := known[title]; dup {
				return Status{}, statusFail(head, "duplicate section %q (first on line %d)", title, first)
			}
			known[title] = head
		case "":
			return Status{}, statusFail(head, "empty section title")
		}
		switch title {
		case statusEvents:
			s.RecentEvents, err = parseStatusEvents(body, start)
		case statusTasks:
			s.Tasks, err = parseStatusTasks(body, start)
		case statusGates, statusCheckpoints:
			var items []string
			items, err = parseStatusBullets(body, start, title)
			if title == statusGates {
				s.QualityGates = items
			} else {
				s.Checkpoints = items
			}
		case statusCompression:
			s.Compression, err = parseCompression(body, start)
		default:
			s.Extra = append(s.Extra, StatusSection{Title: title, Lines: trimBlankLines(body)})
		}
		if err != nil {
			return Status{}, err
		}
	}
	return s, nil
}

// The section parsers get the section's lines and the index of the first in
// the file, so that line start+j+1 is body[j].

func parseStatusBullets(body []string, start int, title string) ([]string, error) {
	var items []string
	for j, l := range body {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		item, ok := hsBullet(t)
		if !ok {
			return nil, statusFail(start+j+1, "want a %q bullet in section %q, found %q", "- ", title, clip(t))
		}
		items = append(items, item)
	}
	return items, nil
}

func parseStatusEvents(body []string, start int) ([]StatusEvent, error) {
	var events []StatusEvent
	for j, l := range body {
		n, t := start+j+1, strings.TrimSpace(l)
		if t == "" {
			continue
		}
		item, ok := hsBullet(t)
		if !ok {
			return nil, statusFail(n, "want a %q bullet in section %q, found %q", "- ", statusEvents, clip(t))
		}
		rest, ok := strings.CutPrefix(item, "[")
		tm, text, ok2 := strings.Cut(rest, "]")
		if tm = strings.TrimSpace(tm); !ok || !ok2 || tm == "" {
			return nil, statusFail(n, "want an event %q, found %q", "- [HH:MM] text", clip(t))
		}
		if len(events) == statusMaxEvents {
			return nil, statusFail(n, "more than %d recent events", statusMaxEvents)
		}
		events = append(events, StatusEvent{Time: tm, Text: strings.TrimSpace(text)})
	}
	return events, nil
}

func parseStatusTasks(body []string, start int) ([]StatusTask, error) {
	var tasks []StatusTask
	state := 0  // 0: want the header, 1: want the separator, 2: rows
	header := 0 // the header's line
	for j, l := range body {
		n, t := start+j+1, strings.TrimSpace(l)
		if t == "" {
			continue
		}
		cells, ok := splitStatusRow(t)
		switch state {
		case 0:
			header = n
			if !ok || len(cells) != len(statusTaskColumns) {
				return nil, statusFail(n, "want the task table header %q, found %q", statusTaskHeader, clip(t))
			}
			for c, col := range statusTaskColumns {
				if !strings.EqualFold(cells[c], col) {
					return nil, statusFail(n, "want the task table header %q, found %q", statusTaskHeader, clip(t))
				}
			}
		case 1:
			if !ok || len(cells) != len(statusTaskColumns) || !allDashCells(cells) {
				return nil, statusFail(n, "want the table separator %q, found %q", statusTaskSeparator, clip(t))
			}
		default:
			if !ok {
				return nil, statusFail(n, "want a task row %q, found %q", "| # | Task | Tier | Status | Duration |", clip(t))
			}
			if len(cells) != len(statusTaskColumns) {
				return nil, statusFail(n, "task row has %d cells, want %d", len(cells), len(statusTaskColumns))
			}
			tasks = append(tasks, StatusTask{N: cells[0], Task: cells[1], Tier: cells[2], Status: cells[3], Duration: cells[4]})
		}
		if state < 2 {
			state++
		}
	}
	if state == 1 {
		return nil, statusFail(header, "task table has no separator row")
	}
	return tasks, nil
}

// splitStatusRow splits a trimmed table row "| a | b |" into trimmed cells;
// "\|" stands for '|' in a cell, and the closing '|' may be left out.
func splitStatusRow(t string) ([]string, bool) {
	rest, ok := strings.CutPrefix(t, "|")
	if !ok {
		return nil, false
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '\\' && i+1 < len(rest) && rest[i+1] == '|':
			cell.WriteByte('|')
			i++
		case c == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(c)
		}
	}
	if last := strings.TrimSpace(cell.String()); last != "" {
		cells = append(cells, last)
	}
	return cells, true
}

func allDashCells(cells []string) bool {
	for _, c := range cells {
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

func parseCompression(body []string, start int) (Compression, error) {
	var c Compression
	var goal []string
	label := ""              // the label whose items are being read
	seen := map[string]int{} // label -> its line
	for j, l := range body {
		n, t := start+j+1, strings.TrimSpace(l)
		if lab, rest, ok := compressionLabel(t); ok {
			if first, dup := seen[lab]; dup {
				return Compression{}, statusFail(n, "duplicate %q (first on line %d)", lab, first)
			}
			seen[lab] = n
			if lab == labelGoal {
				goal = []string{rest}
			} else if rest != "" {
				return Compression{}, statusFail(n, "unexpected text %q after %q", clip(rest), lab)
			}
			label = lab
			continue
		}
		if label == labelGoal {
			goal = append(goal, l)
			continue
		}
		if t == "" {
			continue
		}
		switch label {
		case "":
			return Compression{}, statusFail(n, "want %q, %q, %q or %q in section %q, found %q",
				labelGoal, labelDecisions, labelConstraints, labelNextSteps, statusCompression, clip(t))
		case labelNextSteps:
			item, ok := numberedItem(t)
			if !ok {
				if item, ok = hsBullet(t); !ok {
					return Compression{}, statusFail(n, "want a numbered step %q, found %q", "1. step", clip(t))
				}
			}
			c.NextSteps = append(c.NextSteps, item)
		default:
			item, ok := hsBullet(t)
			if !ok {
				return Compression{}, statusFail(n, "want a %q bullet after %q, found %q", "- ", label, clip(t))
			}
			if label == labelDecisions {
				if len(c.KeyDecisions) == statusMaxDecisions {
					return Compression{}, statusFail(n, "more than %d key decisions", statusMaxDecisions)
				}
				c.KeyDecisions = append(c.KeyDecisions, item)
			} else {
				c.Constraints = append(c.Constraints, item)
			}
		}
	}
	c.Goal = strings.TrimSpace(strings.Join(goal, "\n"))
	return c, nil
}

// compressionLabel reports whether the trimmed line t starts with a
// Compression State label, and the trimmed text after it.
func compressionLabel(t string) (label, rest string, ok bool) {
	for _, lab := range []string{labelGoal, labelDecisions, labelConstraints, labelNextSteps} {
		if r, ok := strings.CutPrefix(t, lab); ok {
			return lab, strings.TrimSpace(r), true
		}
	}
	return "", "", false
}

// numberedItem reads a trimmed "<digits>. text" line (or "<digits>." alone).
func numberedItem(t string) (string, bool) {
	d := 0
	for d < len(t) && '0' <= t[d] && t[d] <= '9' {
		d++
	}
	if d == 0 || d == len(t) || t[d] != '.' {
		return "", false
	}
	rest := t[d+1:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// trimBlankLines drops the empty lines at the start and end of lines; it
// returns nil when nothing is left.
func trimBlankLines(lines []string) []string {
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil
	}
	return append([]string(nil), lines...)
}

// Render writes s in crucible's layout: "# Pipeline Status"; the header lines
// Updated, Started, Skill, Phase, Health, Suggested Action (only when Health is
// not GREEN and the action is not empty) and Elapsed, empty values written as
// a bare "**Key:**"; then the sections, each preceded by one blank line and
// its heading followed directly by its lines: "## Recent Events" (always, the
// first 5 events), "## Task Progress", "## Quality Gates" and
// "## Checkpoints" (each only when it has entries), the Extra sections in
// order, and "## Compression State" last (always, all four labels, the first
// 10 key decisions, next steps numbered from 1). The file ends with a newline.
// For every s that ParseStatus returns, ParseStatus(s.Render()) gives back s;
// values other than the goal and the Extra lines must not contain line breaks.
func (s Status) Render() []byte {
	var b bytes.Buffer
	b.WriteString(statusTitle + "\n")
	hsLine(&b, "**Updated:**", s.Updated)
	hsLine(&b, "**Started:**", s.Started)
	hsLine(&b, "**Skill:**", s.Skill)
	hsLine(&b, "**Phase:**", s.Phase)
	hsLine(&b, "**Health:**", s.Health)
	if s.Health != healthGreen && s.SuggestedAction != "" {
		hsLine(&b, "**Suggested Action:**", s.SuggestedAction)
	}
	hsLine(&b, "**Elapsed:**", s.Elapsed)

	b.WriteString("\n## " + statusEvents + "\n")
	for i, e := range s.RecentEvents {
		if i == statusMaxEvents {
			break
		}
		hsLine(&b, "- ["+e.Time+"]", e.Text)
	}

	if len(s.Tasks) > 0 {
		b.WriteString("\n## " + statusTasks + "\n" + statusTaskHeader + "\n" + statusTaskSeparator + "\n")
		for _, t := range s.Tasks {
			b.WriteString("|")
			for _, cell := range []string{t.N, t.Task, t.Tier, t.Status, t.Duration} {
				b.WriteString(" " + strings.ReplaceAll(cell, "|", `\|`) + " |")
			}
			b.WriteByte('\n')
		}
	}

	for _, sec := range []struct {
		title string
		items []string
	}{{statusGates, s.QualityGates}, {statusCheckpoints, s.Checkpoints}} {
		if len(sec.items) == 0 {
			continue
		}
		b.WriteString("\n## " + sec.title + "\n")
		for _, item := range sec.items {
			hsLine(&b, "-", item)
		}
	}

	for _, x := range s.Extra {
		hsLine(&b, "\n##", x.Title)
		for _, l := range x.Lines {
			b.WriteString(l + "\n")
		}
	}

	c := s.Compression
	b.WriteString("\n## " + statusCompression + "\n")
	hsLine(&b, labelGoal, c.Goal)
	b.WriteString(labelDecisions + "\n")
	for i, d := range c.KeyDecisions {
		if i == statusMaxDecisions {
			break
		}
		hsLine(&b, "-", d)
	}
	b.WriteString(labelConstraints + "\n")
	for _, k := range c.Constraints {
		hsLine(&b, "-", k)
	}
	b.WriteString(labelNextSteps + "\n")
	for i, step := range c.NextSteps {
		hsLine(&b, strconv.Itoa(i+1)+".", step)
	}
	return b.Bytes()
}
