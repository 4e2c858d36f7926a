package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/leftover"
)

func cleanCommand() *cli.Command {
	return &cli.Command{
		Name:      "clean",
		Usage:     "remove what a failed, escalated or killed run left: task worktrees, agent directories, backup branches",
		ArgsUsage: " ",
		Description: "A task run (git crucible run, or build --max-parallel's Phase 3) that completes removes what it\n" +
			"made: its task worktrees (.crucible/slots/slot-N, listed by git worktree list) and its backup\n" +
			"branch backup-<branch>-pre-dispatch, whose commit is then on the branch. One that does not\n" +
			"complete keeps them for going on (git crucible status lists them); clean removes them, and the\n" +
			"agent directories (.crucible/runs/<pipeline>/<dir>) that stopped dispatches left in the work tree.\n\n" +
			"What may hold work is kept, and said on stderr, unless --force: a task worktree with changes that\n" +
			"are not on the branch (a failed task's work, or an agent's unfinished work), an agent directory\n" +
			"holding an agent's report (a resume takes it), a backup branch whose commit is not on the branch\n" +
			"it backs up (as after verify-commits --fix amended it). A backup whose commit is on no other\n" +
			"branch or ref is said to be so; --force deletes it all the same, and says how to bring it back\n" +
			"until git gc prunes its commit. A backup branch is deleted by compare-and-swap from the commit\n" +
			"clean saw. A resumed task run makes its backup branch again where it began.\n\n" +
			"While an engine (build, run, replay) runs on the work tree's branch, clean is refused and names\n" +
			"it: what is left there is its work; what other engines hold (a pipeline's agent directories, the\n" +
			"backup branch of the branch they run on) is kept. --dry-run lists what would be removed and kept,\n" +
			"removing nothing. --json prints dry_run, removed and kept, each item with its kind (slot,\n" +
			"agent-dir, backup), name (a path from the work tree's top, or a branch), commit, why it is kept\n" +
			"(reason), and lost when a backup removed was the only ref to its commit.\n\n" +
			"EXIT STATUS: 0 done (what is kept is said); 1 refused: an engine runs on the branch; 128 not a git\n" +
			"repository, or git failed; 129 usage error.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would be removed and kept; remove nothing"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "remove also what may hold work: task worktrees with changes not on the branch, agents' reports, backups whose commit is not on their branch"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error { return clean(c, s) })
		},
	}
}

// cleanResult is clean --json's output.
type cleanResult struct {
	DryRun  bool            `json:"dry_run"`
	Removed []leftover.Item `json:"removed"`
	Kept    []leftover.Item `json:"kept"`
}

func clean(c *cli.Context, s *session) error {
	repo := s.svc.Repo
	found, err := leftover.Find(c.Context, repo, leftover.Options{Dirty: true, Reach: true})
	if err != nil {
		return err
	}
	holders, err := leftover.HoldersOf(repo, found)
	if err != nil {
		return err
	}
	items, err := leftover.Plan(found, holders, c.Bool("force"))
	var held *leftover.HeldError
	if errors.As(err, &held) {
		return &refused{Err: err}
	}
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	if !dry {
		items, err = leftover.Clean(c.Context, repo, items)
		if err != nil {
			return err
		}
	}
	res := cleanResult{DryRun: dry, Removed: []leftover.Item{}, Kept: []leftover.Item{}}
	for _, it := range items {
		if it.Remove {
			it.Reason = "" // why it would be kept without --force
			res.Removed = append(res.Removed, it)
		} else {
			res.Kept = append(res.Kept, it)
		}
	}
	if s.jsonOut() {
		return s.printJSON(res)
	}
	for _, it := range res.Removed {
		switch {
		case it.Kind == leftover.KindBackup && dry:
			fmt.Fprintf(s.out(), "Would delete branch %s (was %s)\n", it.Name, abbrev(it.Commit))
		case it.Kind == leftover.KindBackup:
			fmt.Fprintf(s.out(), "Deleted branch %s (was %s)\n", it.Name, abbrev(it.Commit))
		case dry:
			fmt.Fprintf(s.out(), "Would remove %s %s\n", kindName(it.Kind), it.Name)
		default:
			fmt.Fprintf(s.out(), "Removing %s %s\n", kindName(it.Kind), it.Name)
		}
	}
	forceable := false
	for _, it := range res.Kept {
		s.warn("keeping %s %s: %s", kindName(it.Kind), it.Name, it.Reason)
		forceable = forceable || it.Force
	}
	for _, it := range res.Removed {
		switch {
		case it.Lost && dry:
			s.warn("%s is the only ref to commit %s: deleted, it leaves the commit to git gc", it.Name, it.Commit)
		case it.Lost:
			s.warn("%s was the only ref to commit %s: it stays until git gc prunes it; bring it back with: git branch %s %s",
				it.Name, it.Commit, it.Name, it.Commit)
		}
	}
	if forceable {
		s.hint("git crucible clean --force removes what may hold work too")
	}
	return nil
}

// kindName is how clean's messages name an item's kind.
func kindName(kind string) string {
	switch kind {
	case leftover.KindSlot:
		return "task worktree"
	case leftover.KindAgentDir:
		return "agent directory"
	}
	return "branch"
}
