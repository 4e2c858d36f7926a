package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/gitext"
)

// Exit codes, as documented in the README and --help.
const (
	exitOK      = 0
	exitRefused = 1 // a gate, a rule or a check said no
	exitFatal   = gitext.ExitFatal
	exitUsage   = gitext.ExitUsage
)

const helpTail = `EXIT STATUS:
   0    success
   1    refused: a gate is blocked, a transition is illegal, or a check or verify found problems
   128  fatal: not a git repository, no such pipeline, or git failed
   129  usage error
`

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
	app := &cli.App{
		Name:     "git-crucible",
		HelpName: "git crucible",
		Usage:    "keep an agent pipeline's gates, events and verdicts in git",
		Description: "git-crucible records a four-phase pipeline (1 design, 2 plan, 3 execute, 4 completion) as a\n" +
			"commit chain under refs/crucible/pipelines/<id>. Every change is an event checked against the\n" +
			"gate ledger's rules; the ledger is readable with plain git:\n" +
			"   git show refs/crucible/pipelines/<id>:ledger.md\n\n" + helpTail,
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideVersion:            true,
		UseShortOptionHandling: true,
		OnUsageError:           func(c *cli.Context, err error, _ bool) error { return flagError(err) },
		CommandNotFound:        func(c *cli.Context, name string) {},
		Commands: []*cli.Command{
			initCommand(), startCommand(), statusCommand(), ledgerCommand(), gateCommand(),
			listCommand(), logCommand(), showCommand(), verifyCommand(), dispatchCommand(),
			decideCommand(), metricsCommand(), handoffCommand(), hookCommand(), exportCommand(), importCommand(),
			checkpointCommand(), resolveCommand(), fetchCommand(), pushCommand(), syncCommand(),
			hooksCommand(), doctorCommand(),
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
				return withHints(usageErrorf("'%s' needs a subcommand", c.Name), "see: "+ctx.Command.HelpName+" --help")
			}
			return withHints(usageErrorf("unknown %s subcommand %q", c.Name, ctx.Args().First()), "see: "+ctx.Command.HelpName+" --help")
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
	app := newApp(stdin, stdout, stderr)
	if name := unknownCommand(app, args); name != "" {
		fmt.Fprintf(stderr, "error: '%s' is not a git crucible command. See 'git crucible --help'.\n", name)
		return exitUsage
	}
	err := app.RunContext(context.Background(), permuteArgs(app, args))
	return report(stderr, err)
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

// usageError is a bad command line (exit 129).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usageError rewords the flag package's complaints the way git says them.
func flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if len(name) > 1 {
			name = "-" + name
		}
		msg = fmt.Sprintf("unknown option '-%s'", name)
	}
	return &usageError{msg: msg}
}

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// hinted adds git-style hint lines to an error.
type hinted struct {
	err   error
	hints []string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

func withHints(err error, hints ...string) error { return &hinted{err: err, hints: hints} }

// refused marks an error as a rule saying no (exit 1) rather than a failure.
type refused struct{ err error }

func (r *refused) Error() string { return r.err.Error() }
func (r *refused) Unwrap() error { return r.err }

// silentExit ends the command with a code; what to say was said already.
type silentExit struct{ code int }

func (s *silentExit) Error() string { return fmt.Sprintf("exit %d", s.code) }

// report prints err the way git does and returns the exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var hints []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if h, ok := e.(*hinted); ok {
			hints = append(hints, h.hints...)
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
		silent *silentExit
		usage  *usageError
		rf     *refused
		gerr   *gitext.Error
		exit   cli.ExitCoder
	)
	switch {
	case errors.As(err, &silent):
		return silent.code
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "error: %s\n", usage.msg)
		printHints()
		return exitUsage
	case errors.As(err, &rf):
		fmt.Fprintf(stderr, "%s\n", prefixed("error: ", rf.Error()))
		printHints()
		return exitRefused
	case errors.As(err, &gerr):
		fmt.Fprintf(stderr, "%s\n", prefixed("fatal: ", gerr.Error()))
		printHints()
		if gerr.ExitCode > 0 && gerr.ExitCode < 126 {
			return exitFatal
		}
		return gerr.ExitCode
	case errors.As(err, &exit):
		fmt.Fprintf(stderr, "error: %s\n", exit.Error())
		return exit.ExitCode()
	}
	fmt.Fprintf(stderr, "fatal: %s\n", err)
	printHints()
	return exitFatal
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
