package realclients

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/fakemodel"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestReadme runs the commands of the README's "Use it with Claude Code"
// and "Use it with Codex" as a user would, on the sample project: the
// real install.sh, the installed git-crucible (not this test binary), the
// real client playing every role with its built-in access against the
// fake model server; then checks the build (checkBuilt). Two lines cannot run here as
// written: npm install (no network but 127.0.0.1) is checked against the
// installed client's version instead, and the cd goes to the sample.
func TestReadme(t *testing.T) {
	for _, c := range []struct{ section, client string }{
		{"Use it with Claude Code", "claude"},
		{"Use it with Codex", "codex"},
	} {
		t.Run(c.client, func(t *testing.T) {
			t.Parallel()
			client := fakemodel.RequireClient(t, c.client)
			lines := readmeCommands(t, c.section)
			tmp := t.TempDir()
			srv, err := fakemodel.Start(fakemodel.Options{Scenario: filepath.Join("..", "testdata", "agent", "scenarios", "happy")})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			env := readmeEnv(t, tmp, srv)
			project := readmeProject(t, tmp, env)
			root, err := filepath.Abs("..")
			if err != nil {
				t.Fatal(err)
			}
			dir, last := root, ""
			for _, line := range lines {
				switch {
				case strings.HasPrefix(line, "npm install -g "):
					version := line[strings.LastIndexByte(line, '@')+1:]
					out, err := exec.Command(client, "--version").Output()
					if err != nil || !strings.Contains(string(out), version) {
						t.Fatalf("%s: the installed %s is %q (%v), not %s", line, c.client, out, err, version)
					}
				case strings.HasPrefix(line, "cd "):
					dir = project
				default:
					cmd := exec.Command("sh", "-c", line)
					cmd.Dir, cmd.Env = dir, env
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Fatalf("%s (in %s): %v\n%s", line, dir, err, out)
					}
					last = string(out)
				}
			}
			if !regexp.MustCompile(`(?m)^Pipeline build-[0-9-]+-[0-9a-f]+: the four phases are closed$`).MatchString(last) {
				t.Fatalf("the build did not close the four phases:\n%s", last)
			}
			checkBuilt(t, project, env, c.client)
		})
	}
}

// checkBuilt checks the build the README's commands made with client in
// project: a chain that verifies, the goal reached, every dispatch
// completed with what its client said it cost and nothing refused, and
// nothing of the agents' left in the work tree.
func checkBuilt(t *testing.T, project string, env []string, client string) {
	run := func(args ...string) string {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = project, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("git", "crucible", "verify"); !strings.HasPrefix(out, "ok build-") {
		t.Errorf("verify: %s", out)
	}
	if out := run("sh", "greet.sh", "Ada"); out != "hello, Ada\n" {
		t.Errorf("greet.sh Ada: %q", out)
	}
	var entries []pipeline.ManifestEntry
	if err := json.Unmarshal([]byte(run("git", "crucible", "dispatch", "list", "--json")), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) < 16 {
		t.Errorf("%d dispatches, want the 16 of the happy scenario or more", len(entries))
	}
	for _, m := range entries {
		if m.Status != "completed" || m.Usage == nil || m.Usage.Client != client || len(m.Denials) > 0 || m.Usage.InputTokens == 0 {
			t.Errorf("dispatch %d (%s): %s, usage %+v, denials %q", m.Seq, m.Role, m.Status, m.Usage, m.Denials)
		}
		if (m.Usage != nil && m.Usage.CostUSD != nil) != (client == "claude") {
			t.Errorf("dispatch %d: a cost from %s: %+v", m.Seq, client, m.Usage)
		}
	}
	if out := run("git", "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("git status after the build:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(project, ".crucible")); !os.IsNotExist(err) {
		t.Errorf("the agents' directory is left: %v", err)
	}
}

// readmeCommands are the command lines of the first sh block under the
// README's heading section, comments dropped.
func readmeCommands(t *testing.T, section string) []string {
	f, err := os.Open(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	in, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "## "+section:
			in = true
		case in && !block && line == "```sh":
			block = true
		case block && line == "```":
			return lines
		case block:
			if cmd, _, _ := strings.Cut(line, " #"); strings.TrimSpace(cmd) != "" {
				lines = append(lines, strings.TrimSpace(cmd))
			}
		}
	}
	t.Fatalf("README.md has no sh block under ## %s", section)
	return nil
}

// readmeEnv is a user's environment, hermetic: git's, the fake model's for
// both clients, install.sh's GOBIN first on PATH, and Go's own caches,
// so that install.sh builds as fast as it would for the user.
func readmeEnv(t *testing.T, tmp string, srv *fakemodel.Server) []string {
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gittest.GitConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	caches := strings.Fields(string(goEnv))
	bin := filepath.Join(tmp, "bin")
	env := []string{"GOBIN=" + bin, "GOCACHE=" + caches[0], "GOMODCACHE=" + caches[1], "GOPATH=" + caches[2],
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for k, v := range gittest.Env(home) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	codex, err := srv.WriteCodexHome(filepath.Join(tmp, "codex-home"))
	if err != nil {
		t.Fatal(err)
	}
	return append(append(env, srv.ClaudeEnv()...), codex...)
}

// readmeProject is the sample project in a repository of its own.
func readmeProject(t *testing.T, tmp string, env []string) string {
	dir := filepath.Join(tmp, "project")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "agent", "sample"))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "sample"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}
