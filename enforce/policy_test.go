package enforce

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

func TestParsePushPolicy(t *testing.T) {
	entry := func(k, v string) gitext.ConfigEntry { return gitext.ConfigEntry{Key: k, Value: v} }
	for _, c := range []struct {
		name    string
		entries []gitext.ConfigEntry
		want    PushPolicy
		bad     string // the PolicyError's value
	}{
		{"defaults", nil, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}}, ""},
		{"all set", []gitext.ConfigEntry{entry("crucible.pushpolicy", "complete"), entry("crucible.protectedbranches", "release, prod,,dev"), entry("crucible.pushhistory", "yes")},
			PushPolicy{Mode: "complete", Protected: []string{"release", "prod", "dev"}, History: true}, ""},
		{"the last wins", []gitext.ConfigEntry{entry("crucible.pushPolicy", "off"), entry("crucible.pushpolicy", "gated"), entry("crucible.pushhistory", "true"), entry("crucible.pushhistory", "false")},
			PushPolicy{Mode: "gated", Protected: []string{"main", "master"}}, ""},
		{"history spellings", []gitext.ConfigEntry{entry("crucible.pushhistory", "on")}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}, History: true}, ""},
		{"history 1", []gitext.ConfigEntry{entry("crucible.pushhistory", "1")}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}, History: true}, ""},
		{"history as a bare key", []gitext.ConfigEntry{{Key: "crucible.pushhistory", NoValue: true}}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}, History: true}, ""},
		{"history empty", []gitext.ConfigEntry{entry("crucible.pushhistory", "")}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}}, ""},
		{"history TRUE", []gitext.ConfigEntry{entry("crucible.pushhistory", "TRUE")}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}, History: true}, ""},
		{"history 2", []gitext.ConfigEntry{entry("crucible.pushhistory", "2")}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}, History: true}, ""},
		{"history Off", []gitext.ConfigEntry{entry("crucible.pushhistory", "true"), entry("crucible.pushhistory", "Off")}, PushPolicy{Mode: "gated", Protected: []string{"main", "master"}}, ""},
		{"no protected branch", []gitext.ConfigEntry{entry("crucible.protectedbranches", "")}, PushPolicy{Mode: "gated", Protected: []string{}}, ""},
		{"unknown mode", []gitext.ConfigEntry{entry("crucible.pushpolicy", "strict")}, PushPolicy{}, "strict"},
		{"case matters in values", []gitext.ConfigEntry{entry("crucible.pushpolicy", "Off")}, PushPolicy{}, "Off"},
	} {
		got, err := ParsePushPolicy(c.entries)
		var pe *PolicyError
		switch {
		case c.bad != "":
			if !errors.As(err, &pe) || pe.Value != c.bad || err.Error() != "crucible.pushPolicy is '"+c.bad+"'" {
				t.Errorf("%s: error %v, want a PolicyError for %q", c.name, err, c.bad)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestPushHistoryNotABoolean: a value git cannot read as a boolean is
// refused in git's words, as git config --type=bool would, not taken as false.
func TestPushHistoryNotABoolean(t *testing.T) {
	_, err := ParsePushPolicy([]gitext.ConfigEntry{{Key: "crucible.pushhistory", Value: "maybe"}})
	if err == nil || err.Error() != "bad boolean config value 'maybe' for 'crucible.pushhistory'" {
		t.Fatalf("error %v", err)
	}
}

func TestRulesFor(t *testing.T) {
	gated := PushPolicy{Mode: "gated", Protected: []string{"main", "release"}}
	complete := PushPolicy{Mode: "complete"}
	verified := PushPolicy{Mode: "verified", Protected: []string{"main"}}
	for _, c := range []struct {
		p    PushPolicy
		ref  string
		want Rules
	}{
		{gated, "refs/heads/main", Rules{Blocked: true, Complete: true}},
		{gated, "refs/heads/release", Rules{Blocked: true, Complete: true}},
		{gated, "refs/heads/feature", Rules{Blocked: true}},
		{gated, "refs/heads/main2", Rules{Blocked: true}},
		{complete, "refs/heads/feature", Rules{Blocked: true, Complete: true}},
		{verified, "refs/heads/feature", Rules{Blocked: true, Verified: true}},
		{verified, "refs/heads/main", Rules{Blocked: true, Complete: true, Verified: true}},
	} {
		if got := c.p.RulesFor(c.ref); got != c.want {
			t.Errorf("%+v %s: %+v, want %+v", c.p, c.ref, got, c.want)
		}
	}
	if !(PushPolicy{Mode: "off"}).Off() || gated.Off() {
		t.Error("Off")
	}
}

func TestStyleOf(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "tpl"), []byte("Subject\n\n# fill in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	entry := func(k, v string) gitext.ConfigEntry { return gitext.ConfigEntry{Key: k, Value: v} }
	for _, c := range []struct {
		name    string
		entries []gitext.ConfigEntry
		want    Style
	}{
		{"defaults", nil, Style{}},
		{"comment char", []gitext.ConfigEntry{entry("core.commentchar", ";")}, Style{CommentChars: ";"}},
		{"comment string: its first byte", []gitext.ConfigEntry{entry("core.commentString", "//")}, Style{CommentChars: "/"}},
		{"auto", []gitext.ConfigEntry{entry("core.commentchar", "auto")}, Style{CommentChars: AutoCommentChars}},
		{"empty", []gitext.ConfigEntry{entry("core.commentchar", "")}, Style{}},
		{"template under home", []gitext.ConfigEntry{entry("commit.template", "~/tpl")}, Style{Template: "Subject\n\n# fill in\n"}},
		{"absolute template", []gitext.ConfigEntry{entry("commit.template", filepath.Join(home, "tpl"))}, Style{Template: "Subject\n\n# fill in\n"}},
		{"missing template", []gitext.ConfigEntry{entry("commit.template", "~/nope")}, Style{}},
	} {
		if got := StyleOf(c.entries, home); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestPushHistoryAsGitReadsIt: crucible.pushHistory means what git's own
// boolean typing makes of it, a bare key (true) and "key =" (false) apart.
func TestPushHistoryAsGitReadsIt(t *testing.T) {
	dir := gittest.Init(t)
	t.Chdir(dir)
	repo, err := gitext.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, ".git", "config")
	base, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"pushHistory", "pushHistory =", "pushHistory = \"\"", "pushHistory = yes", "pushHistory = off", "pushHistory = 0", "pushHistory = 2k"} {
		if err := os.WriteFile(config, append(slices.Clone(base), "[crucible]\n\t"+line+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		want := gittest.Git(t, dir, "config", "--type=bool", "crucible.pushHistory") == "true"
		p, err := ReadPushPolicy(t.Context(), repo)
		if err != nil || p.History != want {
			t.Errorf("%q: history %v (%v), git reads %v", line, p.History, err, want)
		}
	}
}
