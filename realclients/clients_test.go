package realclients

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-crucible/git-crucible/internal/fakemodel"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// bin holds the git-crucible and git-crucible-hook that TestMain builds.
var bin string

// TestMain builds the two binaries once, as install.sh builds them, for
// the scenarios to run behind the real git.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "realclients-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	build := exec.Command("go", "build", "-o", dir, "./cmd/git-crucible", "./cmd/git-crucible-hook")
	build.Dir, build.Stdout, build.Stderr = "..", os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building git-crucible:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestClients runs the scenarios of testdata: the real claude and codex
// play every role of build and run with their built-in access, driven by
// the fake model server on 127.0.0.1, and a Claude Code session is
// recorded by our hooks.
func TestClients(t *testing.T) {
	fakemodel.RequireClient(t, "claude")
	fakemodel.RequireClient(t, "codex")
	scripted, err := filepath.Abs(filepath.Join("..", "testdata", "agent", "scripted"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("SCRIPTED", scripted) // beside the scenarios, for the sample DAG
			home := filepath.Join(env.WorkDir, "home")
			for k, v := range gittest.Env(home) {
				if v != "" {
					env.Setenv(k, v)
				}
			}
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gittest.GitConfig), 0o644)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"fakemodel": fakeModel},
		Condition: func(cond string) (bool, error) {
			if cond == "root" { // claude refuses to skip its permissions as root
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// fakeModel starts a fake model server for the scenario that plays
// SCENARIO (a file of testdata/agent/scenarios, or a path; - for none:
// only prompts of FAKE-TOOLS lines are played), points claude
// and codex at it (their variables set, a CODEX_HOME in $WORK/codex-home),
// and stops it when the scenario ends. --api-error N answers every model
// request with HTTP status N; --tokens IN,OUT is the usage each response
// reports.
//
//	fakemodel [--api-error N] [--tokens IN,OUT] SCENARIO
func fakeModel(ts *testscript.TestScript, neg bool, args []string) {
	usage := func() { ts.Fatalf("usage: fakemodel [--api-error N] [--tokens IN,OUT] SCENARIO") }
	if neg {
		usage()
	}
	var opts fakemodel.Options
	for len(args) > 1 {
		var err error
		switch args[0] {
		case "--api-error":
			opts.APIError, err = strconv.Atoi(args[1])
		case "--tokens":
			in, out, _ := strings.Cut(args[1], ",")
			if opts.InputTokens, err = strconv.Atoi(in); err == nil {
				opts.OutputTokens, err = strconv.Atoi(out)
			}
		default:
			usage()
		}
		ts.Check(err)
		args = args[2:]
	}
	if len(args) != 1 {
		usage()
	}
	opts.Scenario = ts.MkAbs(args[0])
	if args[0] == "-" {
		opts.Scenario = ""
	} else if !strings.Contains(args[0], "/") {
		var err error
		opts.Scenario, err = filepath.Abs(filepath.Join("..", "testdata", "agent", "scenarios", args[0]))
		ts.Check(err)
	}
	srv, err := fakemodel.Start(opts)
	ts.Check(err)
	ts.Defer(srv.Close)
	codex, err := srv.WriteCodexHome(filepath.Join(ts.Getenv("WORK"), "codex-home"))
	ts.Check(err)
	for _, kv := range append(srv.ClaudeEnv(), codex...) {
		k, v, _ := strings.Cut(kv, "=")
		ts.Setenv(k, v)
	}
}
