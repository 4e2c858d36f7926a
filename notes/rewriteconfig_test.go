package notes

import (
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
)

func TestRefGlobMatch(t *testing.T) {
	for _, c := range []struct {
		glob string
		want bool
	}{
		{"refs/notes/crucible/*", true},
		{"refs/notes/*", true}, // git's * crosses slashes here
		{"refs/*", true},
		{"refs/notes/crucible/provenance", true},
		{"refs/notes/crucible/provenanc?", true},
		{"refs/notes/commits", false},
		{"refs/notes/crucible", false},
		{"refs/notes/crucible.*", false},
	} {
		if got := refGlobMatch(c.glob, ProvenanceRef); got != c.want {
			t.Errorf("refGlobMatch(%q) = %v", c.glob, got)
		}
	}
}

func TestRewriteConfigOf(t *testing.T) {
	ref := func(v string) gitext.ConfigEntry { return gitext.ConfigEntry{Key: "notes.rewriteref", Value: v} }
	mode := func(v string) gitext.ConfigEntry { return gitext.ConfigEntry{Key: "notes.rewritemode", Value: v} }
	for _, c := range []struct {
		name    string
		entries []gitext.ConfigEntry
		want    RewriteConfig
	}{
		{"nothing set", nil, RewriteConfig{}},
		{"ours", []gitext.ConfigEntry{ref(RewriteRef), mode(RewriteMode)}, RewriteConfig{Covered: true, Mode: RewriteMode}},
		{"another ref, then a covering one", []gitext.ConfigEntry{ref("refs/notes/commits"), ref("refs/notes/*")}, RewriteConfig{Covered: true}},
		{"other refs only", []gitext.ConfigEntry{ref("refs/notes/commits")}, RewriteConfig{}},
		{"the last mode wins", []gitext.ConfigEntry{mode("overwrite"), mode("ignore")}, RewriteConfig{Mode: "ignore"}},
		{"other keys", []gitext.ConfigEntry{{Key: "core.hookspath", Value: "refs/notes/*"}}, RewriteConfig{}},
	} {
		if got := RewriteConfigOf(c.entries); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
