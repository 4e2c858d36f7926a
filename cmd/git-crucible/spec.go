package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
)

func specCommand() *cli.Command {
	return &cli.Command{
		Name:      "spec",
		Usage:     "print and check the pipeline spec that build would run",
		ArgsUsage: " ",
		Description: "Prints the pipeline spec build would run, one step a line (id, kind, then roles with\n" +
			"their templates in parentheses): --spec FILE, else the work tree's " + pipespec.OverridePath + ",\n" +
			"else the built-in default, whose TOML --default prints to start an override from. Every\n" +
			"template a step names must be a built-in one or a file in " + prompt.OverrideDir + "/.\n\n" +
			"EXIT STATUS: 0 the spec is valid; 1 it is not (each problem is printed with its file and\n" +
			"line); 128 not a git repository, or a file cannot be read or is refused.",
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "spec", Usage: "check `FILE` instead of the work tree's spec"},
			&cli.BoolFlag{Name: "default", Usage: "print the built-in default spec's TOML"},
		},
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			if c.Bool("default") {
				if c.String("spec") != "" || c.Bool("json") {
					return usageErrorf("--default takes neither --spec nor --json")
				}
				_, err := c.App.Writer.Write(pipespec.DefaultTOML())
				return err
			}
			repo, err := gitext.Discover(c.Context)
			if err != nil {
				return err
			}
			sp, err := effectiveSpec(repo.WorkTree, c.String("spec"), nil)
			var invalid *pipespec.Error
			if errors.As(err, &invalid) {
				// One error line per problem, each FILE:LINE: ...
				return &refused{Err: errors.New(cliexit.JoinErrors(strings.Split(invalid.Error(), "\n")...))}
			} else if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, sp, "  ")
			}
			printSpec(c.App.Writer, sp)
			return nil
		},
	}
}

// effectiveSpec is the spec build would run in workTree: file, else the
// work tree's override (read once: accept, unless nil, judges what was
// read), else the default; with the work tree's templates.
func effectiveSpec(workTree, file string, accept func(content []byte) error) (*pipespec.Spec, error) {
	set, err := prompt.Load(workTree)
	if err != nil {
		return nil, err
	}
	if file != "" {
		// The user's own file: a symbolic link to it is theirs too.
		path, err := filepath.EvalSymlinks(file)
		if err != nil {
			return nil, err
		}
		data, err := readFlagFile("--spec "+file, path, pipespec.MaxBytes)
		if err != nil {
			return nil, err
		}
		return pipespec.Parse(data, path, set)
	}
	return pipespec.ForWorkTree(workTree, set, accept)
}

func printSpec(w io.Writer, sp *pipespec.Spec) {
	fmt.Fprintf(w, "spec: %s\n", sp.Source)
	for _, p := range sp.Phases {
		fmt.Fprintf(w, "phase %d: %s\n", p.Number, p.Name)
		for _, s := range p.Steps {
			printStep(w, "  ", &s)
			for _, sub := range s.Steps {
				printStep(w, "    ", &sub)
			}
		}
	}
}

func printStep(w io.Writer, indent string, s *pipespec.Step) {
	var what []string
	switch s.Kind {
	case pipespec.Dispatch:
		what = append(what, fmt.Sprintf("%s (%s)", s.Role, s.Template))
	case pipespec.Gate, pipespec.ReviewLoop:
		what = append(what, fmt.Sprintf("%s by %s (%s), fixed by %s (%s), at most %d rounds",
			s.Artifact, s.Role, s.Template, s.Fixer, s.FixTemplate, s.MaxRounds))
	case pipespec.Run:
		what = append(what, fmt.Sprintf("%s, expect %s", s.Command, s.Expect))
	case pipespec.Checkpoint:
		what = append(what, s.Name)
	case pipespec.Approve:
		what = append(what, "wait for build --yes or git crucible approve")
	case pipespec.Tasks:
		what = append(what, "each task of "+s.From+":")
	}
	if len(s.Inputs) > 0 {
		what = append(what, "in: "+strings.Join(s.Inputs, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(s.Outputs)) {
		what = append(what, fmt.Sprintf("out: %s=%s", name, s.Outputs[name]))
	}
	if len(s.Exports) > 0 {
		what = append(what, "exports: "+strings.Join(s.Exports, ", "))
	}
	if s.SkipIfExists {
		what = append(what, "skipped if its outputs exist")
	}
	fmt.Fprintf(w, "%s%-18s %-12s %s\n", indent, s.ID, s.Kind, strings.Join(what, "; "))
}
