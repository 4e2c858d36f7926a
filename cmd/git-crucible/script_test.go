package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/internal/gittest"
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
		Condition: func(cond string) (bool, error) {
			if cond == "crucible-on-gui-path" { // this machine installed it where GUI clients look
				return hooks.Find(hooks.GUIPath) != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// hermeticGit isolates every scenario from the machine's git set-up and
// pins identities and dates, so outputs are exact.
func hermeticGit(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range gittest.Env(home) {
		if v != "" { // scenarios start from a minimal environment: nothing to unset
			env.Setenv(k, v)
		}
	}
	return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gittest.GitConfig), 0o644)
}
