package gitext

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestHooksDir checks that the hooks directory is the one git runs hooks
// from in every layout: from a subdirectory, in a linked worktree (the
// common one), with a relative core.hooksPath (the worktree's own), a
// global one with ~, and in a bare repository.
func TestHooksDir(t *testing.T) {
	repo, sub, wt, bare := layouts(t)
	home := os.Getenv("HOME")

	cases := []struct {
		name, dir string
		config    [][]string // git config arguments, run in dir
		want      string
	}{
		{"top", repo, nil, filepath.Join(repo, ".git", "hooks")},
		{"subdir", sub, nil, filepath.Join(repo, ".git", "hooks")},
		{"linked worktree", wt, nil, filepath.Join(repo, ".git", "hooks")},
		{"relative hooksPath from a subdir", sub, [][]string{{"core.hooksPath", ".husky"}}, filepath.Join(repo, ".husky")},
		{"relative hooksPath in a linked worktree", wt, [][]string{{"core.hooksPath", ".husky"}}, filepath.Join(wt, ".husky")},
		{"global hooksPath with ~", sub, [][]string{{"--global", "core.hooksPath", "~/hooks"}}, filepath.Join(home, "hooks")},
		{"bare", bare, nil, filepath.Join(bare, "hooks")},
		{"bare with hooksPath", bare, [][]string{{"core.hooksPath", "server-hooks"}}, filepath.Join(bare, "server-hooks")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range c.config {
				gittest.Git(t, c.dir, append([]string{"config"}, args...)...)
				defer gittest.Git(t, c.dir, append([]string{"config", "--unset"}, args[:len(args)-1]...)...)
			}
			t.Chdir(c.dir)
			r, err := Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.HooksDir(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("hooks dir %s, want %s", got, c.want)
			}
		})
	}
}

func TestConfigEntries(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	const pattern = `^(core\.hookspath|notes\.rewriteref)$`
	got, err := r.ConfigEntries(ctx, pattern)
	if err != nil || got != nil {
		t.Fatalf("unset: %v, %v", got, err)
	}
	gittest.Git(t, dir, "config", "--global", "core.hooksPath", "~/global hooks")
	gittest.Git(t, dir, "config", "--add", "notes.rewriteRef", "refs/notes/commits")
	gittest.Git(t, dir, "config", "--add", "notes.rewriteRef", "refs/notes/crucible/*")
	gittest.Git(t, dir, "config", "core.hooksPath", ".husky")
	got, err = r.ConfigEntries(ctx, pattern)
	if err != nil {
		t.Fatal(err)
	}
	global := "file:" + filepath.Join(os.Getenv("HOME"), ".gitconfig")
	local := "file:" + filepath.Join(dir, ".git", "config")
	// In the order of the files: git adds core.hooksPath to the [core]
	// section at the top of the local one.
	want := []ConfigEntry{
		{Key: "core.hookspath", Value: "~/global hooks", Scope: "global", Origin: global},
		{Key: "core.hookspath", Value: ".husky", Scope: "local", Origin: local},
		{Key: "notes.rewriteref", Value: "refs/notes/commits", Scope: "local", Origin: local},
		{Key: "notes.rewriteref", Value: "refs/notes/crucible/*", Scope: "local", Origin: local},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries\n%+v\nwant\n%+v", got, want)
	}
	if _, err := r.ConfigEntries(ctx, "^("); err == nil {
		t.Fatal("a bad pattern was not reported")
	}
}

func TestParseConfigZ(t *testing.T) {
	cases := []struct {
		in   string
		want []ConfigEntry
		bad  bool
	}{
		{in: "", want: nil},
		{in: "command\x00command line:\x00core.hookspath\n.husky\x00",
			want: []ConfigEntry{{Key: "core.hookspath", Value: ".husky", Scope: "command", Origin: "command line:"}}},
		{in: "local\x00file:.git/config\x00core.bare\x00", // no "=": true
			want: []ConfigEntry{{Key: "core.bare", NoValue: true, Scope: "local", Origin: "file:.git/config"}}},
		{in: "local\x00file:.git/config\x00core.bare\n\x00", // "=" and nothing: false
			want: []ConfigEntry{{Key: "core.bare", Scope: "local", Origin: "file:.git/config"}}},
		{in: "local\x00file:x\x00a.b\nline one\nline two\x00",
			want: []ConfigEntry{{Key: "a.b", Value: "line one\nline two", Scope: "local", Origin: "file:x"}}},
		{in: "local\x00file:x\x00a.b\nv", bad: true},
		{in: "local\x00file:x\x00", bad: true},
	}
	for _, c := range cases {
		got, err := ParseConfigZ([]byte(c.in))
		if (err != nil) != c.bad || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseConfigZ(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}

// FuzzParseConfigZ checks that any input parses or is refused without a
// panic, and that what parses has one entry per three fields.
func FuzzParseConfigZ(f *testing.F) {
	f.Add([]byte("local\x00file:.git/config\x00core.hookspath\n.husky\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		entries, err := ParseConfigZ(in)
		if err != nil {
			return
		}
		nuls := 0
		for _, b := range in {
			if b == 0 {
				nuls++
			}
		}
		if len(entries)*3 != nuls {
			t.Fatalf("%d entries from %d fields", len(entries), nuls)
		}
	})
}

// TestConfigMayMention: a setting in any file git reads, or given with
// git -c, is seen; an include always counts; with none, it says no.
func TestConfigMayMention(t *testing.T) {
	dir := gittest.Init(t)
	r := &Repo{GitDir: filepath.Join(dir, ".git"), CommonDir: filepath.Join(dir, ".git")}
	if r.ConfigMayMention("commentchar") {
		t.Fatal("a plain repository mentions commentchar")
	}
	gittest.Git(t, dir, "config", "core.commentChar", ";")
	if !r.ConfigMayMention("commentchar") {
		t.Fatal("the local setting was not seen")
	}
	gittest.Git(t, dir, "config", "--unset", "core.commentChar")
	gittest.Git(t, dir, "config", "--global", "include.path", "elsewhere")
	if !r.ConfigMayMention("commentchar") {
		t.Fatal("an include in the global config was not counted")
	}
	gittest.Git(t, dir, "config", "--global", "--unset", "include.path")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.commentchar'=';'")
	if !r.ConfigMayMention("commentchar") {
		t.Fatal("git -c was not seen")
	}
}

// TestTypedConfig: values are read with git's typing — its spellings of
// booleans, units of integers, ~ in paths — defaults stand for unset keys,
// and a value git refuses is an error in git's words.
func TestTypedConfig(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	set := func(k, v string) { gittest.Git(t, dir, "config", k, v) }
	for v, want := range map[string]bool{"yes": true, "On": true, "1": true, "true": true, "no": false, "off": false, "0": false} {
		set("x.flag", v)
		if got, err := r.ConfigBool(ctx, "x.flag", !want); err != nil || got != want {
			t.Errorf("x.flag = %q: %v, %v", v, got, err)
		}
	}
	if got, err := r.ConfigBool(ctx, "x.unset", true); err != nil || !got {
		t.Errorf("unset bool: %v, %v", got, err)
	}
	set("x.flag", "maybe")
	if _, err := r.ConfigBool(ctx, "x.flag", false); err == nil || !strings.Contains(err.Error(), "bad boolean config value 'maybe'") {
		t.Errorf("bad bool: %v", err)
	}
	for v, want := range map[string]int64{"12": 12, "3k": 3 << 10, "5m": 5 << 20, "1g": 1 << 30} {
		set("x.size", v)
		if got, err := r.ConfigInt(ctx, "x.size", -1); err != nil || got != want {
			t.Errorf("x.size = %q: %v, %v", v, got, err)
		}
	}
	if got, err := r.ConfigInt(ctx, "x.unset", 7); err != nil || got != 7 {
		t.Errorf("unset int: %v, %v", got, err)
	}
	set("x.size", "12q")
	if _, err := r.ConfigInt(ctx, "x.size", 0); err == nil || !strings.Contains(err.Error(), "bad numeric config value '12q'") {
		t.Errorf("bad int: %v", err)
	}
	for v, want := range map[string]float64{"2.50": 2.5, "5": 5, " 0.1 ": 0.1, "1e3": 1000, "-1": -1} {
		set("x.cost", v)
		if got, ok, err := r.ConfigFloat(ctx, "x.cost"); err != nil || !ok || got != want {
			t.Errorf("x.cost = %q: %v, %v, %v", v, got, ok, err)
		}
	}
	if got, ok, err := r.ConfigFloat(ctx, "x.unset"); err != nil || ok || got != 0 {
		t.Errorf("unset float: %v, %v, %v", got, ok, err)
	}
	for _, v := range []string{"five", "1,5", "NaN", "inf", ""} {
		set("x.cost", v)
		if _, _, err := r.ConfigFloat(ctx, "x.cost"); err == nil || err.Error() != "bad numeric config value '"+v+"' for 'x.cost': not a decimal number" {
			t.Errorf("bad float %q: %v", v, err)
		}
	}
	set("x.path", "~/ignore")
	if got, err := r.ConfigPath(ctx, "x.path"); err != nil || got != filepath.Join(os.Getenv("HOME"), "ignore") {
		t.Errorf("path: %q, %v", got, err)
	}
	if got, err := r.ConfigPath(ctx, "x.unset"); err != nil || got != "" {
		t.Errorf("unset path: %q, %v", got, err)
	}
}
