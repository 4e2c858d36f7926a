package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

// RunsDir is where, under an agent's working directory, the engine puts
// the files an agent is asked to write (its report). It must be inside the
// working directory and outside every .git directory: claude refuses to
// write under .git whatever it is allowed, and codex's sandbox mounts .git
// read-only.
const RunsDir = ".crucible/runs"

// Access is what the built-in claude and codex agents let a role do: the
// least its work needs.
type Access int

const (
	// Judge reads the work tree and writes only its report: red team,
	// reviewers, a task run's critique.
	Judge Access = iota
	// Writer also edits the work tree: design and plan writers, and any
	// role this package does not know.
	Writer
	// Tester also runs the project's test command and the task's fast
	// gate: implementer, fixer, test writer.
	Tester
)

// AccessOf is the access role's agent is given.
func AccessOf(role string) Access {
	switch role {
	case "red-team", "reviewer", "critique":
		return Judge
	case "implementer", "fixer", "test-writer":
		return Tester
	}
	return Writer
}

// Name is the access's word: judge, writer, tester.
func (a Access) Name() string { return [...]string{"judge", "writer", "tester"}[a] }

// Argv is the program and arguments that run a for a dispatch of role,
// the prompt on stdin: the kind's own, the access role needs (commands
// are what a Tester may run), the configured args (which come later, so
// that an option there overrides the kind's), and the model. A codex
// agent's last message goes to lastMessage.
func (a Agent) Argv(role string, commands []string, lastMessage string) []string {
	switch a.Kind {
	case Claude:
		return slices.Concat(orDefault(a.Command, "claude"), []string{"-p", "--output-format", "json"},
			claudeAccess(AccessOf(role), commands), a.Args, a.modelArgs())
	case Codex:
		// codex has no narrower sandbox that lets a judge write its report:
		// read-only with --add-dir writes nothing.
		return slices.Concat(orDefault(a.Command, "codex"), []string{"exec", "--json", "--sandbox", "workspace-write"},
			a.Args, a.modelArgs(), []string{"--output-last-message", lastMessage, "-"})
	}
	return a.Command
}

// claudeAccess are claude's permission options for access: in print mode
// it asks nobody, so what is not allowed is refused.
func claudeAccess(access Access, commands []string) []string {
	switch access {
	case Judge:
		// dontAsk refuses every edit but the report's; read-only tools and
		// read-only commands (git show, git diff) stay allowed.
		return []string{"--permission-mode", "dontAsk", "--allowedTools", "Edit(./" + RunsDir + "/**)"}
	case Tester:
		var allowed []string
		for _, c := range commands {
			if c = strings.TrimSpace(c); c != "" && !slices.Contains(allowed, "Bash("+c+")") {
				allowed = append(allowed, "Bash("+c+")")
			}
		}
		if len(allowed) > 0 {
			return slices.Concat([]string{"--permission-mode", "acceptEdits", "--allowedTools"}, allowed)
		}
	}
	return []string{"--permission-mode", "acceptEdits"}
}

// installHints say how to install a built-in kind's client.
var installHints = lazy.Value[map[Kind]string]{New: func() map[Kind]string {
	return map[Kind]string{
		Claude: "install Claude Code: npm install -g @anthropic-ai/claude-code",
		Codex:  "install the Codex CLI: npm install -g @openai/codex",
	}
}}

// Ready is the agent that plays role, once its program is found: on PATH,
// or, named with a slash, relative to workdir, where it runs. A missing
// client is found before a pipeline starts, not at its first dispatch.
func (c *Config) Ready(role, workdir string) (Agent, error) {
	a, err := c.Resolve(role)
	if err != nil || a.Kind == Manual {
		return a, err
	}
	program := a.Command
	if len(program) == 0 {
		program = []string{string(a.Kind)}
	}
	if found(program[0], workdir) {
		return a, nil
	}
	msg := fmt.Sprintf("agent %s (for role %s) cannot run: no program %q", a.Name, role, program[0])
	if !strings.Contains(program[0], "/") {
		msg += " on PATH"
	}
	hints := []string{"set its command in its configuration (see: git crucible help agents), or give the role another agent"}
	if h := installHints.Get()[a.Kind]; h != "" && len(a.Command) == 0 {
		hints = []string{h, "or run it from elsewhere: command = [\"/path/to/" + string(a.Kind) + "\"] in its [agents." + a.Name + "] table"}
	}
	return a, outcome.WithHints(errors.New(msg), hints...)
}

// found reports whether program is an executable file, as exec.Command
// run in workdir finds it.
func found(program, workdir string) bool {
	if !strings.Contains(program, "/") {
		_, err := exec.LookPath(program)
		return err == nil
	}
	if !filepath.IsAbs(program) {
		program = filepath.Join(workdir, program)
	}
	fi, err := os.Stat(program)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
