package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/hookcli"
	"github.com/git-crucible/git-crucible/hooks"
)

// hookRunCommand is the entry point of the git hooks that 'hooks install'
// writes; it is listed under 'hook', not among the commands people run.
func hookRunCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "git-crucible's part of a git hook: what the installed hooks run",
		ArgsUsage: "<hook> [-- <arg>...]",
		Description: "The hooks that 'git crucible hooks install' writes run 'git-crucible-hook <hook> \"$@\"' with\n" +
			"git's arguments and standard input, and fail when it fails; this is the same, for hooks of older\n" +
			"versions and hooks of your own. Not meant to be run by hand.\n\n" +
			"pre-commit refuses while the active pipeline's current phase may not go on. commit-msg adds\n" +
			"Crucible-Pipeline/Crucible-Phase trailers (Crucible-Task/Crucible-Seq from CRUCIBLE_TASK and\n" +
			"CRUCIBLE_SEQ). post-commit writes a provenance note on refs/notes/crucible/provenance (role from\n" +
			"CRUCIBLE_ROLE). post-rewrite carries notes over amend and rebase. pre-push and pre-receive audit\n" +
			"the pushed commits; config: crucible.pushPolicy (gated, verified, complete, off),\n" +
			"crucible.protectedBranches (default main,master), crucible.pushHistory (true: sync the pipelines\n" +
			"along). verified is gated, and pre-push also refuses a pushed commit whose tree the local gate\n" +
			"cache does not know as passing (the newest result of git crucible verify-commits; nothing runs).\n" +
			"Hooks: " + strings.Join(hooks.All(), ", ") + ".",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 {
				return usageErrorf("missing <hook> (one of %s)", strings.Join(hooks.All(), ", "))
			}
			rest := args[1:]
			if len(rest) > 0 && rest[0] == "--" {
				rest = rest[1:]
			}
			return hookcli.Run(c.Context, args[0], rest, c.App.Reader, c.App.ErrWriter)
		},
	}
}
