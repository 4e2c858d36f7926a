package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/hooks"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check that the hooks run, notes follow rewritten commits, git-crucible is found, Claude Code is hooked",
		ArgsUsage: " ",
		Description: "Checks, and prints one line per check ('ok:', 'warning:' or 'error:'), each problem followed\n" +
			"by a 'hint:' with the command that fixes it:\n" +
			"   - the hooks git runs are git-crucible's (or yours calling it): not missing, not replaced\n" +
			"     (by husky, lefthook, ...), not outdated, and not hidden by a core.hooksPath elsewhere;\n" +
			"   - notes.rewriteRef includes refs/notes/crucible/* and notes.rewriteMode is cat_sort_uniq, so\n" +
			"     provenance notes follow amend, rebase and squash (not checked in a bare repository);\n" +
			"   - git-crucible is on PATH, and the hooks find it from a GUI client, whose PATH is often\n" +
			"     just " + hooks.GUIPath + ": there, or at the path they recorded when installed;\n" +
			"   - in a work tree that uses Claude Code (it has a .claude directory), that its hook entries\n" +
			"     ('git crucible hooks install --claude') are in .claude/settings.json or settings.local.json,\n" +
			"     as this version writes them, so that its Agent calls are recorded; a settings file that is\n" +
			"     not valid JSON is a warning too.\n\n" +
			"EXIT STATUS: 0 nothing is wrong; 1 a warning or an error; 128 not a git repository.",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			s, err := findHooks(c)
			if err != nil {
				return err
			}
			binary, err := os.Executable()
			if err != nil {
				return err
			}
			setup := s.Setup
			setup.PATH, setup.GUIPath, setup.Binary = os.Getenv("PATH"), hooks.GUIPath, binary
			findings, err := hooks.Doctor(setup)
			if err != nil {
				return err
			}
			problems := map[hooks.Severity]int{}
			for _, f := range findings {
				problems[f.Severity]++
			}
			ok := problems[hooks.Warning]+problems[hooks.Error] == 0
			w := c.App.Writer
			if c.Bool("json") {
				if err := writeJSON(w, map[string]any{"hooks_dir": s.Dir, "hooks_path": s.HooksPath, "ok": ok, "findings": findings}, "  "); err != nil {
					return err
				}
			} else {
				s.print(w)
				for _, f := range findings {
					fmt.Fprintf(w, "%s: %s: %s\n", f.Severity, f.Topic, f.Message)
					if f.Hint != "" {
						cliexit.Hint(w, "%s", f.Hint)
					}
				}
			}
			if ok {
				return nil
			}
			if !c.Bool("json") {
				cliexit.Error(c.App.ErrWriter, "%d problem(s): %d error(s), %d warning(s)",
					problems[hooks.Warning]+problems[hooks.Error], problems[hooks.Error], problems[hooks.Warning])
			}
			return &silentExit{Code: exitRefused}
		},
	}
}
