package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
)

var goodNotes = []gitext.ConfigEntry{
	{Key: "notes.rewriteref", Value: "refs/notes/commits"},
	{Key: "notes.rewriteref", Value: "refs/notes/crucible/*"},
	{Key: "notes.rewritemode", Value: "concatenate"},
	{Key: "notes.rewritemode", Value: "cat_sort_uniq"}, // the last one wins
}

// doctorFixture is a repository's hooks directory, a bin directory with
// git-crucible and git-crucible-hook in it, and an empty one (a GUI
// client's PATH without them).
type doctorFixture struct {
	hooks, bin, binary, hookBinary, empty string
}

func newDoctorFixture(t *testing.T) doctorFixture {
	root := t.TempDir()
	f := doctorFixture{hooks: filepath.Join(root, "repo", ".git", "hooks"), bin: filepath.Join(root, "bin"), empty: filepath.Join(root, "empty")}
	f.binary = filepath.Join(f.bin, "git-crucible")
	f.hookBinary = filepath.Join(f.bin, "git-crucible-hook")
	for _, d := range []string{f.hooks, f.bin, f.empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, f.binary, "#!/bin/sh\n", 0o755)
	write(t, f.hookBinary, "#!/bin/sh\n", 0o755)
	return f
}

func (f doctorFixture) setup() Setup {
	return Setup{Dir: f.hooks, DefaultDir: f.hooks, Config: goodNotes, PATH: f.bin, GUIPath: f.empty, Binary: f.binary}
}

func TestDoctorAllGood(t *testing.T) {
	f := newDoctorFixture(t)
	if _, err := Install(f.hooks, Defaults(false), f.hookBinary, Refuse); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.hooks, "pre-push.crucible-chained"), "#!/bin/sh\n", 0o755)
	sameFindings(t, doctor(t, f.setup()), []Finding{
		{OK, "pre-commit", "git-crucible's hook", ""},
		{OK, "commit-msg", "git-crucible's hook", ""},
		{OK, "post-commit", "git-crucible's hook", ""},
		{OK, "post-rewrite", "git-crucible's hook", ""},
		{OK, "pre-push", "git-crucible's hook, running pre-push.crucible-chained first", ""},
		{OK, "notes.rewriteRef", "includes refs/notes/crucible/*", ""},
		{OK, "notes.rewriteMode", "is cat_sort_uniq", ""},
		{OK, "PATH", "git-crucible is " + f.binary, ""},
		{OK, "GUI PATH", "git-crucible-hook is not on a GUI client's PATH (" + f.empty + "); the hooks fall back to " + f.hookBinary, ""},
	})
	// On a GUI client's PATH, the fallback does not matter.
	s := f.setup()
	s.GUIPath = f.empty + ":" + f.bin
	got := doctor(t, s)
	if last := got[len(got)-1]; last != (Finding{OK, "GUI PATH", "a GUI client's PATH (" + s.GUIPath + ") has git-crucible-hook: " + f.hookBinary, ""}) {
		t.Fatalf("%+v", last)
	}
}

// doctor runs Doctor, failing the test on an error.
func doctor(t *testing.T, s Setup) []Finding {
	t.Helper()
	got, err := Doctor(s)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameFindings(t *testing.T, got, want []Finding) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings\n%s\nwant\n%s", show(got), show(want))
	}
}

func show(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(string(f.Severity) + " | " + f.Topic + " | " + f.Message + " | " + f.Hint + "\n")
	}
	return b.String()
}

func TestDoctorProblems(t *testing.T) {
	f := newDoctorFixture(t)
	if _, err := Install(f.hooks, []string{"commit-msg", "post-commit", "post-rewrite"}, "/gone/git-crucible-hook", Refuse); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.hooks, "pre-commit"), "#!/bin/sh\ncall_lefthook run \"pre-commit\" \"$@\"\n", 0o755)
	if err := os.Chmod(filepath.Join(f.hooks, "post-rewrite"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.hooks, "post-commit"), "#!/bin/sh\n# git-crucible hook v0\n", 0o755)
	s := f.setup()
	s.PATH = f.empty
	s.Config = []gitext.ConfigEntry{{Key: "notes.rewriteref", Value: "refs/notes/commits"}}
	sameFindings(t, doctor(t, s), []Finding{
		{Error, "pre-commit", "lefthook's hook that does not run git-crucible", "git crucible hooks install --chain pre-commit"},
		{OK, "commit-msg", "git-crucible's hook", ""},
		{Warning, "post-commit", "git-crucible's hook is not the one this version writes", "git crucible hooks install post-commit"},
		{Error, "post-rewrite", "git-crucible's hook is not executable, so git does not run it", "git crucible hooks install post-rewrite"},
		{Error, "pre-push", "not installed", "git crucible hooks install pre-push"},
		{Warning, "notes.rewriteRef", "does not include refs/notes/crucible/*: provenance notes are lost when commits are amended or rebased", "git config --add notes.rewriteRef 'refs/notes/crucible/*'"},
		{Warning, "notes.rewriteMode", "is concatenate, not cat_sort_uniq: provenance lines are duplicated or lost when commits are squashed", "git config notes.rewriteMode cat_sort_uniq"},
		{Warning, "PATH", "git-crucible is not on PATH; 'git crucible' does not work", `export PATH="` + f.bin + `:$PATH"   (in your shell's profile)`},
		{Error, "GUI PATH", "git-crucible-hook is not on a GUI client's PATH (" + f.empty + "), and the hooks' fallback /gone/git-crucible-hook does not exist: the hooks refuse every commit from a GUI client",
			"git crucible hooks install   (records " + f.hookBinary + " as the fallback)"},
	})
}

func TestDoctorNothingInstalled(t *testing.T) {
	f := newDoctorFixture(t)
	write(t, filepath.Join(f.hooks, "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
	got := doctor(t, f.setup())
	if got[0] != (Finding{Error, "hooks", "git-crucible's hooks are not installed in " + f.hooks, "git crucible hooks install"}) || len(got) != 4 {
		t.Fatalf("\n%s", show(got))
	}
	// A hook of one's own that runs git-crucible counts as installed.
	write(t, filepath.Join(f.hooks, "pre-commit"), "#!/bin/sh\n"+ManualLine("pre-commit")+"\n", 0o755)
	got = doctor(t, f.setup())
	if got[0] != (Finding{OK, "pre-commit", "your own hook, which runs git-crucible", ""}) || got[1].Message != "not installed" {
		t.Fatalf("\n%s", show(got))
	}
}

func TestDoctorHooksPath(t *testing.T) {
	f := newDoctorFixture(t)
	husky := filepath.Join(filepath.Dir(filepath.Dir(f.hooks)), ".husky", "_")
	if err := os.MkdirAll(husky, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(husky, "pre-commit"), "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n", 0o755)
	if _, err := Install(f.hooks, Defaults(false), f.hookBinary, Refuse); err != nil {
		t.Fatal(err)
	}
	s := f.setup()
	s.Dir = husky
	s.HooksPath = &gitext.ConfigEntry{Key: "core.hookspath", Value: ".husky/_", Scope: "local", Origin: "file:.git/config"}
	got := doctor(t, s)
	want := Finding{Error, "core.hooksPath",
		`core.hooksPath is ".husky/_" (local config, file:.git/config), husky's: git runs hooks from ` + husky + " only, and git-crucible's are not there (those in " + f.hooks + " no longer run)",
		"git crucible hooks install --hooks-path   (or, to call git-crucible from your own hooks: git crucible hooks install --manual)"}
	if got[0] != want || len(got) != 4 { // then notes and PATH; no GUI check without our hooks
		t.Fatalf("\n%s", show(got))
	}
	// Installed there: fine, and the hints to fix a hook say --hooks-path.
	if _, err := Install(husky, []string{"pre-commit"}, f.binary, Chain); err != nil {
		t.Fatal(err)
	}
	got = doctor(t, s)
	if got[0] != (Finding{OK, "core.hooksPath", `core.hooksPath is ".husky/_" (local config, file:.git/config), husky's; git-crucible's hooks are there`, ""}) ||
		got[1] != (Finding{OK, "pre-commit", "git-crucible's hook, running pre-commit.crucible-chained first", ""}) ||
		got[2].Hint != "git crucible hooks install --hooks-path commit-msg" {
		t.Fatalf("\n%s", show(got))
	}
}

func TestDoctorBare(t *testing.T) {
	f := newDoctorFixture(t)
	if _, err := Install(f.hooks, []string{"pre-receive"}, f.hookBinary, Refuse); err != nil {
		t.Fatal(err)
	}
	s := f.setup()
	s.Bare, s.Config = true, nil // notes are not checked: nothing is rewritten there
	got := doctor(t, s)
	if len(got) != 3 || got[0] != (Finding{OK, "pre-receive", "git-crucible's hook", ""}) || got[1].Topic != "PATH" || got[2].Topic != "GUI PATH" {
		t.Fatalf("\n%s", show(got))
	}
}

func TestFind(t *testing.T) {
	f := newDoctorFixture(t)
	write(t, filepath.Join(f.empty, "git-crucible"), "not executable", 0o644)
	if got := Find(f.empty+"::"+f.bin, "git-crucible"); got != f.binary {
		t.Fatalf("Find = %q", got)
	}
	if got := Find(f.empty, "git-crucible"); got != "" {
		t.Fatalf("Find = %q", got)
	}
}

// TestDoctorClaude: Claude Code's hook entries are checked in a work tree
// that has .claude, and in each settings file that has some of ours.
func TestDoctorClaude(t *testing.T) {
	const topic = "claude-code"
	installed := func(t *testing.T, top, file string) {
		if _, err := InstallClaude(filepath.Join(top, file)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, top string)
		want  []Finding
	}{
		{"no .claude", func(*testing.T, string) {}, nil},
		{".claude, no entries", func(t *testing.T, top string) {
			write(t, filepath.Join(top, ".claude", "settings.local.json"), `{"permissions":{}}`, 0o644)
		}, []Finding{{Warning, topic, "Claude Code is used here (.claude/), but its hook entries are not installed: its Agent calls are not recorded",
			"git crucible hooks install --claude   (or --claude-local: in .claude/settings.local.json, for you alone)"}}},
		{"installed", func(t *testing.T, top string) { installed(t, top, ClaudeProjectSettings) },
			[]Finding{{OK, topic, ".claude/settings.json runs 'git crucible hook claude': Claude Code's Agent calls are recorded", ""}}},
		{"installed for you alone", func(t *testing.T, top string) { installed(t, top, ClaudeLocalSettings) },
			[]Finding{{OK, topic, ".claude/settings.local.json runs 'git crucible hook claude': Claude Code's Agent calls are recorded", ""}}},
		{"outdated", func(t *testing.T, top string) {
			write(t, filepath.Join(top, ".claude", "settings.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"git-crucible hook claude"}]}]}}`, 0o644)
		}, []Finding{{Warning, topic, ".claude/settings.json: Claude Code's hook entries are not the ones this version writes " +
			"(PreToolUse, PostToolUse, PostToolUseFailure, SubagentStop, SessionEnd missing; Stop outdated)", "git crucible hooks install --claude"}}},
		{"not JSON", func(t *testing.T, top string) {
			installed(t, top, ClaudeLocalSettings)
			write(t, filepath.Join(top, ".claude", "settings.json"), `{`, 0o644)
		}, []Finding{
			{Warning, topic, ".claude/settings.json: not valid JSON: line 1, column 2: unexpected end of JSON input; Claude Code's hook entries cannot be checked",
				"fix it, then: git crucible hooks install --claude"},
			{OK, topic, ".claude/settings.local.json runs 'git crucible hook claude': Claude Code's Agent calls are recorded", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			if err := os.MkdirAll(filepath.Join(top, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.name == "no .claude" {
				if err := os.Remove(filepath.Join(top, ".claude")); err != nil {
					t.Fatal(err)
				}
			}
			tt.setup(t, top)
			if got := claudeFindings(top); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("claudeFindings:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	// Doctor asks only in a work tree.
	f := newDoctorFixture(t)
	s := f.setup()
	s.Bare, s.WorkTree = true, t.TempDir()
	if err := os.MkdirAll(filepath.Join(s.WorkTree, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, finding := range doctor(t, s) {
		if finding.Topic == topic {
			t.Errorf("a bare repository's finding: %+v", finding)
		}
	}
}
