// Package agent configures and runs the external programs that play a
// pipeline's roles. Configuration comes only from places the user
// controls: a tracked file counts only in the exact content the user
// trusted (package trust), so a pull request cannot make a teammate's
// machine run anything.
package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/internal/outcome"
)

// Kind says how an agent is run and how its output is read.
type Kind string

const (
	Claude  Kind = "claude"  // claude -p --output-format json; the output is its "result"
	Codex   Kind = "codex"   // codex exec -; the output is its last message
	Command Kind = "command" // any program, argv as configured; the output is its stdout
	Manual  Kind = "manual"  // nothing runs: a person (or another orchestrator) answers
)

var kinds = []Kind{Claude, Codex, Command, Manual}

// DefaultTimeout bounds an agent whose configuration names no timeout.
const DefaultTimeout = 30 * time.Minute

// Roles are the roles of the default pipeline and of a task run's
// critique, which `git crucible agents` resolves; a pipeline spec may add
// others.
var Roles = []string{"design-writer", "test-writer", "plan-writer", "implementer", "reviewer", "red-team", "fixer", "critique"}

// DefaultRole is the role whose agent plays every role not named.
const DefaultRole = "default"

// Agent is one configured agent.
type Agent struct {
	Name string
	Kind Kind
	// Command is the argv of a command agent; for claude and codex, the
	// program to start (default "claude", "codex"), before the arguments
	// the kind adds.
	Command []string
	Args    []string // claude, codex: options added after the kind's own
	Timeout time.Duration
	Model   string            // claude, codex: --model
	Env     map[string]string // added to the agent's environment
	Source  string            // where it was defined
}

func (a Agent) modelArgs() []string {
	if a.Model == "" {
		return nil
	}
	return []string{"--model", a.Model}
}

func orDefault(argv []string, program string) []string {
	if len(argv) == 0 {
		return []string{program}
	}
	return argv
}

// builtIn are the agents every configuration has: a role may name them
// without defining them.
func builtIn() map[string]Agent {
	m := map[string]Agent{}
	for _, k := range []Kind{Claude, Codex, Manual} {
		m[string(k)] = Agent{Name: string(k), Kind: k, Timeout: DefaultTimeout, Source: "built in"}
	}
	return m
}

// Binding is a role's agent and where the mapping was made.
type Binding struct {
	Agent  string
	Source string
}

// Source is one place configuration is read from.
type Source struct {
	Name   string `json:"name"`             // tracked, user, repository, git config
	Path   string `json:"path,omitempty"`   // the file ("" for git config)
	Status string `json:"status"`           // absent, loaded, trusted, refused
	Hash   string `json:"sha256,omitempty"` // a tracked file's content hash
}

// Config is the merged configuration: a later source replaces an earlier
// one's agent or role mapping whole.
type Config struct {
	Agents     map[string]Agent
	Roles      map[string]Binding
	Test       string // the project's test command
	TestSource string
	Sources    []Source
	// Refused is why the tracked file was not read (not trusted, or not a
	// regular file). While it stands, Resolve refuses every role: what
	// the repository asks to run must not be silently replaced.
	Refused error
}

// layer is what one source says.
type layer struct {
	agents map[string]Agent
	roles  map[string]string
	test   *string
}

func (c *Config) merge(l layer, source string) {
	maps.Copy(c.Agents, l.agents)
	for role, name := range l.roles {
		c.Roles[role] = Binding{Agent: name, Source: source}
	}
	if l.test != nil {
		c.Test, c.TestSource = *l.test, source
	}
}

// NotConfiguredError is a role that no source gives an agent.
type NotConfiguredError struct{ Role string }

func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("no agent is configured for role %s (nor a default)", e.Role)
}

// hints say how to configure one, with a snippet to paste.
func (e *NotConfiguredError) hints() []string {
	return []string{
		"configure one in ~/.config/git-crucible/agents.toml (or .git/crucible/agents.toml), e.g.:",
		"  [agents.mine]",
		`  kind = "command"            # claude | codex | command | manual`,
		`  command = ["my-agent", "--flag"]`,
		`  timeout = "10m"`,
		"  [roles]",
		`  default = "mine"            # or the built-in "claude", "codex" or "manual"`,
		"or for one role: git config crucible.role." + e.Role + " manual",
	}
}

// Resolve returns the agent that plays role: the role's own mapping, else
// the default one.
func (c *Config) Resolve(role string) (Agent, error) {
	if c.Refused != nil {
		return Agent{}, c.Refused
	}
	b, ok := c.Roles[role]
	if !ok {
		b, ok = c.Roles[DefaultRole]
	}
	if !ok {
		e := &NotConfiguredError{Role: role}
		return Agent{}, outcome.WithHints(e, e.hints()...)
	}
	a, ok := c.Agents[b.Agent]
	if !ok {
		return Agent{}, fmt.Errorf("role %s is given agent %q (%s), which is not defined; defined: %s",
			role, b.Agent, b.Source, strings.Join(slices.Sorted(maps.Keys(c.Agents)), ", "))
	}
	return a, nil
}

// Agent returns the agent called name.
func (c *Config) Agent(name string) (Agent, error) {
	if c.Refused != nil {
		return Agent{}, c.Refused
	}
	a, ok := c.Agents[name]
	if !ok {
		return Agent{}, fmt.Errorf("no agent is called %q; defined: %s", name, strings.Join(slices.Sorted(maps.Keys(c.Agents)), ", "))
	}
	return a, nil
}
