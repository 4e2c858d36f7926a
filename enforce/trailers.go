// Package enforce decides what the hooks allow: which commits may be made,
// what provenance they carry, and whether a range of history was made with
// its gates passed. It reads pipelines; it never prints.
package enforce

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
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

// WriteTrailers is AddTrailers for a message in repo: when some config file
// could change how git reads trailers (trailer.separators, configured
// trailer keys), git's own trailer code writes them instead — a process
// the common case does without.
func WriteTrailers(ctx context.Context, repo *gitext.Repo, msg []byte, add []Trailer, st Style) (out []byte, ok bool, err error) {
	if st.Empty(msg) {
		return msg, false, nil
	}
	if !repo.ConfigMayMention("trailer") {
		out, ok = AddTrailers(msg, add, st)
		return out, ok, nil
	}
	args := make([]string, len(add))
	for i, t := range add {
		args[i] = t.Key + ": " + t.Value
	}
	out, err = repo.InterpretTrailers(ctx, msg, args)
	return out, err == nil, err
}

// AddTrailers puts trailers at the end of a commit message as the commit-msg
// hook sees it (comments and a scissors section may follow the text), as
// `git interpret-trailers --no-divider` with trailer.ifexists=replace would:
// into the message's trailer block when it ends with one (git's rules:
// all trailers, or a quarter of them with one git wrote, continuation lines
// belonging to the trailer above), replacing lines with the same keys, else
// as a new block after a blank line. A message with no text is returned
// unchanged with ok false, so that git still aborts the commit for a
// message it counts as empty (see Style.Empty). Configuration that makes
// git read blocks its own way is WriteTrailers' concern.
func AddTrailers(msg []byte, add []Trailer, st Style) (out []byte, ok bool) {
	if st.Empty(msg) {
		return msg, false
	}
	lines := strings.SplitAfter(string(msg), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	end := st.textEnd(lines)
	last := end - 1 // the last line of text
	for last >= 0 && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	if last < 0 {
		return msg, false
	}
	start := st.blockStart(lines[:last+1])
	replace := map[string]bool{}
	for _, t := range add {
		replace[strings.ToLower(t.Key)] = true
	}
	var b bytes.Buffer
	dropping := false // inside one of our own trailers, continuation lines included
	for i := 0; i <= last; i++ {
		l := lines[i]
		if start >= 0 && i >= start {
			switch {
			case isContinuation(l) && dropping:
				continue
			case !st.comment(l) && !isContinuation(l):
				key, _, ok := cutTrailer(l)
				dropping = ok && replace[strings.ToLower(key)]
				if dropping {
					continue
				}
			}
		}
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	if start < 0 {
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

// textEnd is the index of the first line git's trailer code ignores at the
// end of a message: the scissors line and what follows it, then a final
// run of comment lines, empty lines and an old-style "Conflicts:" block.
func (st Style) textEnd(lines []string) int {
	cut := len(lines)
	for i, l := range lines {
		if l = strings.TrimRight(l, "\r\n"); len(l) > 0 && l[1:] == scissors && st.comment(l) {
			cut = i
			break
		}
	}
	run, conflicts := 0, false // 0 is "no run", as in git: a run cannot start at the first line
	for i := 0; i < cut; i++ {
		l := lines[i]
		switch {
		case st.comment(l) || l == "\n":
			if run == 0 {
				run = i
			}
		case l == "Conflicts:\n":
			conflicts = true
			if run == 0 {
				run = i
			}
		case conflicts && l[0] == '\t':
		default:
			run, conflicts = 0, false
		}
	}
	if run > 0 {
		return run
	}
	return cut
}

// gitGenerated starts the trailer lines git itself writes; one of them makes
// a paragraph that is a quarter trailers a trailer block.
var gitGenerated = []string{"Signed-off-by: ", "(cherry picked from commit "}

// blockStart returns the index of the first line of the trailer block that
// ends text, or -1 when the last paragraph is not one: git's
// find_trailer_start, with the default separator and no configured trailers.
func (st Style) blockStart(text []string) int {
	title := 0 // the first paragraph is the title, never trailers
	for title < len(text) && (st.comment(text[title]) || !blank(text[title])) {
		title++
	}
	trailers, others, continuations := 0, 0, 0
	recognised, onlySpaces := false, true
	for i := len(text) - 1; i >= title; i-- {
		l := text[i]
		switch {
		case st.comment(l):
			others += continuations
			continuations = 0
		case blank(l):
			if onlySpaces {
				continue
			}
			others += continuations
			if (recognised && trailers*3 >= others) || (trailers > 0 && others == 0) {
				return i + 1
			}
			return -1
		case hasAnyPrefix(l, gitGenerated):
			onlySpaces = false
			trailers++
			continuations = 0
			recognised = true
		case isTrailer(l):
			onlySpaces = false
			trailers++
			continuations = 0
		case isContinuation(l):
			onlySpaces = false
			continuations++
		default:
			onlySpaces = false
			others += 1 + continuations
			continuations = 0
		}
	}
	return -1
}

func blank(l string) bool { return strings.TrimLeft(l, " \t\r\n\v\f") == "" }

func isContinuation(l string) bool { return l != "" && strings.IndexByte(" \t\r\n\v\f", l[0]) >= 0 }

func hasAnyPrefix(l string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// isTrailer reports whether a line is "Token: value" as git reads it: the
// token letters, digits and hyphens, white space allowed before the colon.
func isTrailer(line string) bool {
	_, _, ok := cutTrailer(line)
	return ok
}

// cutTrailer splits a trailer line at its separator (git's find_separator
// with the default ":").
func cutTrailer(line string) (key, value string, ok bool) {
	space := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ':':
			if i == 0 {
				return "", "", false
			}
			return strings.TrimRight(line[:i], " \t"), line[i+1:], true
		case !space && (c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
		case i > 0 && (c == ' ' || c == '\t'):
			space = true
		default:
			return "", "", false
		}
	}
	return "", "", false
}
