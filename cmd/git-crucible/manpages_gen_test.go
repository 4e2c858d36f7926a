package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/manpage"
)

// The manual: git-crucible(1), and one page per command, as
// git-crucible-ledger(1), with its subcommands and their options. The
// pages are built from the command definitions, so they say what --help
// says; docs/man holds them rendered (TestManPages keeps it current).

const (
	manSection = "1"
	manSource  = "git-crucible"
	manTitle   = "Git Crucible Manual"
)

// manPages builds every page of the manual from app's definitions.
func manPages(app *cli.App) []manpage.Page {
	pages := []manpage.Page{mainPage(app)}
	for _, c := range visibleCommands(app.Commands) {
		pages = append(pages, commandPage(c))
	}
	return pages
}

const manHelpText = "'git crucible help <command>' and 'git crucible <command> --help' show the command's manual " +
	"page when their output is a terminal and man finds the page, else the built-in help; -h always prints " +
	"the built-in help. 'git crucible --help' is git's own: it opens this page with man, and fails when man " +
	"is not installed."

func mainPage(app *cli.App) manpage.Page {
	var commands, seeAlso []manpage.Block
	var refs []string
	for _, c := range visibleCommands(app.Commands) {
		page := manPageName([]string{c.Name})
		commands = append(commands, manpage.Block{
			Tag:  []manpage.Span{manpage.B("git crucible " + c.Name)},
			Text: c.Usage + "; see " + page + "(" + manSection + ").",
		})
		refs = append(refs, page+"("+manSection+")")
	}
	seeAlso = append(seeAlso, manpage.Block{Text: strings.Join(append(refs, "git(1)"), ", ")})
	return manpage.Page{
		Name: "git-crucible", Section: manSection, Source: manSource, Manual: manTitle, Summary: app.Usage,
		Sections: []manpage.Section{
			{Title: "SYNOPSIS", Blocks: []manpage.Block{{Lines: [][]manpage.Span{
				{manpage.B("git crucible"), manpage.R(" "), manpage.I("command"), manpage.R(" ["), manpage.I("options"), manpage.R("] ["), manpage.I("arguments"), manpage.R("]")},
				{manpage.B("git crucible help"), manpage.R(" ["), manpage.I("command"), manpage.R(" ["), manpage.I("subcommand"), manpage.R("]]")},
			}}}},
			{Title: "DESCRIPTION", Blocks: []manpage.Block{{Text: appDescription}, {Text: manHelpText}}},
			{Title: "COMMANDS", Blocks: commands},
			exitStatusSection(),
			{Title: "SEE ALSO", Blocks: seeAlso},
		},
	}
}

func commandPage(c *cli.Command) manpage.Page {
	path := "git crucible " + c.Name
	subs := visibleCommands(c.Subcommands)
	var synopsis [][]manpage.Span
	if len(subs) == 0 || len(visibleFlags(c.Flags)) > 0 {
		synopsis = append(synopsis, synopsisLine(path, c))
	}
	for _, s := range subs {
		synopsis = append(synopsis, synopsisLine(path+" "+s.Name, s))
	}
	description := c.Description
	if description == "" {
		description = c.Usage
	}
	sections := []manpage.Section{
		{Title: "SYNOPSIS", Blocks: []manpage.Block{{Lines: synopsis}}},
		{Title: "DESCRIPTION", Blocks: []manpage.Block{{Text: description}}},
	}
	if flags := flagItems(c.Flags); len(flags) > 0 {
		sections = append(sections, manpage.Section{Title: "OPTIONS", Blocks: flags})
	}
	if len(subs) > 0 {
		sections = append(sections, manpage.Section{Title: "COMMANDS"})
		sections = append(sections, subcommandSections(path, subs)...)
	}
	sections = append(sections, exitStatusSection(),
		manpage.Section{Title: "SEE ALSO", Blocks: []manpage.Block{{Text: "git-crucible(" + manSection + ")"}}})
	return manpage.Page{
		Name: manPageName([]string{c.Name}), Section: manSection, Source: manSource, Manual: manTitle,
		Summary: c.Usage, Sections: sections,
	}
}

// subcommandSections documents each subcommand under parent in a
// subsection of its own: what it does, and its options.
func subcommandSections(parent string, subs []*cli.Command) []manpage.Section {
	var sections []manpage.Section
	for _, s := range subs {
		path := parent + " " + s.Name
		title := path
		if s.ArgsUsage != "" {
			title += " " + s.ArgsUsage
		}
		blocks := []manpage.Block{{Text: s.Usage}}
		if s.Description != "" {
			blocks = append(blocks, manpage.Block{Text: s.Description})
		}
		blocks = append(blocks, flagItems(s.Flags)...)
		sections = append(sections, manpage.Section{Title: title, Sub: true, Blocks: blocks})
		sections = append(sections, subcommandSections(path, visibleCommands(s.Subcommands))...)
	}
	return sections
}

func synopsisLine(path string, c *cli.Command) []manpage.Span {
	line := []manpage.Span{manpage.B(path)}
	if len(visibleFlags(c.Flags)) > 0 {
		line = append(line, manpage.R(" ["), manpage.I("options"), manpage.R("]"))
	}
	if c.ArgsUsage != "" {
		line = append(line, manpage.R(" "+c.ArgsUsage))
	}
	return line
}

func exitStatusSection() manpage.Section {
	s := manpage.Section{Title: "EXIT STATUS"}
	for _, e := range exitStatuses {
		s.Blocks = append(s.Blocks, manpage.Block{Tag: []manpage.Span{manpage.B(fmt.Sprint(e.code))}, Text: e.meaning})
	}
	return s
}

// flagItems documents flags as --help lists them: every name with its
// placeholder, the usage, and a default worth stating.
func flagItems(flags []cli.Flag) []manpage.Block {
	var items []manpage.Block
	for _, f := range visibleFlags(flags) {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		placeholder, usage := unquoteUsage(df.GetUsage())
		if placeholder == "" {
			placeholder = "value"
		}
		var tag []manpage.Span
		for i, name := range f.Names() {
			if i > 0 {
				tag = append(tag, manpage.R(", "))
			}
			dashes := "--"
			if len(name) == 1 {
				dashes = "-"
			}
			tag = append(tag, manpage.B(dashes+name))
			if df.TakesValue() {
				tag = append(tag, manpage.R(" "), manpage.I(placeholder))
			}
		}
		if def := df.GetDefaultText(); df.TakesValue() && def != "" && def != "0" {
			usage += " (default: " + def + ")"
		}
		items = append(items, manpage.Block{Tag: tag, Text: usage})
	}
	return items
}

// unquoteUsage splits a flag's usage the way urfave/cli does: the first
// `quoted` word names the value, and loses its quotes.
func unquoteUsage(usage string) (placeholder, text string) {
	start := strings.IndexByte(usage, '`')
	if start < 0 {
		return "", usage
	}
	end := strings.IndexByte(usage[start+1:], '`')
	if end < 0 {
		return "", usage
	}
	placeholder = usage[start+1 : start+1+end]
	return placeholder, usage[:start] + placeholder + usage[start+1+end+1:]
}

// visibleFlags leaves out hidden flags. (The help flag is not among a
// command's flags before the app runs.)
func visibleFlags(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		out = append(out, f)
	}
	return out
}

func visibleCommands(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c)
		}
	}
	return out
}
