package gitext

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ResolveCommit is the commit rev names (rev-parse --verify of
// rev^{commit}); an error when it names none. A rev that starts with "-"
// is no revision: it never reaches git as an option.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%q is not a revision", rev)
	}
	c, err := r.Resolve(ctx, rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q is not a commit", rev)
	}
	return c, nil
}

// LoggedCommit is a commit as git log lists it.
type LoggedCommit struct {
	Hash, Abbrev, Tree, Subject string
	Trailers                    string // its trailers, unfolded, a line each
}

// Log lists the commits reachable from tip and from none of hidden,
// oldest first; at most max of them (the newest), 0 for all.
func (r *Repo) Log(ctx context.Context, tip string, hidden []string, max int) ([]LoggedCommit, error) {
	revs := []string{tip}
	for _, h := range hidden {
		revs = append(revs, "^"+h)
	}
	out, err := r.LogFormat(ctx, "%H%x1f%h%x1f%T%x1f%s%x1f%(trailers:only,unfold)%x00", LogOptions{Max: max}, revs...)
	if err != nil {
		return nil, err
	}
	var commits []LoggedCommit
	for _, rec := range bytes.Split(out, []byte{0}) {
		f := strings.SplitN(strings.TrimPrefix(string(rec), "\n"), "\x1f", 5)
		if len(f) != 5 {
			continue
		}
		commits = append(commits, LoggedCommit{Hash: f[0], Abbrev: f[1], Tree: f[2], Subject: f[3], Trailers: f[4]})
	}
	slices.Reverse(commits)
	return commits, nil
}

// DiffStat is what git diff --shortstat counts.
type DiffStat struct{ Files, Insertions, Deletions int }

// ShortStat counts what changes from commit a to commit b.
func (r *Repo) ShortStat(ctx context.Context, a, b string) (DiffStat, error) {
	out, err := run(ctx, r, nil, "diff", "--shortstat", "--end-of-options", a, b, "--")
	if err != nil {
		return DiffStat{}, err
	}
	return parseShortStat(string(out)), nil
}

// parseShortStat reads git diff --shortstat's line, " 3 files changed, 10
// insertions(+), 2 deletions(-)", either count after the first left out
// when it is 0; what follows them is not read. A line that does not start
// so counts nothing.
func parseShortStat(line string) DiffStat {
	var d DiffStat
	s, ok := cutCount(strings.TrimLeft(line, " \t\n\f\r"), &d.Files, "files changed", "file changed")
	if !ok {
		return DiffStat{}
	}
	if rest, ok := strings.CutPrefix(s, ", "); ok {
		if rest, ok = cutCount(rest, &d.Insertions, "insertions(+)", "insertion(+)"); ok {
			s = rest
		}
	}
	if rest, ok := strings.CutPrefix(s, ", "); ok {
		cutCount(rest, &d.Deletions, "deletions(-)", "deletion(-)")
	}
	return d
}

// cutCount cuts "<digits> <word>" from the start of s, one of words, and
// sets n to the number (0 past an int's range).
func cutCount(s string, n *int, words ...string) (string, bool) {
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	rest, ok := strings.CutPrefix(s[digits:], " ")
	if digits == 0 || !ok {
		return s, false
	}
	for _, w := range words {
		if after, ok := strings.CutPrefix(rest, w); ok {
			*n, _ = strconv.Atoi(s[:digits])
			return after, true
		}
	}
	return s, false
}
