package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/dag"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "check a task DAG's manifest and show its levels",
		ArgsUsage: "[FILE|DIR|NAME]",
		Description: "Reads a dispatch manifest, the dispatch seed's dispatch.yaml or the same schema in TOML\n" +
			"(dispatch.toml): FILE itself; DIR/dispatch.yaml (or .toml); dispatch/NAME/ under the work tree's\n" +
			"top; with no argument, the run under dispatch/ whose manifest changed last. A task without\n" +
			"files in the manifest takes those its plan.md lists under \"## Files to Modify\".\n\n" +
			"The manifest is checked as a whole, each problem with its line: unknown keys, dependency cycles\n" +
			"(with their path), unknown task ids, receives outside depends-on, two tasks of one level naming\n" +
			"the same file with no edge between them, a stub fast gate (true, echo ...) and no-fast-gate\n" +
			"without a reason. --dry-run then shows the levels, the tasks ready to run and any deadlock.\n" +
			"Running the tasks (each in its own worktree, at most --max-parallel at once, a commit per task at\n" +
			"each level) is not wired to the build engine yet: without --dry-run the run is refused.\n\n" +
			"EXIT STATUS: 0 the manifest is sound; 1 it has problems, or the run was refused; 128 not a git\n" +
			"repository, or no manifest; 129 usage error.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "check the manifest and show its levels; run nothing"},
			&cli.IntFlag{Name: "max-parallel", Usage: "run at most `N` agents at once (default: the manifest's max-parallel)"},
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErrorf("want at most one argument, the manifest: a file, a run directory or a run's name")
	}
	if c.IsSet("max-parallel") && c.Int("max-parallel") < 1 {
		return usageErrorf("--max-parallel %d: want at least 1", c.Int("max-parallel"))
	}
	return withRepo(c, func(s *session) error {
		top := s.svc.Repo.WorkTree
		if top == "" {
			return &refused{Err: errors.New("run needs a work tree")}
		}
		path, err := dag.Resolve(top, c.Args().First())
		if err != nil {
			return err
		}
		if path, err = filepath.Abs(path); err != nil {
			return err
		}
		m, err := dag.Load(path)
		// Problems name the manifest as from the top of the work tree.
		name := path
		if rel, err := filepath.Rel(top, path); err == nil && filepath.IsLocal(rel) {
			name = rel
		}
		var problems dag.Errors
		var problem *dag.Error
		switch {
		case errors.As(err, &problems):
			for _, p := range problems {
				p.File = name
				fmt.Fprintf(s.err(), "error: %v\n", p)
			}
			return &silentExit{Code: exitRefused}
		case errors.As(err, &problem):
			problem.File = name
			return &refused{Err: problem}
		case err != nil:
			return err
		}
		if c.IsSet("max-parallel") {
			m.MaxParallel = c.Int("max-parallel")
		}
		if !c.Bool("dry-run") {
			return withHints(&refused{Err: errors.New("running a manifest's tasks is not wired to the build engine yet")},
				"check it and see its levels with: git crucible run --dry-run")
		}
		printLevels(s, name, m)
		return nil
	})
}

func printLevels(s *session, path string, m *dag.Manifest) {
	levels := m.Levels()
	fmt.Fprintf(s.out(), "%s: %d tasks in %d levels, at most %d agents at once\n", path, len(m.Tasks), len(levels), m.MaxParallel)
	for i, ids := range levels {
		var tasks []string
		for _, id := range ids {
			tasks = append(tasks, id+" ("+string(m.Task(id).Status)+")")
		}
		fmt.Fprintf(s.out(), "level %d: %s\n", i+1, strings.Join(tasks, " "))
	}
	if ready := m.Ready(); len(ready) > 0 {
		fmt.Fprintf(s.out(), "ready: %s\n", strings.Join(ready, " "))
	}
	if d := m.Deadlocked(); d != nil {
		fmt.Fprintf(s.out(), "%v\n", d)
	}
}
