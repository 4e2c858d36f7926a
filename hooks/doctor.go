package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/notes"
)

// GUIPath is the PATH a GUI git client started from a desktop session
// often has: no ~/go/bin, no ~/.local/bin.
const GUIPath = "/usr/local/bin:/usr/bin:/bin"

// Severity of a finding: OK, or a problem (Warning, Error).
type Severity string

const (
	OK      Severity = "ok"
	Warning Severity = "warning" // works, but something is lost or may fail
	Error   Severity = "error"   // a gate is not enforced, or a hook will fail
)

// Finding is one result of Doctor.
type Finding struct {
	Severity Severity `json:"severity"`
	Topic    string   `json:"topic"` // a hook name, a config key, PATH
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"` // the command that fixes it
}

// Setup is what Doctor examines.
type Setup struct {
	Dir        string              // where git runs hooks from
	DefaultDir string              // the repository's own hooks directory
	HooksPath  *gitext.ConfigEntry // the core.hooksPath that moved Dir away from DefaultDir, or nil
	Bare       bool
	Config     []gitext.ConfigEntry // at least the notes.rewriteRef and notes.rewriteMode values
	PATH       string               // the current PATH
	GUIPath    string               // a GUI client's PATH: GUIPath
	Binary     string               // the running git-crucible's absolute path; git-crucible-hook is Beside it
	WorkTree   string               // the work tree's top, whose .claude holds Claude Code's settings; "" for none
}

// Doctor checks that the hooks git runs are ours, that notes follow
// rewritten commits, that the hooks can find git-crucible, and, in a work
// tree that uses Claude Code, that its hook entries record Agent calls.
func Doctor(s Setup) ([]Finding, error) {
	var hooks []Hook
	integrated := 0 // hooks that run git-crucible
	for _, name := range Defaults(s.Bare) {
		h, err := Inspect(s.Dir, name)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, h)
		if h.Ours() || h.RunsCrucible {
			integrated++
		}
	}
	var f []Finding
	hooksPathFlag := ""
	if s.HooksPath != nil {
		hooksPathFlag = " --hooks-path"
		hp, err := hooksPathFinding(s, integrated > 0)
		if err != nil {
			return nil, err
		}
		f = append(f, hp)
	} else if integrated == 0 {
		f = append(f, Finding{Error, "hooks", fmt.Sprintf("git-crucible's hooks are not installed in %s", s.Dir), "git crucible hooks install"})
	}
	if integrated > 0 {
		for _, h := range hooks {
			f = append(f, hookFinding(h, hooksPathFlag))
		}
	}
	if !s.Bare { // notes are rewritten by commands that need a work tree
		f = append(f, notesFindings(s.Config)...)
	}
	f = append(f, binaryFindings(s, hooks, hooksPathFlag)...)
	if s.WorkTree != "" && !s.Bare {
		f = append(f, claudeFindings(s.WorkTree)...)
	}
	return f, nil
}

// claudeFindings checks Claude Code's hook entries in the work tree at top:
// each settings file that has ours, or, when neither has, that there is no
// .claude directory (Claude Code is not used there).
func claudeFindings(top string) []Finding {
	const topic = "claude-code"
	var f []Finding
	found := false
	for _, c := range []struct{ file, flag string }{{ClaudeProjectSettings, "--claude"}, {ClaudeLocalSettings, "--claude-local"}} {
		install := "git crucible hooks install " + c.flag
		s, err := InspectClaude(filepath.Join(top, c.file))
		var se *ClaudeSettingsError
		switch {
		case errors.As(err, &se):
			found = true
			f = append(f, Finding{Warning, topic, fmt.Sprintf("%s: %s; Claude Code's hook entries cannot be checked", c.file, se.Msg),
				"fix it, then: " + install})
		case err != nil:
			found = true
			f = append(f, Finding{Warning, topic, fmt.Sprintf("%s cannot be read: %v", c.file, err), ""})
		case s.State == ClaudeInstalled:
			found = true
			f = append(f, Finding{OK, topic, c.file + " runs '" + ClaudeCommand + "': Claude Code's Agent calls are recorded", ""})
		case s.State == ClaudeOutdated:
			found = true
			f = append(f, Finding{Warning, topic, fmt.Sprintf("%s: Claude Code's hook entries are not the ones this version writes (%s)", c.file, ClaudeEventSummary(s.Events)), install})
		}
	}
	if fi, err := os.Lstat(filepath.Join(top, ".claude")); !found && err == nil && fi.IsDir() {
		f = append(f, Finding{Warning, topic, "Claude Code is used here (.claude/), but its hook entries are not installed: its Agent calls are not recorded",
			"git crucible hooks install --claude   (or --claude-local: in .claude/settings.local.json, for you alone)"})
	}
	return f
}

// hooksPathFinding says where core.hooksPath sends git, and whether our
// hooks are there.
func hooksPathFinding(s Setup, ours bool) (Finding, error) {
	hp := s.HooksPath
	where := fmt.Sprintf("core.hooksPath is %q (%s config, %s)", hp.Value, hp.Scope, hp.Origin)
	if tool := identify(s.Dir, nil); tool != "" {
		where += ", " + tool + "'s"
	}
	if ours {
		return Finding{OK, "core.hooksPath", where + "; git-crucible's hooks are there", ""}, nil
	}
	msg := fmt.Sprintf("%s: git runs hooks from %s only, and git-crucible's are not there", where, s.Dir)
	for _, name := range Defaults(s.Bare) {
		h, err := Inspect(s.DefaultDir, name)
		if err != nil {
			return Finding{}, err
		}
		if h.Ours() {
			msg += fmt.Sprintf(" (those in %s no longer run)", s.DefaultDir)
			break
		}
	}
	return Finding{Error, "core.hooksPath", msg,
		"git crucible hooks install --hooks-path   (or, to call git-crucible from your own hooks: git crucible hooks install --manual)"}, nil
}

func hookFinding(h Hook, hooksPathFlag string) Finding {
	install := "git crucible hooks install" + hooksPathFlag + " " + h.Name
	switch {
	case h.State == OursChained:
		return Finding{OK, h.Name, fmt.Sprintf("git-crucible's hook, running %s first", filepath.Base(h.Chained)), ""}
	case h.State == Ours:
		return Finding{OK, h.Name, "git-crucible's hook", ""}
	case h.State == Outdated && h.NotExecutable:
		return Finding{Error, h.Name, "git-crucible's hook is not executable, so git does not run it", install}
	case h.State == Outdated:
		return Finding{Warning, h.Name, "git-crucible's hook is not the one this version writes", install}
	case h.State == Missing:
		return Finding{Error, h.Name, "not installed", install}
	case h.RunsCrucible:
		return Finding{OK, h.Name, "your own hook, which runs git-crucible", ""}
	}
	what := "a foreign hook"
	if h.Tool != "" {
		what = h.Tool + "'s hook"
	}
	return Finding{Error, h.Name, what + " that does not run git-crucible",
		"git crucible hooks install --chain" + hooksPathFlag + " " + h.Name}
}

// notesFindings checks that provenance notes follow amend and rebase, and
// are merged without duplicates when commits are squashed.
func notesFindings(entries []gitext.ConfigEntry) []Finding {
	rc := notes.RewriteConfigOf(entries)
	f := []Finding{{OK, "notes.rewriteRef", "includes " + notes.RewriteRef, ""}}
	if !rc.Covered {
		f[0] = Finding{Warning, "notes.rewriteRef", "does not include " + notes.RewriteRef + ": provenance notes are lost when commits are amended or rebased",
			"git config --add notes.rewriteRef '" + notes.RewriteRef + "'"}
	}
	mode := rc.Mode
	switch mode {
	case notes.RewriteMode:
		return append(f, Finding{OK, "notes.rewriteMode", "is " + notes.RewriteMode, ""})
	case "":
		mode = "concatenate" // git's default
	}
	return append(f, Finding{Warning, "notes.rewriteMode", fmt.Sprintf("is %s, not %s: provenance lines are duplicated or lost when commits are squashed", mode, notes.RewriteMode),
		"git config notes.rewriteMode " + notes.RewriteMode})
}

// binaryFindings checks that git-crucible is on PATH, and that the hooks
// find git-crucible-hook from a GUI client too: on its PATH, or at their
// fallback.
func binaryFindings(s Setup, hooks []Hook, hooksPathFlag string) []Finding {
	var f []Finding
	if p := Find(s.PATH, Binary); p != "" {
		f = append(f, Finding{OK, "PATH", "git-crucible is " + p, ""})
	} else {
		f = append(f, Finding{Warning, "PATH", "git-crucible is not on PATH; 'git crucible' does not work",
			fmt.Sprintf("export PATH=\"%s:$PATH\"   (in your shell's profile)", filepath.Dir(s.Binary))})
	}
	var fallbacks, missing []string
	for _, h := range hooks {
		if h.Ours() && h.Fallback != "" && !slices.Contains(fallbacks, h.Fallback) {
			fallbacks = append(fallbacks, h.Fallback)
			if !executable(h.Fallback) {
				missing = append(missing, h.Fallback)
			}
		}
	}
	switch p := Find(s.GUIPath, HookBinary); {
	case len(fallbacks) == 0:
	case p != "":
		f = append(f, Finding{OK, "GUI PATH", fmt.Sprintf("a GUI client's PATH (%s) has %s: %s", s.GUIPath, HookBinary, p), ""})
	case len(missing) == 0:
		f = append(f, Finding{OK, "GUI PATH", fmt.Sprintf("%s is not on a GUI client's PATH (%s); the hooks fall back to %s", HookBinary, s.GUIPath, strings.Join(fallbacks, ", ")), ""})
	default:
		f = append(f, Finding{Error, "GUI PATH", fmt.Sprintf("%s is not on a GUI client's PATH (%s), and the hooks' fallback %s does not exist: the hooks refuse every commit from a GUI client", HookBinary, s.GUIPath, strings.Join(missing, ", ")),
			fmt.Sprintf("git crucible hooks install%s   (records %s as the fallback)", hooksPathFlag, Beside(s.Binary))})
	}
	return f
}

// Find is where the command name is on a PATH list, or "".
func Find(pathList, name string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if p := filepath.Join(dir, name); dir != "" && executable(p) {
			return p
		}
	}
	return ""
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
