package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "set this repository up for git-crucible (safe to run again)",
		ArgsUsage: " ",
		Description: "Gives this clone a writer id (it orders events written by different clones) and records\n" +
			"the identity that signs pipeline commits (git's committer identity). Running it again keeps\n" +
			"the writer id and refreshes the identity. 'git crucible start' does all of it too.\n\n" +
			"It also sets, in this repository's config, what makes provenance notes follow amended and\n" +
			"rebased commits: notes.rewriteRef=refs/notes/crucible/* (added to any you have) and, unless\n" +
			"you chose one, notes.rewriteMode=cat_sort_uniq. It changes nothing about remotes: push and\n" +
			"fetch pipeline history with 'git crucible sync'. Install the gate hooks with\n" +
			"'git crucible hooks install'.",
		Flags: commonFlags(),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error {
				w, created, err := pipeline.Init(c.Context, s.svc.Repo)
				if err != nil {
					return err
				}
				configured, err := notes.Configure(c.Context, s.svc.Repo)
				if err != nil {
					return err
				}
				notesConfig := notesSaid(configured)
				if s.jsonOut() {
					return s.printJSON(map[string]any{"git_dir": s.svc.Repo.CommonDir, "created": created, "writer": w, "config": notesConfig})
				}
				for _, line := range notesConfig {
					fmt.Fprintln(s.err(), line)
				}
				verb := "Reinitialized"
				if created {
					verb = "Initialized"
				}
				fmt.Fprintf(s.out(), "%s git-crucible in %s (writer %s, %s <%s>)\n", verb, s.svc.Repo.CommonDir, w.ID, w.Name, w.Email)
				return nil
			})
		},
	}
}

// notesSaid words what notes.Configure did, and a mode that loses lines.
func notesSaid(c notes.Configured) []string {
	var said []string
	if c.AddedRef {
		said = append(said, "set notes.rewriteRef = "+notes.RewriteRef+" (provenance notes follow amend and rebase)")
	}
	switch {
	case c.SetMode:
		said = append(said, "set notes.rewriteMode = "+notes.RewriteMode+" (a squash keeps every note line once)")
	case c.Mode == "overwrite" || c.Mode == "ignore":
		said = append(said, cliexit.WarnLine("notes.rewriteMode is '"+c.Mode+"', which drops notes when commits are squashed"),
			cliexit.HintLine("keep every line with: git config notes.rewriteMode "+notes.RewriteMode))
	}
	return said
}
