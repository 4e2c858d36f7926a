package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-crucible/git-crucible/cmd/internal/hookcli"
	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// The scenarios' own commands, besides testscript's:
//
//	rc N COMMAND [ARGS...]   exec COMMAND, and check it exits N (`! exec`
//	                         takes any failure)
//	agent [-role ROLE] [-test COMMAND] SCENARIO
//	                         configure the scripted agent (testdata/agent)
//	                         playing SCENARIO, replacing the one before, for
//	                         ROLE (default: every role), and crucible.test
//	                         (default the sample project's sh test/unit.sh;
//	                         '' leaves it as it is)
//	gitdaemon DIR PORTVAR    serve DIR with git daemon on 127.0.0.1
//	pathonly DIR COMMAND...  PATH holding only the named commands
//	reportcheck PAGE MODEL METRICS [...]   check a report page (report_test.go)

// TestMain lets the test binary act as git-crucible and git-crucible-hook
// inside scenarios, so `exec git crucible ...` runs the real command
// through the real git, and the installed hooks run the real hook binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-crucible":      func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"git-crucible-hook": func() { os.Exit(hookcli.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// scriptDir holds the end-to-end scenarios.
var scriptDir = filepath.Join("..", "..", "testdata", "script")

// TestScripts runs the end-to-end scenarios in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(scriptDir, nil, hermeticGit))
}

// TestScriptsSHA256 runs again, in SHA-256 repositories (git init's
// default made so by GIT_DEFAULT_HASH), the scenarios that write and read
// objects and refs each in their own way: the engines' chains and commits,
// replays, syncs over file and git:// remotes, hooks, imports and exports,
// checkpoints and gc. The others differ from these only in messages and
// rules, which the hash does not reach; running all twice would cost CI
// more than it finds.
func TestScriptsSHA256(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the scenarios run in SHA-1 repositories only")
	}
	var files []string
	for _, name := range sha256Scenarios {
		files = append(files, filepath.Join(scriptDir, name+".txtar"))
	}
	testscript.Run(t, scriptParams("", files, func(env *testscript.Env) error {
		env.Setenv("GIT_DEFAULT_HASH", "sha256")
		return hermeticGit(env)
	}))
}

// sha256Scenarios are the scenarios TestScriptsSHA256 runs.
var sha256Scenarios = []string{
	"build", "replay", "run", "verify_commits", "verify_commits_fix", "verify_commits_merges", // engines
	"sync", "sync_daemon", "push_verify", "push_history", // remotes
	"hooks_enforce", "hooks_receive", "hooks_processes", "hooks_note_queue", "gitcitizen", // hooks (packed tips read in process, the notes queue), worktrees, GIT_DIR
	"import_roundtrip", "export", "dispatch", "walk", // file formats, dispatch records
	"checkpoint_restore", "checkpoint_faults", "gc_auto", // shadow repository, gc
	"report", // reads trees, commits and the fast-gate cache by tree
}

func scriptParams(dir string, files []string, setup func(*testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir:   dir,
		Files: files,
		Setup: func(env *testscript.Env) error {
			man, err := filepath.Abs(manDir)
			if err != nil {
				return err
			}
			env.Setenv("MANPAGES", man) // the manual as install.sh installs it
			scripted, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agent", "scripted"))
			if err != nil {
				return err
			}
			env.Setenv("SCRIPTED", scripted) // the scripted agent, for build's scenarios
			hooks, err := filepath.Abs(filepath.Join("..", "..", "interop", "testdata", "claude-hooks"))
			if err != nil {
				return err
			}
			env.Setenv("CLAUDE_HOOKS", hooks) // real Claude Code hook payloads
			// The scripted agent as claude would run it, reporting a price: see testdata/agent/README.md.
			env.Setenv("FAKECLAUDE", filepath.Join(filepath.Dir(scripted), "fakeclaude"))
			return setup(env)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"rc": rc, "agent": scriptedAgent, "gitdaemon": gitDaemon, "pathonly": pathOnly, "reportcheck": reportCheck,
		},
		Condition: func(cond string) (bool, error) {
			if cond == "crucible-on-gui-path" { // this machine installed it where GUI clients look
				return hooks.Find(hooks.GUIPath, hooks.HookBinary) != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	}
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

// rc runs a command as exec does, its output for stdout and stderr to
// check, and fails unless it exits N: a failure's exit code is part of
// what git-crucible promises.
func rc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: rc N COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("usage: rc N COMMAND [ARGS...]: N is %q", args[0])
	}
	if got, ended := exitStatus(ts.Exec(args[1], args[2:]...)); got != want {
		ts.Fatalf("%s, want exit status %d", ended, want)
	}
}

// exitStatus is the exit status of a command ts.Exec ran, with how it
// ended in words; -1 when it did not exit (a signal, not found).
func exitStatus(err error) (int, string) {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, "exit status 0"
	case errors.As(err, &exit):
		return exit.ExitCode(), err.Error()
	}
	return -1, err.Error()
}

// scriptedAgent configures, in the repository at hand, the scripted agent
// playing a scenario (a name in testdata/agent/scenarios, or a path): its
// command replaces the one set before, so that a scenario can switch.
func scriptedAgent(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: agent [-role ROLE] [-test COMMAND] SCENARIO"
	flags := flag.NewFlagSet("agent", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	role := flags.String("role", "default", "")
	test := flags.String("test", "sh test/unit.sh", "")
	if neg || flags.Parse(args) != nil || flags.NArg() != 1 {
		ts.Fatalf(usage)
	}
	config := func(args ...string) {
		ts.Check(ts.Exec("git", append([]string{"config"}, args...)...))
	}
	// git config exits 5 when there is nothing to unset: a first agent.
	if code, ended := exitStatus(ts.Exec("git", "config", "--unset-all", "crucible.agent.scripted.command")); code != 0 && code != 5 {
		ts.Fatalf("git config --unset-all crucible.agent.scripted.command: %s", ended)
	}
	config("crucible.agent.scripted.kind", "command")
	for _, word := range []string{"sh", ts.Getenv("SCRIPTED"), "--scenario", flags.Arg(0)} {
		config("--add", "crucible.agent.scripted.command", word)
	}
	config("crucible.role."+*role, "scripted")
	if *test != "" {
		config("crucible.test", *test)
	}
}

// gitDaemon serves the repositories under DIR with git daemon on
// 127.0.0.1 (pushes allowed), sets PORTVAR to its port once it listens, and
// stops it — with its children, which hold the output pipes — when the
// scenario ends.
func gitDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gitdaemon DIR PORTVAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ts.Check(l.Close())
	dir := ts.MkAbs(args[0])
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--base-path="+dir, "--listen=127.0.0.1", "--port="+port, dir)
	cmd.Dir = dir
	for _, kv := range []string{"HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "PATH"} {
		cmd.Env = append(cmd.Env, kv+"="+ts.Getenv(kv))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ts.Check(cmd.Start())
	ts.Defer(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			ts.Check(c.Close())
			break
		}
		if time.Since(start) > 30*time.Second {
			ts.Fatalf("git daemon does not listen on port %s: %v", port, err)
		}
	}
	ts.Setenv(args[1], port)
}

// pathOnly makes DIR hold links to the named commands, found on PATH, and
// PATH only DIR: what a machine without the other commands (man) has.
func pathOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: pathonly DIR COMMAND...")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for _, name := range args[1:] {
		found := ""
		for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
			if p := filepath.Join(d, name); found == "" && isExecutable(p) {
				found = p
			}
		}
		if found == "" {
			ts.Fatalf("%s is not on PATH", name)
		}
		ts.Check(os.Symlink(found, filepath.Join(dir, name)))
	}
	ts.Setenv("PATH", dir)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
