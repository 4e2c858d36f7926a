package interop

// Codec for the checkpoint list, checkpoint-manifest.md.

import (
	"fmt"
	"strings"
)

// CheckpointRow is one row of checkpoint-manifest.md:
// | <hash> | <timestamp> | <reason> | <source-skill> |
type CheckpointRow struct{ Hash, Timestamp, Reason, Source string }

// CheckpointError is a checkpoint-manifest.md row that ParseCheckpoints
// skipped. Line is 1-based.
type CheckpointError struct {
	Line int
	Msg  string
}

func (e *CheckpointError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

const checkpointHeader = "| Hash | Timestamp | Reason | Source |\n|------|-----------|--------|--------|\n"

// ParseCheckpoints reads the rows of a checkpoint list, in file order.
//
// A table row is a line that starts with '|' once trimmed; its cells are what
// lies between the '|'s (the closing '|' may be missing), each trimmed. There
// is no escaping: a cell cannot hold '|'. Header rows (first cell "Hash", any
// case, or a row followed by a separator row), separator rows (every cell
// made of '-' with an optional ':' at either end) and lines that are not table
// rows are skipped. A row with other than 4 cells, or whose hash is not 7 to
// 40 lowercase hex digits, is returned as a problem and skipped, never fatal.
func ParseCheckpoints(data []byte) (rows []CheckpointRow, problems []*CheckpointError) {
	lines := strings.Split(string(data), "\n")
	cellsOf := func(i int) ([]string, bool) {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "|") {
			return nil, false
		}
		inner := strings.TrimSuffix(line[1:], "|")
		cells := strings.Split(inner, "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		return cells, true
	}
	for i := range lines {
		n := i + 1
		cells, ok := cellsOf(i)
		if !ok || checkpointSeparator(cells) || strings.EqualFold(cells[0], "Hash") {
			continue
		}
		if i+1 < len(lines) {
			if next, ok := cellsOf(i + 1); ok && checkpointSeparator(next) {
				continue // a header row
			}
		}
		if len(cells) != 4 {
			problems = append(problems, &CheckpointError{Line: n, Msg: fmt.Sprintf("want 4 cells, found %d", len(cells))})
			continue
		}
		if !checkpointHash(cells[0]) {
			problems = append(problems, &CheckpointError{Line: n,
				Msg: fmt.Sprintf("invalid hash %q: want 7 to 40 lowercase hex digits", clip(cells[0]))})
			continue
		}
		rows = append(rows, CheckpointRow{Hash: cells[0], Timestamp: cells[1], Reason: cells[2], Source: cells[3]})
	}
	return rows, problems
}

// checkpointSeparator: every cell is '-'s with an optional ':' at either end.
func checkpointSeparator(cells []string) bool {
	for _, c := range cells {
		c = strings.TrimPrefix(c, ":")
		c = strings.TrimSuffix(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

func checkpointHash(s string) bool { return len(s) >= 7 && len(s) <= 40 && isLowerHex(s) }

// RenderCheckpoints writes the header "| Hash | Timestamp | Reason | Source |"
// and its separator row, then one "| hash | timestamp | reason | source |"
// line per row. Values must not hold '|' or a line break, nor start or end
// with white space, for ParseCheckpoints to read them back.
func RenderCheckpoints(rows []CheckpointRow) []byte {
	var b strings.Builder
	b.WriteString(checkpointHeader)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Hash, r.Timestamp, r.Reason, r.Source)
	}
	return []byte(b.String())
}
