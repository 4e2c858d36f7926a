// Package cliexit is how git-crucible's binaries end a command: errors
// (outcome's kinds, gitext's, ledger refusals) printed in git's words
// ("error: ...", "fatal: ...", "hint: ...") with the exit status they choose.
package cliexit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Exit codes, as documented in the README and --help.
const (
	ExitOK      = 0
	ExitRefused = 1 // a gate, a rule or a check said no
	ExitFatal   = gitext.ExitFatal
	ExitUsage   = gitext.ExitUsage
)

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
		if h, ok := e.(*outcome.Hinted); ok {
			hints = append(hints, h.Hints...)
		}
	}
	var hinter interface {
		error
		Hint() string
	}
	if errors.As(err, &hinter) {
		hints = append(hints, hinter.Hint())
	}
	if errors.Is(err, gitext.ErrMissing) {
		hints = append(hints, "an object is gone from the repository (a git gc --prune=now while it was being written?);",
			"a chain's reflog holds its earlier tips: git reflog show refs/crucible/pipelines/<id>, then git update-ref to a whole one")
	}
	printHints := func() { Hints(stderr, hints) }
	var (
		silent *SilentExit
		usage  *outcome.UsageError
		rf     *outcome.Refused
		held   *pipeline.HeldError
		moved  *pipeline.ForeignChangeError
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
		Error(stderr, "%s", usage.Msg)
		printHints()
		return ExitUsage
	case errors.As(err, &rf):
		fmt.Fprintln(stderr, prefixed(errorPrefix, rf.Error()))
		printHints()
		return ExitRefused
	case errors.As(err, &held), errors.As(err, &moved):
		Error(stderr, "%s", err)
		printHints()
		return ExitRefused
	case errors.As(err, &gerr):
		// git's words first, then what it was doing for us, as git
		// itself reports an error below a fatal one.
		words, full := gerr.Error(), err.Error()
		context := strings.TrimRight(strings.TrimSuffix(full, words), ": \n")
		switch {
		case context == "":
			fmt.Fprintln(stderr, prefixed(fatalPrefix, words))
		case strings.HasSuffix(full, words):
			fmt.Fprintln(stderr, prefixed(errorPrefix, words))
			fatal(stderr, context)
		default: // git's words are inside the context
			fatal(stderr, full)
		}
		printHints()
		if gerr.ExitCode < 126 || gerr.ExitCode > 255 { // a signalled git gives -1
			return ExitFatal
		}
		return gerr.ExitCode
	case errors.As(err, &exit):
		Error(stderr, "%s", exit.Error())
		printHints()
		return exit.ExitCode()
	}
	fatal(stderr, err.Error())
	printHints()
	return ExitFatal
}

// prefixed adds prefix unless git already wrote one.
func prefixed(prefix, msg string) string {
	for _, p := range []string{fatalPrefix, errorPrefix, "PHASE GATE BLOCKED"} {
		if strings.HasPrefix(msg, p) {
			return msg
		}
	}
	return prefix + msg
}
