package notes

import (
	"context"

	"github.com/git-crucible/git-crucible/gitext"
)

// Git carries notes over amended and rebased commits only for the refs that
// notes.rewriteRef names, combining them as notes.rewriteMode says.
const (
	// RewriteRef is the notes.rewriteRef value Configure adds.
	RewriteRef = "refs/notes/crucible/*"
	// RewriteMode keeps every line of the notes of squashed commits, once.
	RewriteMode = "cat_sort_uniq"
	// RewriteConfigKeys matches the keys RewriteConfigOf reads, for
	// gitext.Repo.ConfigEntries.
	RewriteConfigKeys = `^notes\.rewrite(ref|mode)$`
)

// RewriteConfig is what git's configuration says about the provenance notes of
// rewritten commits.
type RewriteConfig struct {
	Covered bool   // a notes.rewriteRef glob matches ProvenanceRef
	Mode    string // notes.rewriteMode, "" when unset (git then concatenates)
}

// RewriteConfigOf reads RewriteConfig from config entries in the order git reads them
// (the last notes.rewriteMode wins).
func RewriteConfigOf(entries []gitext.ConfigEntry) RewriteConfig {
	var r RewriteConfig
	for _, e := range entries {
		switch e.Key {
		case "notes.rewriteref":
			r.Covered = r.Covered || refGlobMatch(e.Value, ProvenanceRef)
		case "notes.rewritemode":
			r.Mode = e.Value
		}
	}
	return r
}

// refGlobMatch matches a ref against a glob as git does for
// notes.rewriteRef: a * matches across slashes too (refs/notes/* covers
// refs/notes/crucible/provenance).
func refGlobMatch(glob, ref string) bool {
	// The classic matcher: on a mismatch, the last * takes one more byte.
	g, r, star, from := 0, 0, -1, 0
	for r < len(ref) {
		switch {
		case g < len(glob) && (glob[g] == '?' || glob[g] == ref[r]) && glob[g] != '*':
			g, r = g+1, r+1
		case g < len(glob) && glob[g] == '*':
			star, from = g, r
			g++
		case star >= 0:
			from++
			g, r = star+1, from
		default:
			return false
		}
	}
	for g < len(glob) && glob[g] == '*' {
		g++
	}
	return g == len(glob)
}

// Configured is what Configure did.
type Configured struct {
	AddedRef bool   // it added RewriteRef to notes.rewriteRef
	SetMode  bool   // it set notes.rewriteMode to RewriteMode
	Mode     string // notes.rewriteMode as it is now
}

// Configure sets, in the repository's config, what makes provenance notes
// follow rewritten commits without losing a line: RewriteRef added to
// notes.rewriteRef unless a value there covers ProvenanceRef already, and
// notes.rewriteMode=RewriteMode unless one is set (a mode the user chose
// stays theirs).
func Configure(ctx context.Context, repo *gitext.Repo) (Configured, error) {
	entries, err := repo.ConfigEntries(ctx, RewriteConfigKeys)
	if err != nil {
		return Configured{}, err
	}
	r := RewriteConfigOf(entries)
	c := Configured{Mode: r.Mode}
	if !r.Covered {
		if err := repo.ConfigAdd(ctx, gitext.ConfigLocal, "notes.rewriteRef", RewriteRef); err != nil {
			return c, err
		}
		c.AddedRef = true
	}
	if r.Mode == "" {
		if err := repo.ConfigSet(ctx, gitext.ConfigLocal, "notes.rewriteMode", RewriteMode); err != nil {
			return c, err
		}
		c.SetMode, c.Mode = true, RewriteMode
	}
	return c, nil
}
