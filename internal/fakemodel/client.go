package fakemodel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The client versions the server's wire formats were taken from, and how
// to install them.
const (
	ClaudeVersion  = "2.1.197"
	CodexVersion   = "0.171.0"
	InstallCommand = "npm install -g @anthropic-ai/claude-code@" + ClaudeVersion + " @openai/codex@" + CodexVersion
)

// ClaudeEnv is the environment that points claude at the server, to add
// to one that gives claude a HOME of the test's and none of the
// developer's settings (WithoutClientEnv): an API key, so that it never
// asks to log in; no traffic but the model's (CLAUDE_CODE_DISABLE_
// NONESSENTIAL_TRAFFIC alone keeps it off the network; the others say so
// to each feature); no retries, so that an API error fails at once
// instead of after ten backed-off attempts (3 minutes for a 401 or 529).
func (s *Server) ClaudeEnv() []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + s.URL(),
		"ANTHROPIC_API_KEY=fake",
		// Telemetry, error reports, auto-update checks and feature flags.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"CLAUDE_CODE_DISABLE_AUTO_MEMORY=1",
	}
}

// WriteCodexHome writes a config.toml into dir (made if missing) that
// points codex at the server, and returns the environment codex needs
// with it (CODEX_HOME, the provider's key): no retries, no traffic but
// the model's (plugins, analytics), no feedback or history.
func (s *Server) WriteCodexHome(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := `# fakemodel: codex against the fake model at ` + s.URL() + `
model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "` + s.URL() + `/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
# An API error fails the turn at once, instead of after backed-off retries.
request_max_retries = 0
stream_max_retries = 0

# Plugins would sync a marketplace from github.com at start.
[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"
`
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{"CODEX_HOME=" + dir, "FAKE_OPENAI_KEY=fake"}, nil
}

// WithoutClientEnv is env without the variables that would steer claude
// or codex elsewhere than the server, or make them a child of the
// developer's own session: ANTHROPIC_*, CLAUDE*, OPENAI_*, CODEX_*.
func WithoutClientEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "ANTHROPIC_"), strings.HasPrefix(name, "CLAUDE"),
			strings.HasPrefix(name, "OPENAI_"), strings.HasPrefix(name, "CODEX_"):
		default:
			out = append(out, kv)
		}
	}
	return out
}

var versions sync.Map // program path -> its --version output

// RequireClient is the path of program ("claude" or "codex") on PATH. A
// test that needs it is skipped when it is missing, with the command that
// installs it, unless CI=true, where it fails: CI installs both. With
// -short it is skipped: the everyday subset leaves the real clients out.
func RequireClient(t testing.TB, program string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: the real %s is left out", program)
	}
	path, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not on PATH (CI=true, so this fails instead of skipping): %s", program, InstallCommand)
		}
		t.Skipf("%s is not on PATH; install it with: %s", program, InstallCommand)
	}
	want := map[string]string{"claude": ClaudeVersion, "codex": CodexVersion}[program]
	v, ok := versions.Load(path)
	if !ok {
		out, _ := exec.Command(path, "--version").Output()
		v, _ = versions.LoadOrStore(path, strings.TrimSpace(string(out)))
	}
	if want != "" && !strings.Contains(v.(string), want) {
		t.Logf("%s is %q, not the %s the fake model was made against: if this fails, try %s", path, v, want, InstallCommand)
	}
	return path
}
