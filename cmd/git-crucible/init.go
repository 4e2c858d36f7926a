package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/pipeline"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "set this repository up for git-crucible (safe to run again)",
		ArgsUsage: " ",
		Description: "Gives this clone a writer id (it orders events written by different clones) and records\n" +
			"the identity that signs pipeline commits (git's committer identity). Running it again keeps\n" +
			"the writer id and refreshes the identity. 'git crucible start' runs it when needed.",
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
				if s.jsonOut() {
					return s.printJSON(map[string]any{"git_dir": s.svc.Repo.CommonDir, "created": created, "writer": w})
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
