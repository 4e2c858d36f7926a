package realclients

import (
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

// TestReadme runs the README's quick starts as a user would, in a fresh
// copy of this repository: its install.sh, the installed git-crucible
// (not a binary of the tests), on the sample project, then checks the
// build (checkBuilt). The scripted agent's block runs everywhere, as one
// shell script, exactly as written. The Claude Code and Codex blocks need
// the real client, playing every role with its built-in access against
// the fake model server; two of their lines cannot run here as written:
// npm install (no network but 127.0.0.1) is checked against the
// installed client's version instead, and the cd goes to the sample.
func TestReadme(t *testing.T) {
	t.Run("scripted", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		env := readmeEnv(t, tmp, nil)
		clone := freshCopy(t, tmp, env)
		// The block's last directory is the sample project it made.
		script := readmeBlock(t, "Quick start without a model: the scripted agent") + "\necho \"project=$PWD\"\n"
		cmd := exec.Command("sh", "-e", "-c", script)
		cmd.Dir, cmd.Env = clone, append(env, "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the scripted quick start: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`(?m)^project=(.+)$`).FindStringSubmatch(string(out))
		if m == nil || !closed.Match(out) {
			t.Fatalf("the build did not close the four phases:\n%s", out)
		}
		checkBuilt(t, m[1], env, "")
	})
	for _, c := range []struct{ section, client string }{
		{"Quick start with Claude Code", "claude"},
		{"Quick start with Codex", "codex"},
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
			dir, last := freshCopy(t, tmp, env), ""
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
			if !closed.MatchString(last) {
				t.Fatalf("the build did not close the four phases:\n%s", last)
			}
			checkBuilt(t, project, env, c.client)
		})
	}
}

// closed is the line of a build that closed the four phases.
var closed = regexp.MustCompile(`(?m)^Pipeline build-[0-9-]+-[0-9a-f]+: the four phases are closed$`)

// freshCopy is this repository as a fresh clone of it would be, made
// from the work tree so that what is tested is what is checked out:
// its files that git tracks or would (not ignored), committed in a
// repository of their own.
func freshCopy(t *testing.T, tmp string, env []string) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "clone")
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the work tree: not checked out
		} else if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, dst)
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, env, "init", "-q")
	gitIn(t, dir, env, "add", "-A")
	gitIn(t, dir, env, "commit", "-q", "-m", "a fresh copy")
	return dir
}

// gitIn runs git with args in dir.
func gitIn(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// checkBuilt checks the build the README's commands made with client in
// project: a chain that verifies, the goal reached, every dispatch
// completed with nothing refused and, with a client, what it said it
// cost, and nothing of the agents' left in the work tree.
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
		if m.Status != "completed" || len(m.Denials) > 0 {
			t.Errorf("dispatch %d (%s): %s, denials %q", m.Seq, m.Role, m.Status, m.Denials)
		}
		if client == "" {
			continue // a command agent reports no usage
		}
		if m.Usage == nil || m.Usage.Client != client || m.Usage.InputTokens == 0 {
			t.Errorf("dispatch %d (%s): usage %+v", m.Seq, m.Role, m.Usage)
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
	var lines []string
	for _, line := range strings.Split(readmeBlock(t, section), "\n") {
		if cmd, _, _ := strings.Cut(line, " #"); strings.TrimSpace(cmd) != "" {
			lines = append(lines, strings.TrimSpace(cmd))
		}
	}
	return lines
}

// readmeBlock is the first sh block under the README's heading section,
// as it is written.
func readmeBlock(t *testing.T, section string) string {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## "+section+"\n")
	if ok {
		_, after, ok = strings.Cut(after, "\n```sh\n")
	}
	block, _, closed := strings.Cut(after, "\n```\n")
	if !ok || !closed || strings.Contains(block, "\n## ") {
		t.Fatalf("README.md has no sh block under ## %s", section)
	}
	return block
}

// readmeEnv is a user's environment, hermetic: git's, the fake model's for
// both clients (with srv), install.sh's GOBIN first on PATH, and Go's own caches,
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
	if srv == nil {
		return env // no client
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
	gitIn(t, dir, env, "init", "-q")
	gitIn(t, dir, env, "add", "-A")
	gitIn(t, dir, env, "commit", "-q", "-m", "sample")
	return dir
}
