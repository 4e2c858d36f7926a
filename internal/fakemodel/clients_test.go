package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
)

var update = flag.Bool("update", false, "rewrite testdata/claude-401.json from the real claude")

// These tests run the real claude and codex against the server, each in a
// temporary git repository holding the sample project, with a home of its
// own: nothing of the developer's is read, nothing leaves 127.0.0.1.

// sampleRepo is a committed copy of the sample project, with the
// directory the report goes to (in the work tree, where the clients may
// write it).
func sampleRepo(t *testing.T, env []string) (dir, reportPath string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/agent/sample")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "sample"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".crucible-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, ".crucible-run", "output.yaml")
}

// hermeticEnv is the environment of a client run: the test's, without
// the developer's client settings, with a home of its own and hermetic
// git, and extra.
func hermeticEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gittest.GitConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := gittest.Env(home)
	env := slices.DeleteFunc(WithoutClientEnv(os.Environ()), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		_, ours := vars[name]
		return ours
	})
	for k, v := range vars {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// renderPrompt renders a built-in template as build does for happy's
// dispatch: the design writer, or the implementer of task 1.
func renderPrompt(t *testing.T, template, reportPath string) string {
	t.Helper()
	set, err := prompt.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	d := prompt.Data{Goal: "greet takes a name", Mode: "feature", Pipeline: "build-1", Phase: 1, PhaseName: "Design",
		Step: template, Role: template, TestCommand: "sh test/unit.sh", Inputs: map[string]string{},
		Outputs: map[string]string{"design": "docs/design.md"}, Report: prompt.Report{Path: reportPath, Format: prompt.ReportTask}}
	switch template {
	case "implementer":
		d.Phase, d.PhaseName, d.Step, d.Outputs = 3, "Execute", "implement", nil
		d.Inputs = map[string]string{"design": "docs/design.md", "plan": "docs/plan.md"}
		d.Task = &report.PlanTask{ID: "1", Title: "Take the name argument", Files: []string{"greet.sh"}, FastGate: "sh test/unit.sh"}
	case "fixer":
		d.Step, d.Round, d.MaxRounds, d.Outputs = "design-gate", 1, 15, nil
		d.Artifact = prompt.Artifact{Name: "design", Path: "docs/design.md"}
		d.Findings = &report.Findings{Fatal: []report.Finding{{Title: "No behaviour without a name", File: "docs/design.md"}}}
	}
	text, err := set.Render(template, d)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

type run struct {
	stdout, stderr string
	exit           int
	took           time.Duration
}

// runClient runs argv in dir with env and stdin, within a minute.
func runClient(t *testing.T, dir string, env []string, stdin string, argv ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, env, strings.NewReader(stdin), &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", argv, err)
	}
	t.Logf("%s exited %d after %s", filepath.Base(argv[0]), r.exit, r.took.Round(time.Millisecond))
	return r
}

// claudeResult is what claude -p --output-format json prints.
type claudeResult struct {
	Subtype           string  `json:"subtype"`
	IsError           bool    `json:"is_error"`
	APIErrorStatus    *int    `json:"api_error_status"`
	NumTurns          int     `json:"num_turns"`
	Result            string  `json:"result"`
	TotalCostUSD      float64 `json:"total_cost_usd"`
	PermissionDenials []struct {
		ToolName  string         `json:"tool_name"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func parseClaude(t *testing.T, r run) claudeResult {
	t.Helper()
	var res claudeResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("claude printed no JSON result (%v):\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return res
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// block is the block of directive kind (and argument) in scenario's
// section for c: what the model should have written.
func block(t *testing.T, scenario string, c Conds, kind, arg string) string {
	t.Helper()
	sec, err := Select(scenarios+"/"+scenario, c)
	if err != nil || sec == nil {
		t.Fatalf("%s has no section for %+v: %v", scenario, c, err)
	}
	for _, d := range sec.Directives {
		if d.Kind == kind && d.Arg == arg {
			return d.Block
		}
	}
	t.Fatalf("%s [%s] has no %s %s", scenario, sec.Header, kind, arg)
	return ""
}

// modelCalls are the names of the tool calls the server made, in order.
func modelCalls(s *Server) []string {
	var names []string
	for _, r := range s.Requests() {
		for _, c := range r.Calls {
			names = append(names, c.Name)
		}
	}
	return names
}

// answer is what the client answered to the first tool call the model
// made with input key set to value; nil when it did not answer.
func answer(s *Server, key, value string) *Result {
	rs := s.Requests()
	for i, r := range rs {
		for j, c := range r.Calls {
			if c.Input[key] != value {
				continue
			}
			for _, next := range rs[i+1:] {
				if next.Turn == r.Turn+1 && len(next.Results) > j {
					return &next.Results[j]
				}
			}
		}
	}
	return nil
}

// TestClaudeDesignWriter: claude plays happy's design writer, writing the
// design and the report in the work tree through its own Read and Write
// tools in acceptEdits mode, and says what the tokens cost.
func TestClaudeDesignWriter(t *testing.T) {
	claude := RequireClient(t, "claude")
	t.Parallel()
	s := startServer(t, Options{Scenario: scenarios + "/happy"})
	env := hermeticEnv(t, s.ClaudeEnv()...)
	dir, out := sampleRepo(t, env)
	r := runClient(t, dir, env, renderPrompt(t, "design-writer", out), claude, "-p", "--output-format", "json", "--permission-mode", "acceptEdits")
	res := parseClaude(t, r)
	if r.exit != 0 || res.IsError || res.Result != DefaultText || len(res.PermissionDenials) != 0 {
		t.Fatalf("claude exited %d: %+v\nstderr:\n%s", r.exit, res, r.stderr)
	}
	c := Conds{"design-writer", "1", "", ""}
	if got, want := readFile(t, filepath.Join(dir, "docs/design.md")), block(t, "happy", c, Write, "docs/design.md"); got != want {
		t.Errorf("docs/design.md = %q, want %q", got, want)
	}
	if got, want := readFile(t, out), block(t, "happy", c, Report, ""); got != want {
		t.Errorf("report = %q, want %q", got, want)
	}
	if got := strings.Join(modelCalls(s), " "); got != "Read Write Write" {
		t.Errorf("the model called %s, want Read Write Write", got)
	}
	// Four answers of 100 input and 20 output tokens: claude adds them up.
	if res.Usage.InputTokens != 400 || res.Usage.OutputTokens != 80 || res.TotalCostUSD <= 0 {
		t.Errorf("usage %+v, cost %v: want 400 and 80 tokens, some cost", res.Usage, res.TotalCostUSD)
	}
}

// TestClaudeAppend: claude plays happy's first fixer, which appends to
// the design: what it writes is what its Read showed and the block.
func TestClaudeAppend(t *testing.T) {
	claude := RequireClient(t, "claude")
	t.Parallel()
	s := startServer(t, Options{Scenario: scenarios + "/happy"})
	env := hermeticEnv(t, s.ClaudeEnv()...)
	dir, out := sampleRepo(t, env)
	design := block(t, "happy", Conds{"design-writer", "1", "", ""}, Write, "docs/design.md")
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs/design.md"), []byte(design), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runClient(t, dir, env, renderPrompt(t, "fixer", out), claude, "-p", "--output-format", "json", "--permission-mode", "acceptEdits")
	if res := parseClaude(t, r); r.exit != 0 || res.IsError || len(res.PermissionDenials) != 0 {
		t.Fatalf("claude exited %d: %+v\nstderr:\n%s", r.exit, res, r.stderr)
	}
	want := design + block(t, "happy", Conds{"fixer", "1", "", "1"}, Append, "docs/design.md")
	if got := readFile(t, filepath.Join(dir, "docs/design.md")); got != want {
		t.Errorf("docs/design.md = %q, want %q", got, want)
	}
	if got := strings.Join(modelCalls(s), " "); got != "Read Write Write" {
		t.Errorf("the model called %s, want Read Write Write", got)
	}
}

// TestClaudeTokens: a section's tokens are what claude adds up and
// prices, at its default model's price (claude-opus-4-8: $5 and $25 a
// million input and output tokens).
func TestClaudeTokens(t *testing.T) {
	claude := RequireClient(t, "claude")
	t.Parallel()
	scenario := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(scenario, []byte("[design-writer phase=1]\nrun true\nstdout\ncounted\n.\ntokens 1000 300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Options{Scenario: scenario})
	env := hermeticEnv(t, s.ClaudeEnv()...)
	dir, out := sampleRepo(t, env)
	r := runClient(t, dir, env, renderPrompt(t, "design-writer", out), claude, "-p", "--output-format", "json", "--allowedTools", "Bash(true)")
	res := parseClaude(t, r)
	if r.exit != 0 || res.Result != "counted" || res.Usage.InputTokens != 2000 || res.Usage.OutputTokens != 600 || res.TotalCostUSD != 0.025 {
		t.Errorf("claude exited %d: %+v, want two answers of 1000 and 300 tokens, $0.025", r.exit, res)
	}
}

// TestClaudeRunsFastGate: claude plays happy's implementer of task 1 and
// runs the fast gate through Bash when it is allowed, and is refused it
// (permission_denials, still exit 0) when it is not.
func TestClaudeRunsFastGate(t *testing.T) {
	claude := RequireClient(t, "claude")
	t.Parallel()
	for _, allowed := range []bool{true, false} {
		t.Run(map[bool]string{true: "allowed", false: "denied"}[allowed], func(t *testing.T) {
			t.Parallel()
			s := startServer(t, Options{Scenario: scenarios + "/happy"})
			env := hermeticEnv(t, s.ClaudeEnv()...)
			dir, out := sampleRepo(t, env)
			argv := []string{claude, "-p", "--output-format", "json", "--permission-mode", "acceptEdits"}
			if allowed {
				argv = append(argv, "--allowedTools", "Bash(sh test/unit.sh)")
			}
			r := runClient(t, dir, env, renderPrompt(t, "implementer", out), argv...)
			res := parseClaude(t, r)
			if r.exit != 0 || res.IsError {
				t.Fatalf("claude exited %d: %+v\nstderr:\n%s", r.exit, res, r.stderr)
			}
			c := Conds{"implementer", "3", "1", ""}
			if got, want := readFile(t, filepath.Join(dir, "greet.sh")), block(t, "happy", c, Write, "greet.sh"); got != want {
				t.Errorf("greet.sh = %q, want %q", got, want)
			}
			if got, want := readFile(t, out), block(t, "happy", c, Report, ""); got != want {
				t.Errorf("report = %q, want %q", got, want)
			}
			gate := answer(s, "command", "sh test/unit.sh")
			switch {
			case gate == nil:
				t.Fatalf("no answer to the Bash call in %+v", s.Requests())
			case allowed && (gate.IsError || !strings.Contains(gate.Text, "ok: greet.sh")):
				t.Errorf("sh test/unit.sh answered %+v, want its output", gate)
			case allowed && len(res.PermissionDenials) != 0:
				t.Errorf("denied %+v", res.PermissionDenials)
			case !allowed && (!gate.IsError || gate.Text != "This command requires approval"):
				t.Errorf("sh test/unit.sh answered %+v, want a refusal", gate)
			case !allowed && (len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" ||
				res.PermissionDenials[0].ToolInput["command"] != "sh test/unit.sh"):
				t.Errorf("permission_denials %+v, want the Bash call", res.PermissionDenials)
			}
		})
	}
}

// codexEvents are the events codex exec --json printed, by type.
func codexEvents(t *testing.T, r run) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("codex printed %q, not JSON lines: %v\nstderr:\n%s", line, err, r.stderr)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestCodex: codex plays happy's design writer and implementer of task 1
// in its workspace-write sandbox, its exec_command making the files and
// running the fast gate.
func TestCodex(t *testing.T) {
	codex := RequireClient(t, "codex")
	t.Parallel()
	for _, template := range []string{"design-writer", "implementer"} {
		t.Run(template, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, Options{Scenario: scenarios + "/happy"})
			codexEnv, err := s.WriteCodexHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			env := hermeticEnv(t, codexEnv...)
			dir, out := sampleRepo(t, env)
			last := filepath.Join(t.TempDir(), "last-message")
			r := runClient(t, dir, env, renderPrompt(t, template, out),
				codex, "exec", "--sandbox", "workspace-write", "--json", "--output-last-message", last, "-")
			evs := codexEvents(t, r)
			if r.exit != 0 || evs[len(evs)-1]["type"] != "turn.completed" || readFile(t, last) != DefaultText {
				t.Fatalf("codex exited %d, last message %q:\n%s\nstderr:\n%s", r.exit, readFile(t, last), r.stdout, r.stderr)
			}
			c, file := Conds{"design-writer", "1", "", ""}, "docs/design.md"
			if template == "implementer" {
				c, file = Conds{"implementer", "3", "1", ""}, "greet.sh"
			}
			if got, want := readFile(t, filepath.Join(dir, file)), block(t, "happy", c, Write, file); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
			if got, want := readFile(t, out), block(t, "happy", c, Report, ""); got != want {
				t.Errorf("report = %q, want %q", got, want)
			}
			var commands []string
			for _, ev := range evs {
				if item, _ := ev["item"].(map[string]any); ev["type"] == "item.completed" && item["type"] == "command_execution" {
					commands = append(commands, item["command"].(string))
					if item["exit_code"] != 0.0 {
						t.Errorf("command failed: %v", item)
					}
				}
			}
			if want := map[string]int{"design-writer": 2, "implementer": 3}[template]; len(commands) != want {
				t.Errorf("codex ran %q, want %d commands", commands, want)
			}
			// codex adds up the usage of each answer: 100 and 20 tokens.
			usage, _ := evs[len(evs)-1]["usage"].(map[string]any)
			if n := float64(countModel(s)); usage["input_tokens"] != 100*n || usage["output_tokens"] != 20*n {
				t.Errorf("usage %v after %v answers", usage, n)
			}
			if template == "implementer" {
				if gate := answer(s, "cmd", "sh test/unit.sh"); gate == nil || !strings.Contains(gate.Text, "ok: greet.sh") {
					t.Errorf("the fast gate answered %+v, want its output", gate)
				}
			}
		})
	}
}

// startServer starts a server for a test and closes it after.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.Logf = t.Logf
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestClientsOnAPIErrors: with retries off, an API error ends the session
// at once: claude exits 1 with is_error and api_error_status; codex exits
// 1 with turn.failed and an empty last message. The claude result of a 401
// is kept in testdata/claude-401.json (-update rewrites it).
func TestClientsOnAPIErrors(t *testing.T) {
	claude := RequireClient(t, "claude")
	codex := RequireClient(t, "codex")
	t.Parallel()
	// A section's api-error comes after what goes before it: one Read.
	scenario := filepath.Join(t.TempDir(), "overloaded")
	if err := os.WriteFile(scenario, []byte("[design-writer phase=1]\ntokens 1000 300\nwrite docs/design.md\n# Design\n.\napi-error 529\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		opts   Options
		status int
		claude string // the result, a pattern
		codex  string // turn.failed's message, a pattern
		// Model requests, retries included: claude reads and writes the
		// design before the 529; codex writes it in one command.
		claudeRequests, codexRequests int
	}{
		{"401", Options{APIError: 401}, 401, `^Invalid API key · Fix external API key$`,
			`^unexpected status 401 Unauthorized: Incorrect API key provided: fake\. .*, url: http://127\.0\.0\.1:\d+/v1/responses$`, 1, 1},
		{"529 after a turn", Options{Scenario: scenario}, 529,
			`^API Error: 529 Overloaded\. This is a server-side issue, usually temporary — try again in a moment\. If it persists, check your inference gateway \(127\.0\.0\.1:\d+\)\.$`,
			`^unexpected status 529 <unknown status code>: The engine is currently overloaded, please try again later\., url: http://127\.0\.0\.1:\d+/v1/responses$`, 3, 2},
	}
	for _, c := range cases {
		t.Run("claude "+c.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, c.opts)
			env := hermeticEnv(t, s.ClaudeEnv()...)
			dir, out := sampleRepo(t, env)
			r := runClient(t, dir, env, renderPrompt(t, "design-writer", out), claude, "-p", "--output-format", "json", "--permission-mode", "acceptEdits")
			res := parseClaude(t, r)
			if r.exit != 1 || !res.IsError || res.APIErrorStatus == nil || *res.APIErrorStatus != c.status ||
				!regexp.MustCompile(c.claude).MatchString(res.Result) || r.stderr != "" {
				t.Errorf("claude exited %d: %+v\nstderr:\n%s", r.exit, res, r.stderr)
			}
			if n := countModel(s); n != c.claudeRequests {
				t.Errorf("%d model requests, want %d: claude retried", n, c.claudeRequests)
			}
			if c.status == 401 {
				fixture(t, r.stdout)
			}
		})
		t.Run("codex "+c.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, c.opts)
			codexEnv, err := s.WriteCodexHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			env := hermeticEnv(t, codexEnv...)
			dir, out := sampleRepo(t, env)
			last := filepath.Join(t.TempDir(), "last-message")
			r := runClient(t, dir, env, renderPrompt(t, "design-writer", out),
				codex, "exec", "--sandbox", "workspace-write", "--json", "--output-last-message", last, "-")
			evs := codexEvents(t, r)
			failed := evs[len(evs)-1]
			msg, _ := failed["error"].(map[string]any)["message"].(string)
			if r.exit != 1 || failed["type"] != "turn.failed" || !regexp.MustCompile(c.codex).MatchString(msg) || readFile(t, last) != "" {
				t.Errorf("codex exited %d:\n%s\nstderr:\n%s", r.exit, r.stdout, r.stderr)
			}
			if n := countModel(s); n != c.codexRequests {
				t.Errorf("%d model requests, want %d: codex retried", n, c.codexRequests)
			}
		})
	}
}

// countModel is how many model requests the server answered.
func countModel(s *Server) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Client != "" {
			n++
		}
	}
	return n
}

// fixture compares claude's JSON result of a 401 with the one kept in
// testdata, but for what changes from run to run.
func fixture(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", "claude-401.json")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	stable := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"session_id", "uuid", "duration_ms", "duration_api_ms"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s has no %s", path, k)
			}
			delete(m, k)
		}
		return m
	}
	if want := stable(readFile(t, path)); !equalJSON(stable(got), want) {
		t.Errorf("claude's 401 result is now\n%s\nnot as in %s (-update rewrites it)", got, path)
	}
}

// TestClaudeAgentTool drives a real Claude Code session whose model calls
// the Agent tool in each way the hook must handle, one turn each: a plain
// call, a crucible pointer prompt, four calls at once, an unknown
// subagent_type, and a call run in the background. The subagents' own
// conversations are directive prompts too: each writes its file. Hooks
// record every payload.
func TestClaudeAgentTool(t *testing.T) {
	claude := RequireClient(t, "claude")
	t.Parallel()
	s := startServer(t, Options{})
	env := hermeticEnv(t, s.ClaudeEnv()...)
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	hooks := t.TempDir()
	record := map[string]any{"type": "command", "command": `cat > "$(mktemp ` + hooks + `/hook.XXXXXX)"`}
	settings := map[string]any{"hooks": map[string]any{}}
	for _, event := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop", "SessionEnd"} {
		settings["hooks"].(map[string]any)[event] = []any{map[string]any{"matcher": "*", "hooks": []any{record}}}
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(mustJSON(t, settings)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, _ := sampleRepo(t, env)

	agent := func(description, prompt string, extra ...any) map[string]any {
		in := map[string]any{"description": description, "prompt": prompt, "subagent_type": "general-purpose"}
		for i := 0; i < len(extra); i += 2 {
			in[extra[i].(string)] = extra[i+1]
		}
		return map[string]any{"name": "Agent", "input": in}
	}
	writes := func(file string) string { // a subagent's prompt: write file
		return "Write " + file + ".\n" + FakeToolsPrefix + mustJSON(t, []any{map[string]any{"name": "Write",
			"input": map[string]any{"file_path": filepath.Join(dir, file), "content": "written by the " + file + " agent\n"}}})
	}
	var four []any
	for i := range 4 {
		n := string(rune('1' + i))
		four = append(four, agent("plan writer "+n, writes("par-"+n+".txt")))
	}
	turns := [][]any{
		{agent("plan writer", writes("plain.txt"))},
		{agent("plan writer", "Read your full instructions at /tmp/crucible-dispatch-probe/2-plan-writer.md")},
		four,
		{agent("plan writer", "nobody plays this", "subagent_type", "no-such-agent")},
		{agent("background writer", writes("bg.txt"), "run_in_background", true)},
	}
	var promptText strings.Builder
	promptText.WriteString("Dispatch the plan writers.\n")
	for _, calls := range turns {
		promptText.WriteString(FakeToolsPrefix + mustJSON(t, calls) + "\n")
	}
	r := runClient(t, dir, env, promptText.String(), claude, "-p", "--output-format", "json", "--permission-mode", "acceptEdits")
	res := parseClaude(t, r)
	if r.exit != 0 || res.IsError || res.Result != DefaultText {
		t.Fatalf("claude exited %d: %+v\nstderr:\n%s", r.exit, res, r.stderr)
	}
	// claude -p waited for the background agent before it exited.
	for _, f := range []string{"plain.txt", "par-1.txt", "par-2.txt", "par-3.txt", "par-4.txt", "bg.txt"} {
		if got := readFile(t, filepath.Join(dir, f)); got != "written by the "+f+" agent\n" {
			t.Errorf("%s = %q", f, got)
		}
	}

	files, err := filepath.Glob(filepath.Join(hooks, "hook.*"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var launched, unknown bool
	for _, f := range files {
		var p struct {
			Event    string         `json:"hook_event_name"`
			Tool     string         `json:"tool_name"`
			Input    map[string]any `json:"tool_input"`
			Response map[string]any `json:"tool_response"`
			Error    string         `json:"error"`
		}
		if err := json.Unmarshal([]byte(readFile(t, f)), &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		count[p.Event+" "+p.Tool]++
		switch {
		case p.Event == "PostToolUse" && p.Tool == "Agent" && p.Input["run_in_background"] == true:
			launched = p.Response["status"] == "async_launched" && p.Response["isAsync"] == true
		case p.Event == "PostToolUse" && p.Tool == "Agent" && p.Response["status"] != "completed":
			t.Errorf("PostToolUse of %v: %v", p.Input, p.Response)
		case p.Event == "PostToolUseFailure":
			unknown = p.Tool == "Agent" && strings.HasPrefix(p.Error, "Agent type 'no-such-agent' not found.")
		}
	}
	want := map[string]int{"PreToolUse Agent": 8, "PostToolUse Agent": 7, "PostToolUseFailure Agent": 1,
		"PreToolUse Write": 6, "PostToolUse Write": 6, "SubagentStop ": 7, "SessionEnd ": 1}
	if !equalJSON(count, want) || !launched || !unknown {
		t.Errorf("hooks ran %v (background launched %v, unknown type failed %v), want %v", count, launched, unknown, want)
	}

	// The server saw the main conversation's six turns, the notification
	// of the background agent's end answered too, and the subagents'.
	modes := map[string]int{}
	for _, r := range s.Requests() {
		if r.Client != "" {
			modes[r.Mode]++
		}
	}
	if modes["fake-tools"] != 7+6*2 || modes["plain"] != 1 {
		t.Errorf("model requests by mode %v, want 19 fake-tools (7 of the session, 2 by each writer) and 1 plain (the pointer)", modes)
	}
}
