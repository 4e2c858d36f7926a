// Package fastgate is a fast gate's command: what is known of it before
// it runs (whether it can fail at all), and the one way every engine runs
// it (Command, Run: sh -c in its own process group, without the variables
// that would pin git to another repository). Pure: it runs no git itself,
// so the task DAG's manifest check (package dag) can use it without
// linking git.
package fastgate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
)

// stubPart matches one command of a pipeline that checks nothing.
var stubPart = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^(|true|:|/bin/true|/usr/bin/true|exit|exit 0|(echo|printf)(\s.*)?)$`)
}}

// shellWrap matches `sh -c '...'` and its kin, whose script is checked too.
var shellWrap = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:/bin/|/usr/bin/)?(?:sh|bash|dash|zsh)\s+-c\s+(?:'([^']*)'|"([^"]*)")$`)
}}

// CheckStub refuses a gate that cannot fail where it must: the seed's
// contract is that a fast gate fails when a commit uses what only a later
// commit adds. Empty commands, true, :, echo and printf, and lists or
// shell wrappers of nothing else are stubs. It is a best-effort match on
// the text: a contrived bypass is the caller's problem.
func CheckStub(command string) error {
	if isStub(command, 0) {
		return fmt.Errorf("%q is a stub, not a gate: a fast gate must fail when a commit uses what only a later commit adds", strings.TrimSpace(command))
	}
	return nil
}

// separators split a command list into its commands.
var separators = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`&&|\|\||[;|\n&]`) }}

func isStub(command string, depth int) bool {
	if m := shellWrap.Get().FindStringSubmatch(strings.TrimSpace(command)); m != nil {
		return depth < 3 && isStub(m[1]+m[2], depth+1)
	}
	for _, part := range separators.Get().Split(command, -1) {
		part = strings.Join(strings.Fields(part), " ")
		part = strings.TrimSuffix(strings.TrimPrefix(part, "("), ")")
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(part, "{"), "}"))
		if !stubPart.Get().MatchString(part) {
			return false
		}
	}
	return true
}
