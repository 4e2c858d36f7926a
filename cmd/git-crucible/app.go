package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

// Exit codes, as documented in the README and --help.
const (
	exitOK      = cliexit.ExitOK
	exitRefused = cliexit.ExitRefused
	exitFatal   = cliexit.ExitFatal
	exitUsage   = cliexit.ExitUsage
	// exitEscalated: build stopped on an escalation, for a person to decide.
	exitEscalated = 2
	// exitBlocked: hook claude blocked a tool call, Claude Code's answer.
	exitBlocked = 2
)

// The errors that choose an exit status, as packages return them too.
type (
	usageError = outcome.UsageError
	refused    = outcome.Refused
	silentExit = cliexit.SilentExit
)

var (
	usageErrorf = outcome.Usagef
	withHints   = outcome.WithHints
	report      = cliexit.Report
)

// exitStatuses are the exit codes and what they mean, as --help and the
// manual pages list them.
var exitStatuses = []struct {
	code    int
	meaning string
}{
	{exitOK, "success"},
	{exitRefused, "refused: a gate is blocked, a transition is illegal, or a check or verify found problems"},
	{exitEscalated, "escalated: build, replay or run stopped for a person to decide (a gate stagnated, regressed or raised an architectural concern, a RED test passed, a task's fast gate kept failing, a level's critique kept finding blocking issues, the cost cap was reached)"},
	{exitFatal, "fatal: not a git repository, no such pipeline, or git failed"},
	{exitUsage, "usage error"},
}

// helpTail ends the built-in help's description.
func helpTail() string {
	var b strings.Builder
	b.WriteString("EXIT STATUS:\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "   %-4d %s\n", s.code, s.meaning)
	}
	return b.String()
}

const appDescription = "git-crucible records a four-phase pipeline (1 design, 2 plan, 3 execute, 4 completion) as a\n" +
	"commit chain under refs/crucible/pipelines/<id>. Every change is an event checked against the\n" +
	"gate ledger's rules; the ledger is readable with plain git:\n" +
	"   git show refs/crucible/pipelines/<id>:ledger.md"

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
	app := &cli.App{
		Name:                   "git-crucible",
		HelpName:               "git crucible",
		Usage:                  "keep an agent pipeline's gates, events and verdicts in git",
		Description:            appDescription + "\n\n" + helpTail(),
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideVersion:            true,
		UseShortOptionHandling: true,
		OnUsageError:           func(c *cli.Context, err error, _ bool) error { return flagError(err) },
		CommandNotFound:        func(c *cli.Context, name string) {},
		Commands: []*cli.Command{
			initCommand(), startCommand(), buildCommand(), statusCommand(), ledgerCommand(), gateCommand(),
			listCommand(), logCommand(), showCommand(), verifyCommand(), dispatchCommand(),
			decideCommand(), metricsCommand(), handoffCommand(), hookCommand(), exportCommand(), importCommand(),
			checkpointCommand(), replayCommand(), resolveCommand(), fetchCommand(), pushCommand(), syncCommand(),
			hooksCommand(), doctorCommand(), specCommand(), trustCommand(), agentsCommand(), verifyCommitsCommand(), runCommand(),
			cleanCommand(), reportCommand(),
		},
	}
	for _, c := range app.Commands {
		setUsageErrors(c)
	}
	return app
}

func setUsageErrors(c *cli.Command) {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return flagError(err) }
	if c.Action == nil && len(c.Subcommands) > 0 {
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() == 0 {
				return withHints(usageErrorf("'%s' needs a subcommand", c.Name), "see: "+helpHint(ctx))
			}
			return withHints(usageErrorf("unknown %s subcommand %q", c.Name, ctx.Args().First()), "see: "+helpHint(ctx))
		}
	}
	for _, s := range c.Subcommands {
		setUsageErrors(s)
	}
}

// run is main without the process: arguments in, exit code out.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, handled := hotPath(args, stdout, stderr); handled {
		return code
	}
	if len(args) == 2 && (args[1] == "--version" || args[1] == "version") {
		fmt.Fprintf(stdout, "git crucible version %s\n", version())
		return exitOK
	}
	app := newApp(stdin, stdout, stderr)
	if name := unknownCommand(app, args); name != "" {
		cliexit.Error(stderr, "'%s' is not a git crucible command. See 'git crucible help'.", name)
		var names []string
		for _, c := range app.Commands {
			if !c.Hidden {
				names = append(names, c.Name)
			}
		}
		if similar := similarCommands(name, names); len(similar) > 0 {
			// git's words for it
			fmt.Fprintf(stderr, "\nThe most similar command%s\n", map[bool]string{true: " is", false: "s are"}[len(similar) == 1])
			for _, c := range similar {
				fmt.Fprintf(stderr, "\t%s\n", c)
			}
		}
		return exitUsage
	}
	path, wantsHelp, err := helpRequest(app, args)
	if err != nil {
		return report(stderr, err)
	}
	if wantsHelp {
		if showManual(manPageName(path), stdin, stdout, stderr) {
			return exitOK
		}
		// `help ledger begin` prints what `ledger begin --help` does.
		args = append(append([]string{args[0]}, path...), "--help")
	}
	return report(stderr, app.RunContext(context.Background(), permuteArgs(app, args)))
}

// unknownCommand returns the command name in args (also after "help") that
// the app does not have, or "".
func unknownCommand(app *cli.App, args []string) string {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return ""
	}
	name := args[1]
	if (name == "help" || name == "h") && len(args) > 2 {
		name = args[2]
	}
	if name == "help" || name == "h" || app.Command(name) != nil {
		return ""
	}
	return name
}

// flagError rewords the flag package's complaints the way git says them.
func flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if len(name) > 1 {
			name = "-" + name
		}
		msg = fmt.Sprintf("unknown option '-%s'", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		name = strings.TrimPrefix(name, "-")
		if len(name) > 1 {
			name = "-" + name
		}
		msg = fmt.Sprintf("option '-%s' requires a value", name)
	}
	return &usageError{Msg: msg}
}
