// Package gittest makes hermetic git repositories for tests: no user or
// system config, fixed identities and dates.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment of a hermetic git whose home is home: no user or
// system config, fixed identities and dates. An empty value means unset.
func Env(home string) map[string]string {
	return map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":     "Ada Tester",
		"GIT_AUTHOR_EMAIL":    "ada@example.com",
		"GIT_COMMITTER_NAME":  "Ada Tester",
		"GIT_COMMITTER_EMAIL": "ada@example.com",
		"GIT_AUTHOR_DATE":     "2026-11-22T10:00:00Z",
		"GIT_COMMITTER_DATE":  "2026-11-22T10:00:00Z",
		"GIT_TERMINAL_PROMPT": "0",
		// A -race binary sleeps a second at exit by default, and the test
		// binary runs as git-crucible hundreds of times.
		"GORACE":                  "atexit_sleep_ms=0",
		"GIT_DIR":                 "",
		"GIT_WORK_TREE":           "",
		"GIT_COMMON_DIR":          "",
		"GIT_INDEX_FILE":          "",
		"GIT_OBJECT_DIRECTORY":    "",
		"GIT_CEILING_DIRECTORIES": "",
	}
}

// GitConfig is the global config a hermetic home starts with.
const GitConfig = "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"

// Hermetic points git at an empty home and pins identities and dates for
// the rest of the test.
func Hermetic(t testing.TB) {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(GitConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range Env(home) {
		t.Setenv(k, v)
		if v == "" {
			os.Unsetenv(k)
		}
	}
}

// Init creates a repository with one commit on main and returns its path.
func Init(t testing.TB) string {
	t.Helper()
	Hermetic(t)
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	return dir
}

// Git runs git in dir and returns its trimmed stdout, failing the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return GitInput(t, dir, "", args...)
}

// GitInput is Git with input on git's standard input.
func GitInput(t testing.TB, dir, input string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// Chdir changes into dir for the rest of the test.
func Chdir(t testing.TB, dir string) {
	t.Helper()
	t.Chdir(dir)
}
