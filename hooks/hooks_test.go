package hooks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const bin = "/opt/crucible/bin/git-crucible-hook"

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // whatever the umask
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInspect(t *testing.T) {
	shim := string(Shim("pre-commit", bin))
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  Hook
	}{
		{"missing", func(*testing.T, string) {}, Hook{State: Missing}},
		{"ours", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), shim, 0o755)
		}, Hook{State: Ours, Fallback: bin}},
		{"ours, installed from elsewhere", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), string(Shim("pre-commit", "/it's/here")), 0o755)
		}, Hook{State: Ours, Fallback: "/it's/here"}},
		{"ours, chained", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), shim, 0o755)
			write(t, filepath.Join(dir, "pre-commit.crucible-chained"), "#!/bin/sh\n", 0o755)
		}, Hook{State: OursChained, Fallback: bin, Chained: "pre-commit.crucible-chained"}},
		{"ours, with a backup", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), shim, 0o755)
			write(t, filepath.Join(dir, "pre-commit.crucible-backup"), "#!/bin/sh\n", 0o755)
		}, Hook{State: Ours, Fallback: bin, Backup: "pre-commit.crucible-backup"}},
		{"ours, an older version", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\n# git-crucible hook v0\nexec git crucible hook run pre-commit\n", 0o755)
		}, Hook{State: Outdated}},
		{"ours, version 1 (it ran git-crucible hook run)", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), read(t, filepath.Join("testdata", "v1", "pre-commit")), 0o755)
		}, Hook{State: Outdated, Fallback: "/opt/crucible/bin/git-crucible"}},
		{"ours, not executable", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), shim, 0o644)
		}, Hook{State: Outdated, Fallback: bin, NotExecutable: true}},
		{"ours, for another hook", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), string(Shim("pre-push", bin)), 0o755)
		}, Hook{State: Outdated, Fallback: bin}},
		{"foreign, lefthook", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\r\n\r\nif [ \"$LEFTHOOK\" = \"0\" ]; then\r\n  exit 0\r\nfi\r\ncall_lefthook run pre-commit\r\nexit 0\r\n", 0o755)
		}, Hook{State: Foreign, Tool: "lefthook", Head: []string{"#!/bin/sh", "", `if [ "$LEFTHOOK" = "0" ]; then`, "  exit 0", "fi"}}},
		{"foreign, calling git-crucible", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\nmake lint\ngit-crucible hook run pre-commit -- \"$@\" || exit $?\n", 0o755)
		}, Hook{State: Foreign, RunsCrucible: true, Head: []string{"#!/bin/sh", "make lint", `git-crucible hook run pre-commit -- "$@" || exit $?`}}},
		{"foreign, empty and not executable", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "pre-commit"), "", 0o644)
		}, Hook{State: Foreign, NotExecutable: true}},
		{"foreign, a dangling symbolic link", func(t *testing.T, dir string) {
			if err := os.Symlink("../../scripts/pre-commit", filepath.Join(dir, "pre-commit")); err != nil {
				t.Fatal(err)
			}
		}, Hook{State: Foreign, NotExecutable: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			got, err := Inspect(dir, "pre-commit")
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			want.Name, want.Path = "pre-commit", filepath.Join(dir, "pre-commit")
			for _, p := range []*string{&want.Chained, &want.Backup} {
				if *p != "" {
					*p = filepath.Join(dir, *p)
				}
			}
			got.content, got.sameAsChain, got.sameAsBackup = nil, false, false
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestInspectInHusky(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".husky", "_")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "pre-commit"), "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n", 0o755)
	h, err := Inspect(dir, "pre-commit")
	if err != nil || h.State != Foreign || h.Tool != "husky" {
		t.Fatalf("%+v, %v", h, err)
	}
}

func TestPlan(t *testing.T) {
	foreign := Hook{Name: "pre-push", Path: "/h/pre-push", State: Foreign}
	withChained := foreign
	withChained.Chained = "/h/pre-push.crucible-chained"
	interruptedChain := withChained
	interruptedChain.sameAsChain = true
	withBackup := foreign
	withBackup.Backup = "/h/pre-push.crucible-backup"
	interruptedForce := withBackup
	interruptedForce.sameAsBackup = true
	manual := foreign
	manual.RunsCrucible = true
	cases := []struct {
		name   string
		hook   Hook
		mode   Mode
		action Action
		aside  string
		err    string
	}{
		{"missing", Hook{State: Missing}, Refuse, Installed, "", ""},
		{"missing, --force", Hook{State: Missing}, Force, Installed, "", ""},
		{"ours", Hook{State: Ours}, Refuse, Upgraded, "", ""},
		{"ours chained, --force", Hook{State: OursChained}, Force, Upgraded, "", ""},
		{"outdated", Hook{State: Outdated}, Chain, Upgraded, "", ""},
		{"foreign", foreign, Refuse, "", "", "*hooks.ForeignError"},
		{"foreign, --chain", foreign, Chain, Chained, "/h/pre-push.crucible-chained", ""},
		{"foreign, --force", foreign, Force, Replaced, "/h/pre-push.crucible-backup", ""},
		{"foreign, --chain, a chained hook in the way", withChained, Chain, "", "", "*hooks.AsideError"},
		{"foreign, --chain, interrupted before", interruptedChain, Chain, Chained, "/h/pre-push.crucible-chained", ""},
		{"foreign, --force, a backup in the way", withBackup, Force, "", "", "*hooks.AsideError"},
		{"foreign, --force, interrupted before", interruptedForce, Force, Replaced, "/h/pre-push.crucible-backup", ""},
		{"foreign, --force, a chained hook does not matter", withChained, Force, Replaced, "/h/pre-push.crucible-backup", ""},
		{"foreign running git-crucible", manual, Refuse, Kept, "", ""},
		{"foreign running git-crucible, --chain", manual, Chain, Kept, "", ""},
		{"foreign running git-crucible, --force", manual, Force, Replaced, "/h/pre-push.crucible-backup", ""},
	}
	for _, c := range cases {
		action, aside, err := plan(c.hook, c.mode)
		errType := ""
		if err != nil {
			errType = reflect.TypeOf(err).String()
		}
		if action != c.action || aside != c.aside || errType != c.err {
			t.Errorf("%s: plan = %q, %q, %v; want %q, %q, %s", c.name, action, aside, err, c.action, c.aside, c.err)
		}
	}
}

// TestInstallRefusalChangesNothing: one foreign hook among several stops
// the whole install, and the error names every foreign one.
func TestInstallRefusalChangesNothing(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\necho one\n", 0o755)
	write(t, filepath.Join(dir, "pre-push"), "#!/bin/sh\necho two\n", 0o755)
	_, err := Install(dir, Defaults(false), bin, Refuse)
	var fe *ForeignError
	if !errors.As(err, &fe) || len(fe.Hooks) != 2 || fe.Hooks[0].Name != "pre-commit" || fe.Hooks[1].Name != "pre-push" {
		t.Fatalf("err = %v", err)
	}
	if got := err.Error(); got != "not git-crucible's: pre-commit, pre-push" {
		t.Fatalf("message %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("files: %v", entries)
	}
}

func TestInstallAndUninstall(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "pre-push")
	const theirs = "#!/bin/sh\necho theirs\n"
	write(t, hook, theirs, 0o750)

	// --chain keeps the very file aside; ours runs it.
	res, err := Install(dir, []string{"pre-push"}, bin, Chain)
	if err != nil || len(res) != 1 || res[0].Action != Chained || res[0].State != OursChained {
		t.Fatalf("%+v, %v", res, err)
	}
	if read(t, hook) != string(Shim("pre-push", bin)) || read(t, hook+ChainedSuffix) != theirs {
		t.Fatal("hook or chained hook not as expected")
	}
	if fi, _ := os.Stat(hook + ChainedSuffix); fi.Mode().Perm() != 0o750 {
		t.Fatalf("chained mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(hook); fi.Mode().Perm() != 0o755 {
		t.Fatalf("hook mode %v", fi.Mode())
	}
	// Again: nothing to do. From another binary: rewritten.
	if res, _ = Install(dir, []string{"pre-push"}, bin, Refuse); res[0].Action != Unchanged {
		t.Fatalf("reinstall: %+v", res)
	}
	if res, _ = Install(dir, []string{"pre-push"}, "/elsewhere/git-crucible-hook", Refuse); res[0].Action != Upgraded || res[0].Fallback != "/elsewhere/git-crucible-hook" {
		t.Fatalf("reinstall from elsewhere: %+v", res)
	}
	// Made not executable: rewritten too.
	if err := os.Chmod(hook, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, _ = Install(dir, []string{"pre-push"}, bin, Refuse); res[0].Action != Upgraded || res[0].State != OursChained {
		t.Fatalf("reinstall over -x: %+v", res)
	}

	// Uninstall puts the chained one back.
	res, err = Uninstall(dir, []string{"pre-push", "pre-commit"})
	if err != nil || res[0].Action != Restored || res[0].From != hook+ChainedSuffix || res[0].State != Foreign || res[1].Action != Absent {
		t.Fatalf("%+v, %v", res, err)
	}
	if read(t, hook) != theirs {
		t.Fatal("not restored")
	}
	if _, err := os.Lstat(hook + ChainedSuffix); !os.IsNotExist(err) {
		t.Fatal("chained file left behind")
	}
	if res, _ = Uninstall(dir, []string{"pre-push"}); res[0].Action != LeftAlone || read(t, hook) != theirs {
		t.Fatalf("foreign: %+v", res)
	}

	// --force keeps a backup, and never over another one.
	if res, err = Install(dir, []string{"pre-push"}, bin, Force); err != nil || res[0].Action != Replaced || read(t, hook+BackupSuffix) != theirs {
		t.Fatalf("%+v, %v", res, err)
	}
	write(t, hook, "#!/bin/sh\necho newer\n", 0o755)
	_, err = Install(dir, []string{"pre-push"}, bin, Force)
	var ae *AsideError
	if !errors.As(err, &ae) || ae.Path != hook+BackupSuffix || read(t, hook+BackupSuffix) != theirs {
		t.Fatalf("second --force: %v", err)
	}
	// Chained and backed up: the chained one (the newer) comes back first.
	if _, err = Install(dir, []string{"pre-push"}, bin, Chain); err != nil {
		t.Fatal(err)
	}
	if res, _ = Uninstall(dir, []string{"pre-push"}); res[0].Action != Restored || res[0].From != hook+ChainedSuffix || res[0].Backup != hook+BackupSuffix {
		t.Fatalf("%+v", res)
	}
	if read(t, hook) != "#!/bin/sh\necho newer\n" {
		t.Fatal("wrong hook restored")
	}
	// Ours removed by hand: uninstall still puts the backup back.
	if err := os.Rename(hook, hook+".mine"); err != nil {
		t.Fatal(err)
	}
	if res, _ = Uninstall(dir, []string{"pre-push"}); res[0].Action != Restored || read(t, hook) != theirs {
		t.Fatalf("%+v", res)
	}
	// Plain ours: removed.
	if _, err = Install(dir, []string{"pre-commit"}, bin, Refuse); err != nil {
		t.Fatal(err)
	}
	if res, _ = Uninstall(dir, []string{"pre-commit"}); res[0].Action != Removed || res[0].State != Missing {
		t.Fatalf("%+v", res)
	}
}

// TestInstallResumesChain: a --chain that stopped after linking the hook
// aside and before writing ours goes on when run again.
func TestInstallResumesChain(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "commit-msg")
	write(t, hook, "#!/bin/sh\n", 0o755)
	if err := os.Link(hook, hook+ChainedSuffix); err != nil {
		t.Fatal(err)
	}
	res, err := Install(dir, []string{"commit-msg"}, bin, Chain)
	if err != nil || res[0].State != OursChained || read(t, hook+ChainedSuffix) != "#!/bin/sh\n" {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestShimQuoting(t *testing.T) {
	for _, p := range []string{bin, "/with space/git-crucible", "/it's/git-crucible", "/'/''/x'", "/new\nline/x", "/$HOME/`x`/\\"} {
		got, ours := parseShim(Shim("pre-commit", p))
		if !ours || got != p {
			t.Errorf("parseShim(Shim(%q)) = %q, %v", p, got, ours)
		}
		out, err := exec.Command("sh", "-c", "printf %s "+shQuote(p)).Output()
		if err != nil || string(out) != p {
			t.Errorf("sh reads %q as %q (%v)", shQuote(p), out, err)
		}
	}
	if _, ours := parseShim([]byte("#!/bin/sh\n# not git-crucible hook v1\n")); ours {
		t.Error("a marker inside a line counted")
	}
}

func TestShimIsValidSh(t *testing.T) {
	for _, name := range All() {
		if out, err := exec.Command("sh", "-n", "-c", string(Shim(name, bin))).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
		if got := strings.Contains(string(Shim(name, bin)), "mktemp"); got != TakesStdin(name) {
			t.Errorf("%s copies its input: %v", name, got)
		}
	}
}

// FuzzParseShim: any file is read without a panic, and any fallback path
// written into a hook is read back.
func FuzzParseShim(f *testing.F) {
	f.Add([]byte(Shim("pre-push", bin)), "/usr/local/bin/git-crucible")
	f.Fuzz(func(t *testing.T, file []byte, fallback string) {
		parseShim(file)
		if strings.ContainsRune(fallback, 0) {
			return
		}
		if got, ours := parseShim(Shim("pre-commit", fallback)); !ours || got != fallback {
			t.Fatalf("fallback %q read back as %q", fallback, got)
		}
	})
}

func TestHead(t *testing.T) {
	got := head([]byte("1\r\n2\n\n4\n5\n6\n"), 5)
	if want := []string{"1", "2", "", "4", "5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q", got)
	}
	if got := head([]byte("no newline"), 5); !reflect.DeepEqual(got, []string{"no newline"}) {
		t.Fatalf("%q", got)
	}
}

// TestUpgradeFromVersion1: a hook written by a git-crucible that ran
// "git-crucible hook run" is rewritten silently, keeping nothing aside.
func TestUpgradeFromVersion1(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "pre-commit")
	write(t, hook, read(t, filepath.Join("testdata", "v1", "pre-commit")), 0o755)
	res, err := Install(dir, []string{"pre-commit"}, bin, Refuse)
	if err != nil || len(res) != 1 || res[0].Action != Upgraded || res[0].State != Ours || res[0].Fallback != bin || res[0].Backup != "" || res[0].Chained != "" {
		t.Fatalf("%+v %v", res, err)
	}
	if got := read(t, hook); got != string(Shim("pre-commit", bin)) || !strings.Contains(got, "\nexec \"$crucible\" pre-commit \"$@\"\n") {
		t.Fatalf("rewritten as:\n%s", got)
	}
}

// TestShimSkipsOnlyWhatItCanSee: outside a pipeline the commit hooks' shim
// exits before starting the binary, but only where sh can see the branch's
// active-pipeline ref as a file; a reftable repository (whose HEAD names
// refs/heads/.invalid) goes to the binary, so the gate is never skipped.
func TestShimSkipsOnlyWhatItCanSee(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "git-crucible-hook")
	write(t, fake, "#!/bin/sh\necho ran \"$@\"\n", 0o755)
	hook := filepath.Join(dir, "pre-commit")
	write(t, hook, string(Shim("pre-commit", fake)), 0o755)
	gitdir := filepath.Join(dir, "repo.git")
	for _, d := range []string{"refs/heads", "refs/crucible/active"} {
		if err := os.MkdirAll(filepath.Join(gitdir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func() string {
		cmd := exec.Command(hook)
		cmd.Env = append(os.Environ(), "GIT_DIR="+gitdir, "PATH=/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return string(out)
	}
	write(t, filepath.Join(gitdir, "HEAD"), "ref: refs/heads/main\n", 0o644)
	if out := run(); out != "" {
		t.Fatalf("no active pipeline: the shim started the binary: %q", out)
	}
	write(t, filepath.Join(gitdir, "refs/crucible/active/main"), "ref: refs/crucible/pipelines/p\n", 0o644)
	if out := run(); out != "ran pre-commit\n" {
		t.Fatalf("active pipeline: %q", out)
	}
	write(t, filepath.Join(gitdir, "HEAD"), "ref: refs/heads/.invalid\n", 0o644)
	if err := os.Mkdir(filepath.Join(gitdir, "reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := run(); out != "ran pre-commit\n" {
		t.Fatalf("reftable: the shim decided alone: %q", out)
	}
}
