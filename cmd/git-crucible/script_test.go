package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as git-crucible inside scenarios, so
// `exec git crucible ...` runs the real command through the real git.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-crucible": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end scenarios in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   filepath.Join("..", "..", "testdata", "script"),
		Setup: hermeticGit,
	})
}

// hermeticGit isolates every scenario from the machine's git set-up and
// pins identities and dates, so outputs are exact.
func hermeticGit(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
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
	} {
		env.Setenv(k, v)
	}
	return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644)
}
