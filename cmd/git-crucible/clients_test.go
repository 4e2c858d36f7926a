package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-crucible/git-crucible/internal/fakemodel"
)

// TestClients runs the scenarios of testdata/clients: the real claude and
// codex, installed from the npm registry, play every role of build and
// run with their built-in access, driven by the fake model server on
// 127.0.0.1. Without the clients the test is skipped, naming the command
// that installs them; with CI=true it fails instead.
func TestClients(t *testing.T) {
	fakemodel.RequireClient(t, "claude")
	fakemodel.RequireClient(t, "codex")
	p := scriptParams(filepath.Join("..", "..", "testdata", "clients"), nil, hermeticGit)
	p.Cmds["fakemodel"] = fakeModel
	cond := p.Condition
	p.Condition = func(c string) (bool, error) {
		if c == "root" { // claude refuses to skip its permissions as root
			return os.Geteuid() == 0, nil
		}
		return cond(c)
	}
	testscript.Run(t, p)
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
		opts.Scenario, err = filepath.Abs(filepath.Join("..", "..", "testdata", "agent", "scenarios", args[0]))
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
