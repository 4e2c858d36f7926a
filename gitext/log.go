package gitext

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
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

var shortstat = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?`)
}}

// ShortStat counts what changes from commit a to commit b.
func (r *Repo) ShortStat(ctx context.Context, a, b string) (DiffStat, error) {
	out, err := run(ctx, r, nil, "diff", "--shortstat", "--end-of-options", a, b, "--")
	if err != nil {
		return DiffStat{}, err
	}
	var d DiffStat
	if m := shortstat.Get().FindStringSubmatch(string(out)); m != nil {
		d.Files, _ = strconv.Atoi(m[1])
		d.Insertions, _ = strconv.Atoi(m[2])
		d.Deletions, _ = strconv.Atoi(m[3])
	}
	return d, nil
}
