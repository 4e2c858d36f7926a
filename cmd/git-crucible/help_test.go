package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestHelpRequest(t *testing.T) {
	app := newApp(nil, io.Discard, io.Discard)
	for _, tc := range []struct {
		args string
		path []string
		ok   bool
		err  string
	}{
		{args: "", ok: false},
		{args: "status", ok: false},
		{args: "ledger -h", ok: false}, // -h is the built-in help, always
		{args: "help", ok: true},
		{args: "h", ok: true},
		{args: "--help", ok: true},
		{args: "help ledger", path: []string{"ledger"}, ok: true},
		{args: "help ledger begin", path: []string{"ledger", "begin"}, ok: true},
		{args: "help ledger frob", err: `unknown ledger subcommand "frob"`},
		{args: "ledger --help", path: []string{"ledger"}, ok: true},
		{args: "ledger begin 1 --help", path: []string{"ledger", "begin"}, ok: true},
		{args: "ledger --help begin", path: []string{"ledger"}, ok: true}, // names come first, as permuteArgs takes them
		{args: "ledger begin -- --help", ok: false},
		{args: "start check --help", path: []string{"start"}, ok: true}, // a goal is not a subcommand
	} {
		path, ok, err := helpRequest(app, append([]string{"git-crucible"}, strings.Fields(tc.args)...))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || ok != tc.ok || !reflect.DeepEqual(path, tc.path) {
			t.Errorf("%q: got %q, %v, %v; want %q, %v", tc.args, path, ok, err, tc.path, tc.ok)
		}
	}
}

// TestHelpOnTerminal runs git-crucible on a terminal (script(1) gives it
// one): help and --help show the manual page when man finds it, and the
// built-in help when man is missing, finds no page, or -h asks for it.
func TestHelpOnTerminal(t *testing.T) {
	script, errScript := exec.LookPath("script")
	_, errMan := exec.LookPath("man")
	if errScript != nil || errMan != nil {
		t.Skip("needs script(1) and man")
	}
	self, err := exec.LookPath("git-crucible") // the test binary, put on PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	manpath := t.TempDir()
	if err := os.CopyFS(filepath.Join(manpath, "man1"), os.DirFS(manDir)); err != nil {
		t.Fatal(err)
	}
	const manual, builtin = "git-crucible-ledger - show the gate ledger", "NAME:\r\n   git crucible ledger"
	for _, tc := range []struct {
		name, command, manpath, want string
	}{
		{"help", "git-crucible help ledger begin", manpath, manual},
		{"--help", "git-crucible ledger check --help", manpath, manual},
		{"-h", "git-crucible ledger -h", manpath, builtin},
		{"no page", "git-crucible help ledger", t.TempDir(), builtin},
		{"no man", "PATH=" + filepath.Dir(self) + " git-crucible help ledger", manpath, builtin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(script, "-qec", tc.command, os.DevNull)
			cmd.Env = append(os.Environ(), "MANPATH="+tc.manpath, "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.command, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%s printed, without %q:\n%s", tc.command, tc.want, out)
			}
		})
	}
}
