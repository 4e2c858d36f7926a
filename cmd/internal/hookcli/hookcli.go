// Package hookcli is git-crucible-hook's command line, which the main
// binary's 'hook run' shares: a hook's outcome printed in git's words.
package hookcli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

// Main is git-crucible-hook: `git-crucible-hook <hook> [<arg>...]`, git's
// arguments passed on as they are, git's input on stdin. args are os.Args.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return cliexit.Report(stderr, outcome.WithHints(outcome.Usagef("missing <hook> (one of %s)", strings.Join(hooks.All(), ", ")),
			"usage: git-crucible-hook <hook> [<arg>...], as the hooks that 'git crucible hooks install' writes run it"))
	}
	return cliexit.Report(stderr, Run(context.Background(), args[1], args[2:], stdin, stderr))
}

// Run runs git-crucible's part of hook name, prints what it has to say on
// stderr and returns its error for cliexit.Report.
func Run(ctx context.Context, name string, args []string, stdin io.Reader, stderr io.Writer) error {
	if !hooks.Known(name) {
		return outcome.Usagef("unknown hook '%s' (one of %s)", name, strings.Join(hooks.All(), ", "))
	}
	out, err := hooks.Run(ctx, name, args, stdin)
	for _, line := range out.Stderr {
		fmt.Fprintln(stderr, line)
	}
	return cliexit.Rule(err, "")
}
