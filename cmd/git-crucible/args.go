package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permuteArgs moves a command's options in front of its positional
// arguments, so that `ledger skip 2 --reason x` works as git users expect
// (urfave/cli stops parsing options at the first argument). "--" ends
// options, as everywhere.
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// Descend through command names; global options before them stay put.
	var cmds []*cli.Command = app.Commands
	var leaf *cli.Command
	for len(rest) > 0 {
		tok := rest[0]
		if strings.HasPrefix(tok, "-") {
			break
		}
		next := findCommand(cmds, tok)
		if next == nil {
			break
		}
		out = append(out, tok)
		rest = rest[1:]
		leaf, cmds = next, next.Subcommands
	}
	if leaf == nil {
		return args
	}
	var flags, positional []string
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		switch {
		case tok == "--":
			positional = append(positional, rest[i:]...)
			i = len(rest)
		case len(tok) > 2 && tok[0] == '-' && tok[1] != '-' && takesValue(leaf, tok[1:2]):
			flags = append(flags, tok[:2], tok[2:]) // -n1 as -n 1, as git takes it
		case strings.HasPrefix(tok, "-") && tok != "-":
			flags = append(flags, tok)
			if !strings.Contains(tok, "=") && takesValue(leaf, strings.TrimLeft(tok, "-")) && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
		default:
			positional = append(positional, tok)
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 && positional[0] != "--" {
		out = append(out, "--")
	}
	return append(out, positional...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the command's option name expects a value.
func takesValue(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
