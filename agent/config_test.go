package agent

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/internal/repotest"
	"github.com/git-crucible/git-crucible/trust"
)

// TestParse: what a file may say, and the error, with its line, for what
// it may not.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, toml, want string
	}{
		{"full", `
[agents.scripted]
kind = "command"
command = ["testdata/agent/scripted", "--scenario", "happy"]
timeout = "10m"
env = { SCENARIO = "happy" }

[agents.opus]
kind = "claude"
model = "opus"
args = ["--permission-mode", "acceptEdits"]

[agents.person]
kind = "manual"

[roles]
default = "scripted"
red-team = "opus"

[project]
test = "go test ./..."
`, "opus claude [] [--permission-mode acceptEdits] 30m0s opus map[]; person manual [] [] 30m0s  map[]; " +
			"scripted command [testdata/agent/scripted --scenario happy] [] 10m0s  map[SCENARIO:happy]; " +
			"roles map[default:scripted red-team:opus]; test go test ./..."},
		{"empty", "", "roles map[]; test <nil>"},
		{"syntax", "[agents.x]\nkind = \"command\nx", "f.toml:2: strings cannot contain newlines"},
		{"unknown key", "[agents.x]\nkind = \"command\"\ncomand = [\"a\"]\n", "f.toml:3: agents.x.comand: unknown key"},
		{"unknown table", "[agent.x]\nkind = \"command\"\n", "f.toml:1: agent.x: unknown key"},
		{"unknown project key", "[project]\ntests = \"make\"\n", "f.toml:2: project.tests: unknown key"},
		{"no kind", "\n[agents.x]\ncommand = [\"a\"]\n", "f.toml:2: agents.x: has no kind (claude, codex, command or manual)"},
		{"bad kind", "[agents.x]\n\nkind = \"gpt\"\n", `f.toml:3: agents.x.kind: unknown kind "gpt": want claude, codex, command or manual`},
		{"no command", "[agents.x]\nkind = \"command\"\n", `f.toml:1: agents.x: a command agent needs command = ["program", "arg", ...]`},
		{"empty argument", "[agents.x]\nkind = \"command\"\ncommand = [\"a\", \"\"]\n", "f.toml:3: agents.x.command: has an empty argument or one with a NUL byte"},
		{"bad timeout", "[agents.x]\nkind = \"claude\"\ntimeout = \"10\"\n", `f.toml:3: agents.x.timeout: bad timeout "10": want a positive duration such as "10m" or "1h30m"`},
		{"negative timeout", "[agents.x]\nkind = \"claude\"\ntimeout = \"-1m\"\n", `f.toml:3: agents.x.timeout: bad timeout "-1m": want a positive duration such as "10m" or "1h30m"`},
		{"timeout type", "[agents.x]\nkind = \"claude\"\ntimeout = 600\n", `f.toml:3: agents.x.timeout: incompatible types: TOML value has type int64; destination has type string`},
		{"command as string", "[agents.x]\nkind = \"command\"\ncommand = \"make agent\"\n", `f.toml:3: agents.x.command: incompatible types: TOML value has type string; destination has type slice`},
		{"manual with command", "[agents.x]\nkind = \"manual\"\ncommand = [\"a\"]\n", "f.toml:1: agents.x: a manual agent runs nothing: it takes only kind"},
		{"command with model", "[agents.x]\nkind = \"command\"\ncommand = [\"a\"]\nmodel = \"m\"\n", "f.toml:4: agents.x.model: a command agent takes no model: pass it in command"},
		{"command with args", "[agents.x]\nkind = \"command\"\ncommand = [\"a\"]\nargs = [\"b\"]\n", "f.toml:4: agents.x.args: a command agent takes its arguments in command"},
		{"protocol env", "[agents.x]\nkind = \"claude\"\nenv = { CRUCIBLE_OUTPUT = \"/tmp/x\" }\n", "f.toml:3: agents.x.env: CRUCIBLE_OUTPUT is set by git-crucible for each dispatch"},
		{"bad env name", "[agents.x]\nkind = \"claude\"\n[agents.x.env]\n\"A B\" = \"1\"\n", `f.toml:3: agents.x.env: "A B" is not an environment variable name`},
		{"bad agent name", "[agents.\"a b\"]\nkind = \"claude\"\n", `f.toml:1: agents."a b": agent name "a b": want letters, digits, '.', '_' and '-'`},
		{"bad role agent", "[roles]\nreviewer = \"\"\n", `f.toml:2: roles.reviewer: agent name "": want letters, digits, '.', '_' and '-'`},
		{"empty test", "[project]\ntest = \" \"\n", "f.toml:2: project.test: is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse("f.toml", []byte(c.toml))
			got := ""
			if err != nil {
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("%T %v is not a *ConfigError", err, err)
				}
				got = err.Error()
			} else {
				got = describe(l)
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func describe(l layer) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(l.agents)) {
		a := l.agents[name]
		parts = append(parts, fmt.Sprintf("%s %s %v %v %s %s %v", name, a.Kind, a.Command, a.Args, a.Timeout, a.Model, a.Env))
	}
	test := "<nil>"
	if l.test != nil {
		test = *l.test
	}
	return strings.Join(append(parts, fmt.Sprintf("roles %v", l.roles), "test "+test), "; ")
}

// TestArgv: what each kind starts for each access: a judge may write only
// under the runs directory, a writer edits, a tester also runs exactly the
// commands it is given; the configured args come after, the model last.
func TestArgv(t *testing.T) {
	tests := []string{"sh test/unit.sh", "go test ./x", "", "sh test/unit.sh"}
	for _, c := range []struct {
		a    Agent
		role string
		want string
	}{
		{Agent{Kind: Claude}, "red-team", "[claude -p --output-format json --permission-mode dontAsk --allowedTools Edit(./.crucible/runs/**)]"},
		{Agent{Kind: Claude}, "critique", "[claude -p --output-format json --permission-mode dontAsk --allowedTools Edit(./.crucible/runs/**)]"},
		{Agent{Kind: Claude}, "design-writer", "[claude -p --output-format json --permission-mode acceptEdits]"},
		{Agent{Kind: Claude}, "a-role-of-my-spec", "[claude -p --output-format json --permission-mode acceptEdits]"},
		{Agent{Kind: Claude}, "implementer", "[claude -p --output-format json --permission-mode acceptEdits --allowedTools Bash(sh test/unit.sh) Bash(go test ./x)]"},
		{Agent{Kind: Claude, Command: []string{"/opt/claude"}, Args: []string{"--permission-mode", "bypassPermissions"}, Model: "opus"}, "plan-writer",
			"[/opt/claude -p --output-format json --permission-mode acceptEdits --permission-mode bypassPermissions --model opus]"},
		{Agent{Kind: Codex}, "reviewer", "[codex exec --json --sandbox workspace-write --output-last-message /lm -]"},
		{Agent{Kind: Codex, Command: []string{"npx", "@openai/codex"}, Args: []string{"-c", "x=1"}, Model: "o3"}, "fixer",
			"[npx @openai/codex exec --json --sandbox workspace-write -c x=1 --model o3 --output-last-message /lm -]"},
		{Agent{Kind: Command, Command: []string{"a", "b c"}}, "implementer", "[a b c]"},
	} {
		if got := fmt.Sprint(c.a.Argv(c.role, tests, "/lm")); got != c.want {
			t.Errorf("%+v as %s: %s, want %s", c.a, c.role, got, c.want)
		}
	}
	if got := fmt.Sprint(Agent{Kind: Claude}.Argv("fixer", nil, "")); got != "[claude -p --output-format json --permission-mode acceptEdits]" {
		t.Errorf("a tester with no command to run: %s", got)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, r *gitext.Repo) *Config {
	t.Helper()
	c, err := Load(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func resolved(t *testing.T, c *Config, role string) string {
	t.Helper()
	a, err := c.Resolve(role)
	if err != nil {
		return "error: " + err.Error()
	}
	return a.Name + " from " + a.Source
}

// TestLoadPrecedence: tracked (trusted) < user < repository < git config,
// per agent and per role.
func TestLoadPrecedence(t *testing.T) {
	r := repotest.Open(t)
	tracked := filepath.Join(r.WorkTree, ".crucible", "agents.toml")
	trackedText := "[agents.team]\nkind = \"command\"\ncommand = [\"team-agent\"]\n[roles]\ndefault = \"team\"\nreviewer = \"team\"\nfixer = \"team\"\n[project]\ntest = \"make test\"\n"
	write(t, tracked, trackedText)
	if _, err := trust.Record(r, TrackedFile, []byte(trackedText)); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git-crucible", "agents.toml")
	write(t, user, "[agents.team]\nkind = \"command\"\ncommand = [\"my-team-agent\"]\ntimeout = \"5m\"\n[roles]\nreviewer = \"claude\"\n")
	write(t, RepositoryFile(r), "[roles]\nfixer = \"codex\"\n")
	gittest.Git(t, r.WorkTree, "config", "crucible.role.red-team", "local")
	gittest.Git(t, r.WorkTree, "config", "crucible.agent.local.kind", "command")
	gittest.Git(t, r.WorkTree, "config", "--add", "crucible.agent.local.command", "sh")
	gittest.Git(t, r.WorkTree, "config", "--add", "crucible.agent.local.command", "-c")
	gittest.Git(t, r.WorkTree, "config", "--add", "crucible.agent.local.command", "echo hi")
	gittest.Git(t, r.WorkTree, "config", "crucible.agent.local.env", "A=1=2")
	gittest.Git(t, r.WorkTree, "config", "crucible.test", "go test ./...")

	c := load(t, r)
	for role, want := range map[string]string{
		"implementer": "team from " + user, "reviewer": "claude from built in", "fixer": "codex from built in",
		"red-team": "local from git config crucible.agent.local",
	} {
		if got := resolved(t, c, role); got != want {
			t.Errorf("%s: %s, want %s", role, got, want)
		}
	}
	if a := c.Agents["team"]; fmt.Sprint(a.Command, a.Timeout) != "[my-team-agent] 5m0s" {
		t.Errorf("team %+v: the user's definition replaces the tracked one whole", a)
	}
	if a := c.Agents["local"]; fmt.Sprint(a.Command, a.Env) != "[sh -c echo hi] map[A:1=2]" {
		t.Errorf("local %+v", a)
	}
	if c.Test != "go test ./..." || c.TestSource != "git config" || c.Roles["default"].Source != TrackedFile {
		t.Errorf("test %q from %q, default from %q", c.Test, c.TestSource, c.Roles["default"].Source)
	}
	if got := fmt.Sprint(c.Sources); got != fmt.Sprintf("[{tracked .crucible/agents.toml trusted %s} {user %s loaded } {repository %s loaded } {git config  loaded }]",
		trust.Hash([]byte(trackedText)), user, RepositoryFile(r)) {
		t.Errorf("sources %s", got)
	}
}

// TestTrackedNeedsTrust: a tracked file is refused until trusted, again
// after an edit, and while refused no role resolves, even one another
// source maps; its content is never in the error.
func TestTrackedNeedsTrust(t *testing.T) {
	r := repotest.Open(t)
	tracked := filepath.Join(r.WorkTree, ".crucible", "agents.toml")
	v1 := "[agents.evil]\nkind = \"command\"\ncommand = [\"curl-something\"]\n[roles]\ndefault = \"evil\"\n"
	write(t, tracked, v1)
	write(t, RepositoryFile(r), "[roles]\ndefault = \"manual\"\n")
	refusal := func(want string) {
		t.Helper()
		c := load(t, r)
		_, err := c.Resolve("implementer")
		var rf *outcome.Refused
		var h *outcome.Hinted
		if !errors.As(err, &rf) || !errors.As(err, &h) || err.Error() != want || strings.Contains(err.Error(), "curl") {
			t.Fatalf("err = %v", err)
		}
		if fmt.Sprint(h.Hints) != "[review it, then run 'git crucible trust .crucible/agents.toml']" {
			t.Errorf("hints %q", h.Hints)
		}
		if _, ok := c.Agents["evil"]; ok || c.Sources[0].Status != "refused" {
			t.Errorf("the refused file was merged: %+v", c.Sources[0])
		}
	}
	refusal(".crucible/agents.toml is not trusted: it names commands to run and nobody trusted it here")
	if _, err := trust.Record(r, TrackedFile, []byte(v1)); err != nil {
		t.Fatal(err)
	}
	if got := resolved(t, load(t, r), "implementer"); got != "manual from built in" {
		t.Errorf("trusted: %s", got)
	}
	write(t, tracked, v1+"# edited\n")
	refusal(fmt.Sprintf(".crucible/agents.toml changed since it was trusted (trusted sha256 %s, now %s)",
		trust.Hash([]byte(v1))[:12], trust.Hash([]byte(v1 + "# edited\n"))[:12]))
}

// TestTrackedSymlink: a symbolic link at the tracked path is refused
// without being followed, whatever trust says.
func TestTrackedSymlink(t *testing.T) {
	r := repotest.Open(t)
	target := filepath.Join(t.TempDir(), "agents.toml")
	write(t, target, "[roles]\ndefault = \"manual\"\n")
	if err := os.MkdirAll(filepath.Join(r.WorkTree, ".crucible"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(r.WorkTree, ".crucible", "agents.toml")); err != nil {
		t.Fatal(err)
	}
	_, err := load(t, r).Resolve("reviewer")
	if err == nil || err.Error() != filepath.Join(r.WorkTree, ".crucible", "agents.toml")+": is a symbolic link; not read" {
		t.Errorf("err = %v", err)
	}
}

// TestNotConfigured: no role mapped says how to map one; the built-in
// manual agent is there with no configuration at all.
func TestNotConfigured(t *testing.T) {
	c := load(t, repotest.Open(t))
	_, err := c.Resolve("reviewer")
	var nc *NotConfiguredError
	var h *outcome.Hinted
	if !errors.As(err, &nc) || !errors.As(err, &h) || err.Error() != "no agent is configured for role reviewer (nor a default)" {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(strings.Join(h.Hints, "\n"), "  [agents.mine]\n  kind = \"command\"") {
		t.Errorf("hints %q", h.Hints)
	}
	if a, err := c.Agent("manual"); err != nil || a.Kind != Manual {
		t.Errorf("manual: %+v %v", a, err)
	}
}

// TestGitConfigErrors: a bad value set with git config names its key and
// the file it is in.
func TestGitConfigErrors(t *testing.T) {
	r := repotest.Open(t)
	config := filepath.Join(r.CommonDir, "config")
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"crucible.agent.x.kind", "gpt"}, config + `: crucible.agent.x.kind: unknown kind "gpt": want claude, codex, command or manual`},
		{[]string{"crucible.agent.x.timout", "5m"}, config + ": crucible.agent.x.timout: unknown key"},
		{[]string{"crucible.agent.kind", "claude"}, config + ": crucible.agent.kind: names no agent: set crucible.agent.<name>.kind"},
		{[]string{"crucible.agent.x.env", "NOVALUE"}, config + `: crucible.agent.x.env: "NOVALUE" is not NAME=VALUE`},
		{[]string{"crucible.role.reviewer", "a b"}, config + `: crucible.role.reviewer: agent name "a b": want letters, digits, '.', '_' and '-'`},
	} {
		gittest.Git(t, r.WorkTree, append([]string{"config"}, c.set...)...)
		_, err := Load(t.Context(), r)
		var ce *ConfigError
		if !errors.As(err, &ce) || err.Error() != c.want {
			t.Errorf("%v: %v\nwant %s", c.set, err, c.want)
		}
		gittest.Git(t, r.WorkTree, "config", "--unset-all", c.set[0])
	}
	gittest.Git(t, r.WorkTree, "config", "crucible.agent.y.kind", "codex")
	gittest.Git(t, r.WorkTree, "config", "crucible.agent.y.timeout", "90s")
	if c := load(t, r); c.Agents["y"].Timeout != 90*time.Second {
		t.Errorf("%+v", c.Agents["y"])
	}
}
