package notes

import (
	"regexp"
	"strings"
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
		{"*", true},
		{"**provenance", true},
		{"refs/*/*/provenance", true},
		{"refs/*/provenance*", true},
		{"*/crucible/*x", false},
		{"", false},
		{"?efs/notes/crucible/provenance?", false},
	} {
		if got := refGlobMatch(c.glob, ProvenanceRef); got != c.want {
			t.Errorf("refGlobMatch(%q) = %v", c.glob, got)
		}
	}
}

// FuzzRefGlobMatch: the matcher agrees with the regexp it replaced (* any
// run of characters, slashes too; ? any one; all else literal).
func FuzzRefGlobMatch(f *testing.F) {
	for _, s := range [][2]string{{"refs/notes/*", ProvenanceRef}, {"a*b*c", "aXbYbZc"}, {"*?*", "x"}, {"a**", "a"}, {"[a].(b)+", "[a].(b)+"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, ref string) {
		if strings.ContainsRune(ref, '\n') || !utf8ASCII(glob+ref) {
			return // refs are ASCII with no newline, where a byte is a character
		}
		re := strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(glob))
		want := regexp.MustCompile("^(?s:" + re + ")$").MatchString(ref)
		if got := refGlobMatch(glob, ref); got != want {
			t.Fatalf("refGlobMatch(%q, %q) = %v, the regexp says %v", glob, ref, got, want)
		}
	})
}

func utf8ASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
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
