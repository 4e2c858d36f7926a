// Package cliexit is how git-crucible's binaries end a command: the
// errors that choose an exit status, and their printing in git's words
// ("error: ...", "fatal: ...", "hint: ...").
package cliexit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// Exit codes, as documented in the README and --help.
const (
	ExitOK      = 0
	ExitRefused = 1 // a gate, a rule or a check said no
	ExitFatal   = gitext.ExitFatal
	ExitUsage   = gitext.ExitUsage
)

// UsageError is a bad command line (exit 129).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a usage error.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Hinted adds git-style hint lines to an error.
type Hinted struct {
	Err   error
	Hints []string
}

func (h *Hinted) Error() string { return h.Err.Error() }
func (h *Hinted) Unwrap() error { return h.Err }

// WithHints adds hint lines to err.
func WithHints(err error, hints ...string) error { return &Hinted{Err: err, Hints: hints} }

// Refused marks an error as a rule saying no (exit 1) rather than a failure.
type Refused struct{ Err error }

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// SilentExit ends the command with a code; what to say was said already.
type SilentExit struct{ Code int }

func (s *SilentExit) Error() string { return fmt.Sprintf("exit %d", s.Code) }

// Report prints err the way git does and returns the exit code.
func Report(stderr io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	var hints []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if h, ok := e.(*Hinted); ok {
			hints = append(hints, h.Hints...)
		}
	}
	var locked *gitext.LockedError
	if errors.As(err, &locked) {
		hints = append(hints, locked.Hint())
	}
	printHints := func() {
		for _, h := range hints {
			fmt.Fprintf(stderr, "hint: %s\n", h)
		}
	}
	var (
		silent *SilentExit
		usage  *UsageError
		rf     *Refused
		gerr   *gitext.Error
		exit   interface {
			error
			ExitCode() int
		}
	)
	switch {
	case errors.As(err, &silent):
		return silent.Code
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "error: %s\n", usage.Msg)
		printHints()
		return ExitUsage
	case errors.As(err, &rf):
		fmt.Fprintf(stderr, "%s\n", prefixed("error: ", rf.Error()))
		printHints()
		return ExitRefused
	case errors.As(err, &gerr):
		fmt.Fprintf(stderr, "%s\n", prefixed("fatal: ", gerr.Error()))
		printHints()
		if gerr.ExitCode > 0 && gerr.ExitCode < 126 {
			return ExitFatal
		}
		return gerr.ExitCode
	case errors.As(err, &exit):
		fmt.Fprintf(stderr, "error: %s\n", exit.Error())
		return exit.ExitCode()
	}
	fmt.Fprintf(stderr, "fatal: %s\n", err)
	printHints()
	return ExitFatal
}

// prefixed adds prefix unless git already wrote one.
func prefixed(prefix, msg string) string {
	for _, p := range []string{"fatal: ", "error: ", "PHASE GATE BLOCKED"} {
		if strings.HasPrefix(msg, p) {
			return msg
		}
	}
	return prefix + msg
}
