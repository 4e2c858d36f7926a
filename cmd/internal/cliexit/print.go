package cliexit

import (
	"fmt"
	"io"
	"strings"
)

// The words git begins a line with that is not a command's result. Only
// this file spells them, so every line of a kind reads the same.
const (
	hintPrefix  = "hint: "
	warnPrefix  = "warning: "
	errorPrefix = "error: "
	fatalPrefix = "fatal: "
)

// Hint prints a "hint: " line on w: what to run next.
func Hint(w io.Writer, format string, args ...any) { say(w, hintPrefix, format, args...) }

// Warn prints a "warning: " line on w: something the command went on after.
func Warn(w io.Writer, format string, args ...any) { say(w, warnPrefix, format, args...) }

// Error prints an "error: " line on w, for a command that says why it
// fails itself (then ends with a SilentExit) or names one of many.
func Error(w io.Writer, format string, args ...any) { say(w, errorPrefix, format, args...) }

// Hints prints one "hint: " line each.
func Hints(w io.Writer, hints []string) {
	for _, h := range hints {
		Hint(w, "%s", h)
	}
}

// HintLine and WarnLine are those lines as text, without the newline, for
// a line a result keeps as well as prints (init --json's config).
func HintLine(msg string) string { return hintPrefix + msg }

// WarnLine: see HintLine.
func WarnLine(msg string) string { return warnPrefix + msg }

// ErrorLine is an "error: " line as text, without the newline, for one
// that stands in a row of a listing (hooks status).
func ErrorLine(msg string) string { return errorPrefix + msg }

// JoinErrors is several problems as one error's message: Report prints
// each on an "error: " line of its own, as git lists several.
func JoinErrors(msgs ...string) string { return strings.Join(msgs, "\n"+errorPrefix) }

func say(w io.Writer, prefix, format string, args ...any) {
	fmt.Fprintln(w, prefix+fmt.Sprintf(format, args...))
}

// fatal prints a "fatal: " line: what Report ends an unknown error with.
func fatal(w io.Writer, msg string) { fmt.Fprintln(w, fatalPrefix+msg) }
