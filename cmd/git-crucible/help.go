package main

import (
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/terminal"
)

// helpRequest tells whether args ask for a command's manual — `help
// [<command> [<subcommand>]]`, or `--help` after the command names — and
// names the command (canonical names, from the top). -h is left to the
// app: it always prints the built-in help.
func helpRequest(app *cli.App, args []string) (path []string, ok bool, err error) {
	if len(args) < 2 {
		return nil, false, nil
	}
	if args[1] == "help" || args[1] == "h" {
		cmds := app.Commands
		for _, name := range args[2:] {
			c := findCommand(cmds, name)
			if c == nil {
				return nil, false, withHints(usageErrorf("unknown %s subcommand %q", strings.Join(path, " "), name),
					"see: "+helpCommand(path))
			}
			path, cmds = append(path, c.Name), c.Subcommands
		}
		return path, true, nil
	}
	// The command names come first, as permuteArgs takes them.
	cmds, naming := app.Commands, true
	for _, arg := range args[1:] {
		if arg == "--" {
			break
		}
		ok = ok || arg == "--help"
		if c := findCommand(cmds, arg); naming && c != nil {
			path, cmds = append(path, c.Name), c.Subcommands
		} else {
			naming = false
		}
	}
	if !ok {
		return nil, false, nil
	}
	return path, true, nil
}

// helpCommand is the command that shows the help of the command at path,
// with or without man.
func helpCommand(path []string) string {
	return strings.TrimSpace("git crucible help " + strings.Join(path, " "))
}

// showManual shows the manual page with man, as git does for `git <cmd>
// --help`, but only where a reader sees it page by page: stdout is a
// terminal, man is installed and finds the page. It reports whether it
// did; if not, the caller prints the built-in help, which suits pipes,
// scripts and machines without man.
func showManual(page string, stdin io.Reader, stdout, stderr io.Writer) bool {
	f, ok := stdout.(*os.File)
	if !ok || !terminal.Is(f) {
		return false
	}
	man, err := exec.LookPath("man")
	if err != nil || exec.Command(man, "-w", page).Run() != nil {
		return false
	}
	cmd := exec.Command(man, page)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	return cmd.Run() == nil
}

// helpHint is the help command for the command ctx runs.
func helpHint(ctx *cli.Context) string {
	return helpCommand(strings.Fields(strings.TrimPrefix(ctx.Command.HelpName, "git crucible")))
}
