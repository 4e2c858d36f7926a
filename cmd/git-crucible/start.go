package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
)

func startCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "start a pipeline on the current branch and print its id",
		ArgsUsage: `"<goal>"`,
		Description: "Creates refs/crucible/pipelines/<id> with every phase NOT_STARTED and makes it the branch's\n" +
			"active pipeline, which other commands use by default. Refuses while another pipeline is active\n" +
			"on the branch; --fresh marks that one abandoned (it is kept, never deleted) and starts anew.\n" +
			"The baseline is the branch's commit, or on a branch with no commits yet the empty tree (git\n" +
			"hash-object -t tree /dev/null), so that 'git diff <baseline>' always shows the pipeline's work.",
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "mode", Value: "feature", Usage: "pipeline `MODE`: feature or refactor"},
			&cli.BoolFlag{Name: "fresh", Usage: "abandon the branch's active pipeline instead of refusing"},
			&cli.StringFlag{Name: "id", Aliases: []string{"pipeline"}, Usage: "use `ID` instead of a generated build-YYYYMMDD-HHMMSS-xxxxxx"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf(`want exactly one argument, the goal: git crucible start "<goal>"`)
			}
			opts := pipeline.StartOptions{Goal: c.Args().First(), Mode: c.String("mode"), ID: c.String("id"), Fresh: c.Bool("fresh")}
			if err := opts.Validate(); err != nil {
				return usageErrorf("%v", err)
			}
			return withRepo(c, func(s *session) error {
				st, abandoned, err := s.svc.Start(c.Context, opts)
				var active *pipeline.ActiveError
				if errors.As(err, &active) {
					return withHints(&refused{Err: err}, "continue it (commands use it by default), or abandon it and start anew with --fresh")
				}
				if err != nil {
					return err
				}
				if abandoned != "" {
					fmt.Fprintf(s.err(), "Abandoned pipeline %s (kept in refs/crucible/pipelines/%s)\n", abandoned, abandoned)
				}
				// What init sets up, start does too: notes that follow rewrites.
				configured, err := notes.Configure(c.Context, s.svc.Repo)
				if err != nil {
					return err
				}
				unguarded, err := hooks.NotOurs(c.Context, s.svc.Repo)
				if err != nil {
					return err
				}
				if s.jsonOut() {
					return s.printJSON(map[string]any{"pipeline": st.ID, "abandoned": abandoned, "state": st, "hooks_missing": unguarded})
				}
				for _, line := range notesSaid(configured) {
					fmt.Fprintln(s.err(), line)
				}
				fmt.Fprintf(s.err(), "Started pipeline on branch '%s': %s\n", st.Branch, oneLine(st.Goal))
				if len(unguarded) > 0 {
					s.hint("the gate hooks are not installed (%s): commits and pushes are not checked against the ledger", strings.Join(unguarded, ", "))
					s.hint("install them with: git crucible hooks install")
				}
				fmt.Fprintln(s.out(), st.ID)
				return nil
			})
		},
	}
}
