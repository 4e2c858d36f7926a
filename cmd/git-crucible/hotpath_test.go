package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// runApp runs args through the full command-line app only.
func runApp(args []string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	app := newApp(strings.NewReader(""), &out, &errb)
	code = report(&errb, app.RunContext(context.Background(), permuteArgs(app, args)))
	return code, out.String(), errb.String()
}

// runAll runs args as main does, hot path first.
func runAll(args []string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestHotPathMatchesApp: whatever the hot path handles, it answers exactly
// as the app would; what it does not handle falls through to the app.
func TestHotPathMatchesApp(t *testing.T) {
	t.Chdir(gittest.Init(t))
	for _, args := range [][]string{
		{"start", "hot", "--id", "build-20261122-100000-hot001"},
		{"ledger", "begin", "1"},
		{"ledger", "skip", "1", "--reason", "r"},
	} {
		if code, _, stderr := runAll(append([]string{"git-crucible"}, args...)); code != 0 {
			t.Fatalf("%v: %d %s", args, code, stderr)
		}
	}
	cases := []struct {
		args    []string
		handled bool
	}{
		{[]string{"ledger", "check"}, true},
		{[]string{"ledger", "check", "--quiet"}, true},
		{[]string{"ledger", "check", "-q", "1"}, true},
		{[]string{"ledger", "check", "2"}, true},
		{[]string{"ledger", "check", "design", "--json"}, true},
		{[]string{"ledger", "check", "--pipeline", "build-20261122-100000-hot001", "3"}, true},
		{[]string{"ledger", "check", "--pipeline=build-20261122", "plan"}, true},
		{[]string{"ledger", "check", "-p", "nope"}, true},
		{[]string{"ledger", "check", "9"}, false},
		{[]string{"ledger", "check", "1", "2"}, false},
		{[]string{"ledger", "check", "--help"}, false},
		{[]string{"ledger", "check", "--quiet=false"}, false},
		{[]string{"ledger", "check", "--bogus"}, false},
	}
	for _, c := range cases {
		args := append([]string{"git-crucible"}, c.args...)
		var out, errb bytes.Buffer
		_, handled := hotPath(args, &out, &errb)
		if handled != c.handled {
			t.Errorf("%v: handled = %v, want %v", c.args, handled, c.handled)
		}
		code, stdout, stderr := runAll(args)
		wantCode, wantOut, wantErr := runApp(args)
		if code != wantCode || stdout != wantOut || stderr != wantErr {
			t.Errorf("%v:\nrun: %d %q %q\napp: %d %q %q", c.args, code, stdout, stderr, wantCode, wantOut, wantErr)
		}
	}
}
