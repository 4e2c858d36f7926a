package agent

import (
	"slices"
	"strings"
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
