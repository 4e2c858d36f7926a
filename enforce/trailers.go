// Package enforce decides what the hooks allow: which commits may be made,
// what provenance they carry, and whether a range of history was made with
// its gates passed. It reads pipelines; it never prints.
package enforce

import (
	"bytes"
	"slices"
	"strings"
)

// Trailer keys written on commits made inside a pipeline.
const (
	TrailerPipeline = "Crucible-Pipeline"
	TrailerPhase    = "Crucible-Phase"
	TrailerTask     = "Crucible-Task"
	TrailerSeq      = "Crucible-Seq"
)

// Trailer is one "Key: value" line of a commit message's trailer block.
type Trailer struct{ Key, Value string }

// scissors, after the comment character, starts the part of a message
// `git commit -v` shows and strips.
const scissors = " ------------------------ >8 ------------------------"

// Style is what decides how git will clean a message up: the characters
// that start comment lines (core.commentChar; "auto" may pick any of
// AutoCommentChars) and the commit.template text, which git refuses to
// commit unedited.
type Style struct {
	CommentChars string
	Template     string
}

// AutoCommentChars are the characters core.commentChar=auto picks from.
const AutoCommentChars = "#;@!$%^&|:"

func (st Style) comment(line string) bool {
	chars := st.CommentChars
	if chars == "" {
		chars = "#"
	}
	return line != "" && strings.IndexByte(chars, line[0]) >= 0
}

// text returns the lines git keeps of a message: up to the scissors line,
// without comment lines, trailing white space trimmed, with no blank lines
// at either end.
func (st Style) text(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r\n")
		if len(l) > 0 && l[1:] == scissors && st.comment(l) {
			break
		}
		if !st.comment(l) {
			out = append(out, l)
		}
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Empty reports whether git will abort a commit with this message: nothing
// but blank lines and sign-offs once cleaned up, or the template unedited.
func (st Style) Empty(msg []byte) bool {
	text := st.text(strings.SplitAfter(string(msg), "\n"))
	if st.Template != "" && slices.Equal(text, st.text(strings.SplitAfter(st.Template, "\n"))) {
		return true
	}
	for _, l := range text {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "Signed-off-by: ") {
			return false
		}
	}
	return true
}

// AddTrailers puts trailers at the end of a commit message as the commit-msg
// hook sees it (comments and a scissors section may follow the text): into
// the message's trailer block when it ends with one, replacing lines with
// the same keys, else as a new block after a blank line. A message with no
// text is returned unchanged with ok false, so that git still aborts the
// commit for a message it counts as empty (see Style.Empty).
func AddTrailers(msg []byte, add []Trailer, st Style) (out []byte, ok bool) {
	if st.Empty(msg) {
		return msg, false
	}
	lines := strings.SplitAfter(string(msg), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// The text ends at the scissors line, before trailing comments and blanks.
	end := len(lines)
	for i, l := range lines {
		if l = strings.TrimRight(l, "\r\n"); len(l) > 0 && l[1:] == scissors && st.comment(l) {
			end = i
			break
		}
	}
	last := -1
	for i := 0; i < end; i++ {
		if l := strings.TrimSpace(lines[i]); l != "" && !st.comment(lines[i]) {
			last = i
		}
	}
	if last < 0 {
		return msg, false
	}
	replace := map[string]bool{}
	for _, t := range add {
		replace[strings.ToLower(t.Key)] = true
	}
	// The last paragraph is a trailer block when every line in it is one.
	start := last
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	block := start > 0 // the subject paragraph is never a trailer block
	for i := start; i <= last && block; i++ {
		if !st.comment(lines[i]) && !isTrailer(lines[i]) {
			block = false
		}
	}
	var b bytes.Buffer
	for i := 0; i <= last; i++ {
		if block && i >= start && isTrailer(lines[i]) && replace[strings.ToLower(trailerKey(lines[i]))] {
			continue
		}
		b.WriteString(lines[i])
		if !strings.HasSuffix(lines[i], "\n") {
			b.WriteByte('\n')
		}
	}
	if !block {
		b.WriteByte('\n')
	}
	for _, t := range add {
		b.WriteString(t.Key + ": " + t.Value + "\n")
	}
	for i := last + 1; i < len(lines); i++ {
		b.WriteString(lines[i])
	}
	return b.Bytes(), true
}

// isTrailer reports whether a line looks like "Token: value", the token
// made of letters, digits and hyphens, as git interpret-trailers reads it.
func isTrailer(line string) bool {
	key := trailerKey(line)
	if key == "" {
		return false
	}
	for _, r := range key {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func trailerKey(line string) string {
	key, _, ok := strings.Cut(line, ":")
	if !ok {
		return ""
	}
	return key
}
