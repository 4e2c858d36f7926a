package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "set this repository up for git-crucible (safe to run again)",
		ArgsUsage: " ",
		Description: "Gives this clone a writer id (it orders events written by different clones) and records\n" +
			"the identity that signs pipeline commits (git's committer identity). Running it again keeps\n" +
			"the writer id and refreshes the identity. 'git crucible start' runs it when needed.\n\n" +
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
				notesConfig, err := configureNotes(c.Context, s.svc.Repo)
				if err != nil {
					return err
				}
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

// notesRewriteRef makes git carry our notes over amend and rebase.
const notesRewriteRef = "refs/notes/crucible/*"

// configureNotes sets, in the repository's config, what makes provenance
// notes follow rewritten commits without losing a line: notes.rewriteRef
// (added to any the user has) and, unless the user chose a mode,
// notes.rewriteMode=cat_sort_uniq. It returns what it changed or found
// wrong, for the user to read.
func configureNotes(ctx context.Context, repo *gitext.Repo) ([]string, error) {
	var said []string
	refs, _ := repo.Git(ctx, "config", "--get-all", "notes.rewriteRef")
	if !slices.Contains(strings.Fields(string(refs)), notesRewriteRef) && !slices.Contains(strings.Fields(string(refs)), "refs/notes/*") {
		if _, err := repo.Git(ctx, "config", "--add", "notes.rewriteRef", notesRewriteRef); err != nil {
			return nil, err
		}
		said = append(said, "set notes.rewriteRef = "+notesRewriteRef+" (provenance notes follow amend and rebase)")
	}
	mode, _ := repo.Git(ctx, "config", "--get", "notes.rewriteMode")
	switch m := strings.TrimSpace(string(mode)); m {
	case "":
		if _, err := repo.Git(ctx, "config", "notes.rewriteMode", "cat_sort_uniq"); err != nil {
			return nil, err
		}
		said = append(said, "set notes.rewriteMode = cat_sort_uniq (a squash keeps every note line once)")
	case "overwrite", "ignore":
		said = append(said, "warning: notes.rewriteMode is '"+m+"', which drops notes when commits are squashed",
			"hint: keep every line with: git config notes.rewriteMode cat_sort_uniq")
	}
	return said, nil
}
