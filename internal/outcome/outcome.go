// Package outcome is how packages say what kind of "no" an error is, so
// that the binaries word it and choose the exit status as git does: a
// rule's refusal (1), a bad command line (129), or a failure (128) with
// hints on how to go on.
package outcome

import "fmt"

// Refused marks an error as a rule saying no (exit 1) rather than a failure.
type Refused struct{ Err error }

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// Hinted adds git-style hint lines to an error.
type Hinted struct {
	Err   error
	Hints []string
}

func (h *Hinted) Error() string { return h.Err.Error() }
func (h *Hinted) Unwrap() error { return h.Err }

// WithHints adds hint lines to err.
func WithHints(err error, hints ...string) error { return &Hinted{Err: err, Hints: hints} }

// UsageError is a bad command line (exit 129).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a usage error.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}
