package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/notes"
)

func hooksCommand() *cli.Command {
	hookArgs := "[<hook>...]"
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or show the git hooks that enforce the gates, and Claude Code's hook entries",
		Description: "The hooks are pre-commit, commit-msg, post-commit, post-rewrite and pre-push (pre-receive in a\n" +
			"bare repository; it can be named anywhere). Each is a small sh script, marked as git-crucible's by\n" +
			"its second line, that runs 'git-crucible-hook <hook>': found on PATH, else beside the\n" +
			"git-crucible that installed it, so GUI clients with a short PATH work too. When neither\n" +
			"exists the hook fails, and says how to install git-crucible or remove the hook. Hooks written\n" +
			"by an older version (running 'git-crucible hook run') still work; install rewrites them.\n\n" +
			"They go where git runs hooks from ('git rev-parse --git-path hooks'): the repository's hooks\n" +
			"directory, shared by its linked worktrees, or core.hooksPath when that is set — which install\n" +
			"refuses unless --hooks-path, since that directory may belong to another tool or serve every\n" +
			"repository.\n\n" +
			"With --claude or --claude-local, install and uninstall work on Claude Code's hook entries in the\n" +
			"work tree's .claude/settings.json or .claude/settings.local.json instead of git's hooks.\n\n" +
			"EXIT STATUS: 0 done; 1 refused (a hook that is not ours, core.hooksPath, a file in the way, a\n" +
			"Claude Code settings file that is not valid JSON); 128 not a git repository, or --claude without\n" +
			"a work tree; 129 usage error (an unknown hook, contradictory options).",
		Subcommands: []*cli.Command{
			{
				Name:      "install",
				Usage:     "install git-crucible's hooks (again: rewrites only what changed)",
				ArgsUsage: hookArgs,
				Description: "A hook that is not git-crucible's is never overwritten: install refuses, changing\n" +
					"nothing, and shows its first lines. Then choose:\n" +
					"   --chain   move it to <hook>.crucible-chained; ours runs it first with the same arguments\n" +
					"             and input, and fails as it does when it fails\n" +
					"   --force   move it to <hook>.crucible-backup (never over an existing backup) and replace it\n" +
					"   --manual  change nothing; print the line to add to it\n" +
					"A hook of yours that already runs git-crucible-hook (or 'git-crucible hook run') is kept as it\n" +
					"is. 'hooks uninstall' puts back what --chain and --force moved aside.\n\n" +
					"--claude installs Claude Code's hook entries instead, in the work tree's .claude/settings.json\n" +
					"(shared with the project), or with --claude-local in .claude/settings.local.json (yours alone):\n" +
					"entries that run '" + hooks.ClaudeCommand + "' for PreToolUse (matcher '" + hooks.ClaudePreToolMatcher + "'),\n" +
					"PostToolUse and PostToolUseFailure (matcher '" + hooks.ClaudeToolMatcher + "'), SubagentStop, Stop and SessionEnd,\n" +
					"so that every Agent call of a session started at the work tree's top is recorded, and every\n" +
					"write of build-gate-ledger.md guarded (see 'git crucible hook claude'). They go\n" +
					"after the event's other entries, or in place of an older entry of ours; nothing else in the\n" +
					"file changes but its indentation (two spaces), and a file with all of them is not written. An\n" +
					"entry of yours that runs the hook already is kept, and none of ours is added beside it. A file\n" +
					"that is not valid JSON, not shaped as Claude Code's settings, or a symbolic link is refused\n" +
					"and left as it is.",
				Flags: []cli.Flag{jsonFlag,
					&cli.BoolFlag{Name: "chain", Usage: "keep a foreign hook and run it first"},
					&cli.BoolFlag{Name: "force", Usage: "replace a foreign hook, keeping a backup"},
					&cli.BoolFlag{Name: "manual", Usage: "change nothing; print the line to add to your own hooks"},
					&cli.BoolFlag{Name: "hooks-path", Usage: "install into core.hooksPath's directory when it is set"},
					claudeFlag, claudeLocalFlag,
				},
				Action: hooksInstall,
			},
			{
				Name:      "uninstall",
				Usage:     "remove git-crucible's hooks and put back what they had moved aside",
				ArgsUsage: hookArgs,
				Description: "Removes only hook files that carry git-crucible's marker. Where install moved a hook\n" +
					"aside, it is put back: the chained one, else the backup.\n\n" +
					"With --claude (--claude-local), removes git-crucible's entries from .claude/settings.json\n" +
					"(.claude/settings.local.json) instead, whatever event they hook, and the event arrays and the\n" +
					"'hooks' object that this leaves empty; your own entries stay, even those that run\n" +
					"'" + hooks.ClaudeCommand + "'.",
				Flags:  []cli.Flag{jsonFlag, claudeFlag, claudeLocalFlag},
				Action: hooksUninstall,
			},
			{
				Name:      "status",
				Usage:     "show each hook: ours, ours-chained, foreign, missing or outdated",
				ArgsUsage: " ",
				Description: "Shows the directory git runs hooks from (and the core.hooksPath that chose it), then each\n" +
					"hook: ours; ours-chained (ours, running a foreign hook first); foreign; missing; outdated\n" +
					"(ours, but not what this version writes, or not executable: 'hooks install' rewrites it).\n" +
					"In a work tree, then Claude Code's settings files, .claude/settings.json and\n" +
					".claude/settings.local.json: installed (every entry 'hooks install --claude' writes is there,\n" +
					"or one of yours runs the hook), missing, or outdated (some missing, or not as this version\n" +
					"writes them: 'hooks install --claude' completes them).",
				Flags:  []cli.Flag{jsonFlag},
				Action: hooksStatus,
			},
			{
				Name:      "flush",
				Usage:     "write the provenance notes the post-commit hook queued",
				ArgsUsage: " ",
				Description: "Inside a pipeline the post-commit hook does not start git-crucible-hook: it queues the\n" +
					"commit's provenance note (the line commit-msg left for the commit it checked) in\n" +
					"crucible/notes-queue/ under the git dir. They are written to " + notes.ProvenanceRef + "\n" +
					"by the next git-crucible command that opens the repository, the pre-push and post-rewrite\n" +
					"hooks, and every 32nd commit; flush writes them now, for plain git (git log --notes) to see.\n" +
					"A queued note is written only on the commit it was checked for.\n\n" +
					"EXIT STATUS: 0 done; 1 the notes could not be written; 128 not a git repository.",
				Flags:  []cli.Flag{jsonFlag},
				Action: hooksFlush,
			},
		},
	}
}

var (
	claudeFlag      = &cli.BoolFlag{Name: "claude", Usage: "Claude Code's hook entries in the work tree's .claude/settings.json, instead of git's hooks"}
	claudeLocalFlag = &cli.BoolFlag{Name: "claude-local", Usage: "Claude Code's hook entries in .claude/settings.local.json (yours alone), instead of git's hooks"}
)

// hookSite is where git runs a repository's hooks from, and the hooks a
// command works on.
type hookSite struct {
	hooks.Setup
	names []string // named on the command line, or the defaults
}

func findHooks(c *cli.Context) (*hookSite, error) {
	names, err := hookNames(c) // a bad command line before a missing repository, as git does
	if err != nil {
		return nil, err
	}
	repo, err := gitext.Discover(c.Context)
	if err != nil {
		return nil, err
	}
	if names == nil {
		names = hooks.Defaults(repo.Bare)
	}
	setup, err := hooks.Locate(c.Context, repo)
	if err != nil {
		return nil, err
	}
	return &hookSite{Setup: setup, names: names}, nil
}

// hookNames is the hooks named on the command line, each once.
func hookNames(c *cli.Context) ([]string, error) {
	var names []string
	for _, n := range c.Args().Slice() {
		if !hooks.Known(n) {
			return nil, withHints(usageErrorf("unknown hook '%s'", n),
				"git-crucible's hooks: "+strings.Join(hooks.All(), ", "))
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

// print starts the text output of the hook commands.
func (s *hookSite) print(w io.Writer) {
	fmt.Fprintf(w, "hooks directory: %s", s.Dir)
	if hp := s.HooksPath; hp != nil {
		fmt.Fprintf(w, " (core.hooksPath, %s config, %s)", hp.Scope, hp.Origin)
	}
	fmt.Fprintln(w)
}

// printJSON prints the hook commands' JSON: the site and one object per hook.
func (s *hookSite) printJSON(w io.Writer, hooks any) error {
	return writeJSON(w, map[string]any{"hooks_dir": s.Dir, "hooks_path": s.HooksPath, "hooks": hooks}, "  ")
}

// claudeFiles are the settings files --claude and --claude-local name, in
// the work tree; nil when neither is given.
func claudeFiles(c *cli.Context, s *hookSite) ([]string, error) {
	var files []string
	for _, f := range []struct {
		flag, file string
	}{{"claude", hooks.ClaudeProjectSettings}, {"claude-local", hooks.ClaudeLocalSettings}} {
		if c.Bool(f.flag) {
			files = append(files, f.file)
		}
	}
	if files != nil && s.WorkTree == "" {
		return nil, errors.New("this operation must be run in a work tree: Claude Code's settings are in its .claude directory")
	}
	for i, f := range files {
		files[i] = filepath.Join(s.WorkTree, f)
	}
	return files, nil
}

// claudeRefusal explains a settings file left as it is.
func claudeRefusal(err error) error {
	var se *hooks.ClaudeSettingsError
	switch {
	case errors.As(err, &se) && se.NotFile:
		return withHints(&refused{Err: fmt.Errorf("%v; nothing was changed", err)},
			"put a regular file there (a copy of what the link points to), then run the command again")
	case errors.As(err, &se):
		return withHints(&refused{Err: fmt.Errorf("%v; nothing was changed", err)},
			"fix it (Claude Code reads it as JSON too), then run the command again")
	}
	return err
}

// claudeCommand installs or uninstalls the Claude Code entries of files.
func claudeCommand(c *cli.Context, files []string, do func(string) (hooks.ClaudeResult, error)) error {
	var results []hooks.ClaudeResult
	for _, f := range files {
		r, err := do(f)
		if err != nil {
			return claudeRefusal(err)
		}
		results = append(results, r)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"claude": results}, "  ")
	}
	for _, r := range results {
		var what string
		switch r.Action {
		case hooks.Installed:
			what = "installed: " + strings.Join(claudeEventNames(r.Events), ", ") + " run '" + hooks.ClaudeCommand + "'"
		case hooks.Upgraded:
			what = "upgraded: " + strings.Join(r.Changed, ", ")
		case hooks.Unchanged:
			what = "unchanged: its entries run '" + hooks.ClaudeCommand + "' already"
		case hooks.Removed:
			what = "removed: " + strings.Join(r.Changed, ", ")
		case hooks.Absent:
			what = "not installed"
		}
		fmt.Fprintf(c.App.Writer, "%s: %s\n", r.Path, what)
	}
	return nil
}

func claudeEventNames(events []hooks.ClaudeEvent) []string {
	var names []string
	for _, e := range events {
		names = append(names, e.Event)
	}
	return names
}

// claudeStatus is a settings file's line of hooks status: its state, or
// why it cannot be read.
type claudeStatus struct {
	hooks.ClaudeSettings
	Error string `json:"error,omitempty"`
}

func claudeStatuses(s *hookSite) []claudeStatus {
	if s.WorkTree == "" || s.Bare {
		return nil
	}
	var out []claudeStatus
	for _, f := range []string{hooks.ClaudeProjectSettings, hooks.ClaudeLocalSettings} {
		path := filepath.Join(s.WorkTree, f)
		st, err := hooks.InspectClaude(path)
		if err != nil {
			st = hooks.ClaudeSettings{Path: path}
			out = append(out, claudeStatus{st, err.Error()})
			continue
		}
		out = append(out, claudeStatus{ClaudeSettings: st})
	}
	return out
}

func hooksInstall(c *cli.Context) error {
	if c.Bool("claude") || c.Bool("claude-local") {
		for _, f := range []string{"chain", "force", "manual", "hooks-path"} {
			if c.Bool(f) {
				return usageErrorf("--%s is for git's hooks, not with --claude or --claude-local", f)
			}
		}
		if c.NArg() > 0 {
			return usageErrorf("--claude and --claude-local take no hook names")
		}
		s, err := findHooks(c)
		if err != nil {
			return err
		}
		files, err := claudeFiles(c, s)
		if err != nil {
			return err
		}
		return claudeCommand(c, files, hooks.InstallClaude)
	}
	mode := hooks.Refuse
	switch {
	case c.Bool("chain") && c.Bool("force"), c.Bool("manual") && (c.Bool("chain") || c.Bool("force")):
		return usageErrorf("--chain, --force and --manual cannot be used together")
	case c.Bool("chain"):
		mode = hooks.Chain
	case c.Bool("force"):
		mode = hooks.Force
	}
	s, err := findHooks(c)
	if err != nil {
		return err
	}
	if c.Bool("manual") {
		return printManual(c, s)
	}
	if s.HooksPath != nil && !c.Bool("hooks-path") {
		return hooksPathRefusal(s.HooksPath, s.Dir)
	}
	binary, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this git-crucible's own path, to run when none is on PATH: %w", err)
	}
	results, err := hooks.Install(s.Dir, s.names, hooks.Beside(binary), mode)
	if err != nil {
		return installRefusal(c, err)
	}
	if hooks.Find(filepath.Dir(binary), hooks.HookBinary) == "" && hooks.Find(os.Getenv("PATH"), hooks.HookBinary) == "" {
		cliexit.Warn(c.App.ErrWriter, "%s is neither beside this git-crucible nor on PATH: the hooks will refuse every commit", hooks.HookBinary)
		cliexit.Hint(c.App.ErrWriter, "install both with ./install.sh in git-crucible's source tree")
	}
	if c.Bool("json") {
		return s.printJSON(c.App.Writer, results)
	}
	s.print(c.App.Writer)
	for _, r := range results {
		what := string(r.Action)
		switch r.Action {
		case hooks.Chained:
			what += ": runs " + filepath.Base(r.Chained) + " first"
		case hooks.Replaced:
			what += ": the old one is kept as " + filepath.Base(r.Backup)
		case hooks.Kept:
			what += ": yours, and it already runs git-crucible"
		}
		fmt.Fprintf(c.App.Writer, "%-13s %s\n", r.Name, what)
	}
	return nil
}

// hooksPathRefusal says where core.hooksPath is set and how to go on.
func hooksPathRefusal(hp *gitext.ConfigEntry, dir string) error {
	there := "install there anyway: git crucible hooks install --hooks-path"
	if hp.Scope == "global" || hp.Scope == "system" {
		there = "install there anyway (every repository that uses it runs them): git crucible hooks install --hooks-path"
	}
	hints := []string{there, "or call git-crucible from the hooks there: git crucible hooks install --manual"}
	if hp.Scope != "command" {
		hints = append(hints, fmt.Sprintf("or stop using it: git config --%s --unset core.hooksPath", hp.Scope))
	}
	return withHints(&refused{Err: fmt.Errorf("core.hooksPath is set to '%s' (%s config, %s), so git runs hooks from %s",
		hp.Value, hp.Scope, hp.Origin, dir)}, hints...)
}

// installRefusal explains why nothing was installed, and what to run.
func installRefusal(c *cli.Context, err error) error {
	var foreign *hooks.ForeignError
	var aside *hooks.AsideError
	switch {
	case errors.As(err, &foreign):
		var msgs []string
		for _, h := range foreign.Hooks {
			var msg strings.Builder
			fmt.Fprintf(&msg, "%s is not git-crucible's hook; it begins:", h.Path)
			if len(h.Head) == 0 {
				msg.WriteString("\n    (it is empty)")
			}
			for _, l := range h.Head {
				msg.WriteString("\n    " + l)
			}
			msgs = append(msgs, msg.String())
		}
		msgs = append(msgs, "nothing was installed")
		again := "git crucible hooks install"
		if c.Bool("hooks-path") {
			again += " --hooks-path"
		}
		args := ""
		if c.NArg() > 0 {
			args = " " + strings.Join(c.Args().Slice(), " ")
		}
		return withHints(&refused{Err: errors.New(cliexit.JoinErrors(msgs...))},
			"to keep it and run it first:      "+again+" --chain"+args,
			"to replace it, keeping a backup:  "+again+" --force"+args,
			"to call git-crucible from it:     "+again+" --manual"+args)
	case errors.As(err, &aside):
		return withHints(&refused{Err: fmt.Errorf("cannot move %s aside: %s is in the way; nothing was installed", aside.Hook.Path, aside.Path)},
			"look at it, move it away or delete it, then run the command again")
	}
	return err
}

// printManual prints, for each hook, the line to add to one's own.
func printManual(c *cli.Context, s *hookSite) error {
	type manual struct {
		Name string `json:"name"`
		Path string `json:"path"`
		Line string `json:"line"`
	}
	var lines []manual
	for _, n := range s.names {
		lines = append(lines, manual{n, filepath.Join(s.Dir, n), hooks.ManualLine(n)})
	}
	if c.Bool("json") {
		return s.printJSON(c.App.Writer, lines)
	}
	w := c.App.Writer
	s.print(w)
	for _, m := range lines {
		fmt.Fprintf(w, "%s: to run git-crucible from your own %s, add this line where it should run:\n    %s\n", m.Name, m.Path, m.Line)
		if hooks.TakesStdin(m.Name) {
			fmt.Fprintf(w, "  It reads the hook's standard input: if your hook reads it too, save it to a file first\n"+
				"  and give each of them a copy (\"< file\").\n")
		}
	}
	return nil
}

func hooksUninstall(c *cli.Context) error {
	if (c.Bool("claude") || c.Bool("claude-local")) && c.NArg() > 0 {
		return usageErrorf("--claude and --claude-local take no hook names")
	}
	s, err := findHooks(c)
	if err != nil {
		return err
	}
	if files, err := claudeFiles(c, s); err != nil || files != nil {
		if err != nil {
			return err
		}
		return claudeCommand(c, files, hooks.UninstallClaude)
	}
	results, err := hooks.Uninstall(s.Dir, s.names)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return s.printJSON(c.App.Writer, results)
	}
	s.print(c.App.Writer)
	for _, r := range results {
		var what string
		switch r.Action {
		case hooks.Restored:
			what = "restored from " + filepath.Base(r.From)
		case hooks.Removed:
			what = "removed"
		case hooks.LeftAlone:
			what = "left alone: not git-crucible's"
		case hooks.Absent:
			what = "not installed"
		}
		if r.Backup != "" {
			what += " (" + filepath.Base(r.Backup) + " is still there)"
		}
		fmt.Fprintf(c.App.Writer, "%-13s %s\n", r.Name, what)
	}
	return nil
}

func hooksStatus(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	s, err := findHooks(c)
	if err != nil {
		return err
	}
	var list []hooks.Hook
	for _, name := range hooks.All() {
		h, err := hooks.Inspect(s.Dir, name)
		if err != nil {
			return err
		}
		// Only the hooks that matter here, and any other that is there.
		if slices.Contains(hooks.Defaults(s.Bare), name) || h.State != hooks.Missing {
			list = append(list, h)
		}
	}
	claude := claudeStatuses(s)
	if c.Bool("json") {
		out := map[string]any{"hooks_dir": s.Dir, "hooks_path": s.HooksPath, "hooks": list}
		if claude != nil {
			out["claude"] = claude
		}
		return writeJSON(c.App.Writer, out, "  ")
	}
	s.print(c.App.Writer)
	for _, h := range list {
		what := string(h.State)
		switch {
		case h.State == hooks.OursChained:
			what += ": runs " + filepath.Base(h.Chained) + " first"
		case h.State == hooks.Outdated:
			what += ": 'git crucible hooks install " + h.Name + "' rewrites it"
		case h.State == hooks.Foreign && h.RunsCrucible:
			what += ": runs git-crucible"
		case h.State == hooks.Foreign && h.Tool != "":
			what += " (" + h.Tool + ")"
		}
		if h.Backup != "" {
			what += " (" + filepath.Base(h.Backup) + " is kept)"
		}
		fmt.Fprintf(c.App.Writer, "%-13s %s\n", h.Name, what)
	}
	printClaudeStatus(c.App.Writer, s, claude)
	return nil
}

// printClaudeStatus prints hooks status's lines for Claude Code's settings.
func printClaudeStatus(w io.Writer, s *hookSite, claude []claudeStatus) {
	for _, st := range claude {
		file, _ := filepath.Rel(s.WorkTree, st.Path)
		what := st.State
		switch {
		case st.Error != "":
			what = cliexit.ErrorLine(strings.TrimPrefix(st.Error, st.Path+": "))
		case st.State == hooks.ClaudeOutdated:
			flag := "--claude"
			if file == hooks.ClaudeLocalSettings {
				flag = "--claude-local"
			}
			what += ": " + hooks.ClaudeEventSummary(st.Events) + "; 'git crucible hooks install " + flag + "' completes it"
		}
		fmt.Fprintf(w, "%-13s %s: %s\n", "claude-code", file, what)
	}
}

func hooksFlush(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	repo, err := gitext.Discover(c.Context)
	if err != nil {
		return err
	}
	n, err := notes.Flush(c.Context, repo)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, struct {
			Written int `json:"written"`
		}{n}, "  ")
	}
	fmt.Fprintf(c.App.Writer, "%d queued provenance note(s) written\n", n)
	return nil
}
