package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

func agentsCommand() *cli.Command {
	return &cli.Command{
		Name:      "agents",
		Usage:     "show the configured agents, the roles they play, and where each came from",
		ArgsUsage: " ",
		Description: "Agents are read, lowest precedence first, from: the built-in claude, codex and manual agents;\n" +
			"the tracked " + agent.TrackedFile + ", only in content trusted with 'git crucible trust'; the\n" +
			"user's $XDG_CONFIG_HOME/git-crucible/agents.toml (~/.config/...); the repository's untracked\n" +
			"<git-common-dir>/crucible/agents.toml; and git config. A later source replaces an agent or a role\n" +
			"mapping whole. In a file:\n\n" +
			"   [agents.NAME]\n" +
			"   kind = \"command\"        # claude | codex | command | manual\n" +
			"   command = [\"prog\", \"arg\"] # argv, no shell; for claude and codex the program to start\n" +
			"   args = [\"--flag\"]       # claude, codex: options after the kind's own\n" +
			"   model = \"opus\"          # claude, codex: --model\n" +
			"   timeout = \"10m\"         # default 30m\n" +
			"   env = { NAME = \"value\" }\n" +
			"   [roles]\n" +
			"   default = \"NAME\"        # and <role> = \"NAME\" for any role\n" +
			"   [project]\n" +
			"   test = \"go test ./...\"\n\n" +
			"In git config: crucible.agent.<name>.kind, .timeout and .model; .command, .args and .env\n" +
			"(NAME=VALUE) once per value, in order; crucible.role.<role> = <name>; crucible.test.\n\n" +
			"claude runs 'claude -p --output-format json' and codex 'codex exec ... --output-last-message\n" +
			"FILE -', both with the prompt on stdin; neither is given more permissions than its own settings\n" +
			"give: add them in args (e.g. [\"--permission-mode\", \"acceptEdits\"], [\"--sandbox\", \"workspace-write\"]).\n\n" +
			"Lists the sources, the agents, the role mappings and the agent each role of the default pipeline\n" +
			"(" + strings.Join(agent.Roles, ", ") + ") resolves to. Nothing of a refused file is shown.\n\n" +
			"EXIT STATUS: 0 every role resolves; 1 one does not (the tracked file is not trusted, or no agent\n" +
			"is configured); 128 a configuration file is wrong, or not a git repository; 129 usage error.",
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "use", Usage: "map every role (and the default) to agent `NAME`, e.g. claude or codex, in git config"},
			&cli.BoolFlag{Name: "global", Usage: "with --use: in the user's git config (~/.gitconfig), not the repository's"},
		},
		Action: agentsAction,
	}
}

type agentView struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Argv    []string `json:"argv,omitempty"`
	Model   string   `json:"model,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
	Env     []string `json:"env,omitempty"` // names only: values may be secrets
	Source  string   `json:"source"`
}

type roleView struct {
	Role   string   `json:"role"`
	Agent  string   `json:"agent,omitempty"`
	Source string   `json:"source,omitempty"`
	Access string   `json:"access,omitempty"` // judge, writer, tester: what the built-in claude and codex let it do
	Argv   []string `json:"argv,omitempty"`   // what a dispatch of the role runs (claude, codex, command)
	Error  string   `json:"error,omitempty"`
}

// fastGatePlaceholder stands for the task's fast gate in a tester's argv:
// it is the plan's, known only at the dispatch.
const fastGatePlaceholder = "<the task's fast gate>"

func agentsAction(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	repo, err := gitext.Discover(c.Context)
	if err != nil {
		return err
	}
	if name := c.String("use"); name != "" {
		if err := useAgent(c, repo, name); err != nil {
			return err
		}
	} else if c.Bool("global") {
		return usageErrorf("--global goes with --use")
	}
	cfg, err := agent.Load(c.Context, repo)
	if err != nil {
		return err
	}
	agents := []agentView{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[name]
		v := agentView{Name: name, Kind: string(a.Kind), Model: a.Model, Env: slices.Sorted(maps.Keys(a.Env)), Source: a.Source}
		if a.Kind != agent.Manual {
			v.Timeout = a.Timeout.String()
		}
		if a.Kind == agent.Command {
			v.Argv = a.Command
		}
		agents = append(agents, v)
	}
	roles := []roleView{}
	for _, role := range slices.Sorted(maps.Keys(cfg.Roles)) {
		roles = append(roles, roleView{Role: role, Agent: cfg.Roles[role].Agent, Source: cfg.Roles[role].Source})
	}
	resolved := []roleView{}
	var problem error
	for _, role := range agent.Roles {
		a, err := cfg.Resolve(role)
		if err != nil {
			resolved = append(resolved, roleView{Role: role, Error: err.Error()})
			problem = cmp.Or(problem, err)
			continue
		}
		v := roleView{Role: role, Agent: a.Name}
		if a.Kind == agent.Claude || a.Kind == agent.Codex {
			v.Access = agent.AccessOf(role).Name()
		}
		if a.Kind != agent.Manual {
			v.Argv = a.Argv(role, []string{cfg.Test, fastGatePlaceholder}, "<file>")
		}
		resolved = append(resolved, v)
	}
	w := c.App.Writer
	if c.Bool("json") {
		out := map[string]any{"sources": cfg.Sources, "agents": agents, "roles": roles, "resolved": resolved, "ok": problem == nil}
		if cfg.Test != "" {
			out["test"], out["test_source"] = cfg.Test, cfg.TestSource
		}
		if err := writeJSON(w, out, "  "); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "sources:")
		for _, s := range cfg.Sources {
			where := s.Path
			if s.Hash != "" {
				where += " (sha256 " + s.Hash[:12] + ")"
			}
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-11s %-8s %s", s.Name, s.Status, where), " "))
		}
		fmt.Fprintln(w, "agents:")
		for _, a := range agents {
			about := []string{a.Kind}
			if a.Model != "" {
				about = append(about, "model "+a.Model)
			}
			if a.Timeout != "" {
				about = append(about, "timeout "+a.Timeout)
			}
			if len(a.Env) > 0 {
				about = append(about, "env "+strings.Join(a.Env, " "))
			}
			fmt.Fprintf(w, "  %s: %s, from %s\n", a.Name, strings.Join(about, ", "), a.Source)
		}
		fmt.Fprintln(w, "roles:")
		for _, r := range roles {
			fmt.Fprintf(w, "  %-14s %s (%s)\n", r.Role, r.Agent, r.Source)
		}
		fmt.Fprintln(w, "resolved:")
		for _, r := range resolved {
			switch {
			case r.Error != "":
				fmt.Fprintf(w, "  %-14s none\n", r.Role)
			case r.Access != "":
				fmt.Fprintf(w, "  %-14s %s (%s)\n", r.Role, r.Agent, r.Access)
			default:
				fmt.Fprintf(w, "  %-14s %s\n", r.Role, r.Agent)
			}
			if len(r.Argv) > 0 {
				fmt.Fprintf(w, "    %s\n", strings.Join(shellWords(r.Argv), " "))
			}
		}
		if cfg.Test != "" {
			fmt.Fprintf(w, "test: %s (%s)\n", cfg.Test, cfg.TestSource)
		}
	}
	if problem == nil {
		return nil
	}
	if c.Bool("json") {
		return &silentExit{Code: exitRefused}
	}
	if errors.As(problem, new(*outcome.Refused)) {
		return problem
	}
	return &refused{Err: problem}
}

// useAgent maps every role to agent name in git config: the repository's,
// or with --global the user's.
func useAgent(c *cli.Context, repo *gitext.Repo, name string) error {
	file, err := agent.Use(c.Context, repo, name, c.Bool("global"))
	if err != nil {
		return err
	}
	if !c.Bool("json") {
		fmt.Fprintf(c.App.ErrWriter, "Every role is played by %s now (crucible.role.* in %s).\n", name, file)
	}
	return nil
}

func shellWords(argv []string) []string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellQuote(a)
	}
	return words
}
