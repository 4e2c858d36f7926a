package gitext

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Every revision a verb passes to git follows --end-of-options (git 2.24;
// rev-parse's, 2.30), so that one starting with "-" names a revision that
// does not exist rather than an option git would act on. The few commands
// that do not take it yet refuse such a revision (plainRev).

// plainRev refuses a revision that git would read as an option, for the
// commands whose parsers do not know --end-of-options (checkout).
func plainRev(rev string) error {
	if strings.HasPrefix(rev, "-") {
		return fmt.Errorf("%q is not a revision", rev)
	}
	return nil
}

// Resolve returns the object id rev names (git rev-parse --verify). A rev
// that names none is an error wrapping ErrMissing.
func (r *Repo) Resolve(ctx context.Context, rev string) (string, error) {
	out, err := run(ctx, r, nil, "rev-parse", "--verify", "-q", "--end-of-options", rev)
	if IsExit(err, 1) {
		return "", fmt.Errorf("%s: %w", rev, ErrMissing)
	}
	return strings.TrimSpace(string(out)), err
}

// ResolveTree returns the tree of the commit (or tree) rev names.
func (r *Repo) ResolveTree(ctx context.Context, rev string) (string, error) {
	return r.Resolve(ctx, rev+"^{tree}")
}

// FirstParent returns commit's first parent; a commit without one is an
// error wrapping ErrMissing. A commit in the object store, loose or packed,
// is read in process, without a look at replace refs: it is for commits
// git-crucible made, whose ids are the chain's and the engine's, and the
// answer does not change with a gc. Another (an alternate's) is read by git.
func (r *Repo) FirstParent(ctx context.Context, commit string) (string, error) {
	if kind, data, err := r.ReadStored(commit); err == nil && kind == "commit" {
		c, err := DecodeCommit(data)
		switch {
		case err != nil:
			return "", err
		case len(c.Parents) == 0:
			return "", fmt.Errorf("%s^: %w", commit, ErrMissing)
		}
		return c.Parents[0], nil
	}
	return r.Resolve(ctx, commit+"^")
}

// Parents returns the parents of the commit rev names (none for a root
// commit); a rev that names no commit is an error.
func (r *Repo) Parents(ctx context.Context, rev string) ([]string, error) {
	out, err := run(ctx, r, nil, "rev-list", "--parents", "-n", "1", "--end-of-options", rev+"^{commit}", "--")
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: %w", rev, ErrMissing)
	}
	return ids[1:], nil
}

// RevCommit is a commit and its parents, as git rev-list --parents lists it.
type RevCommit struct {
	ID      string
	Parents []string
}

// RevList lists the commits of base..head as git rev-list does, in
// topological order, parents first, each with its parents.
func (r *Repo) RevList(ctx context.Context, base, head string) ([]RevCommit, error) {
	out, err := run(ctx, r, nil, "rev-list", "--reverse", "--topo-order", "--parents", "--end-of-options", base+".."+head, "--")
	if err != nil {
		return nil, err
	}
	var commits []RevCommit
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if ids := strings.Fields(line); len(ids) > 0 {
			commits = append(commits, RevCommit{ID: ids[0], Parents: ids[1:]})
		}
	}
	return commits, nil
}

// IsAncestor reports whether commit a is reachable from commit b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := run(ctx, r, nil, "merge-base", "--is-ancestor", "--end-of-options", a, b)
	if IsExit(err, 1) {
		return false, nil
	}
	return err == nil, err
}

// MergeBase returns a best common ancestor of commits a and b, or "" when
// they share no history. When criss-cross merges leave several, it is the
// lowest id of them, so that every clone and every git version choose the
// same one (git's own pick depends on the order it is asked in).
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := run(ctx, r, nil, "merge-base", "--all", "--end-of-options", a, b)
	if IsExit(err, 1) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	bases := strings.Fields(string(out))
	if len(bases) == 0 {
		return "", nil
	}
	return slices.Min(bases), nil
}

// RefsContaining lists the refs from which commit is reachable, by name.
func (r *Repo) RefsContaining(ctx context.Context, commit string) ([]string, error) {
	out, err := run(ctx, r, nil, "for-each-ref", "--format=%(refname)", "--contains="+commit)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// ReflogEntry is one move of a ref: where it went, and git's reason.
type ReflogEntry struct{ OID, Subject string }

// Reflog lists ref's moves, newest first, at most max (0: all of them).
func (r *Repo) Reflog(ctx context.Context, ref string, max int) ([]ReflogEntry, error) {
	args := []string{"reflog", "show", "--format=%H %gs"}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max))
	}
	out, err := run(ctx, r, nil, append(args, "--end-of-options", ref, "--")...)
	if err != nil {
		return nil, err
	}
	var entries []ReflogEntry
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if oid, subject, ok := strings.Cut(line, " "); ok {
			entries = append(entries, ReflogEntry{OID: oid, Subject: subject})
		}
	}
	return entries, nil
}

// LogOptions narrow and annotate what LogFormat shows.
type LogOptions struct {
	Max   int    // at most this many commits, the newest; 0 for all
	Notes string // the notes ref whose notes %N shows
	Since string // only the commits made after this date (git's --since)
}

// LogFormat is what git log prints of the commits revs name ("A", "A..B",
// "^A"), newest first, each in format (a git pretty format, as
// --format's: each commit's text ends with a line end).
func (r *Repo) LogFormat(ctx context.Context, format string, o LogOptions, revs ...string) ([]byte, error) {
	if len(revs) == 0 {
		return nil, errors.New("git log: no revision to list")
	}
	args := []string{"log", "--no-color", "--format=" + format}
	if o.Max > 0 {
		args = append(args, "--max-count="+strconv.Itoa(o.Max))
	}
	if o.Notes != "" {
		args = append(args, "--notes="+o.Notes)
	}
	if o.Since != "" {
		args = append(args, "--since="+o.Since)
	}
	args = append(append(append(args, "--end-of-options"), revs...), "--")
	return run(ctx, r, nil, args...)
}

// Show is what git show prints of commit: the commit in format (a git
// pretty format), then its patch (a merge's combined one).
func (r *Repo) Show(ctx context.Context, format, commit string) ([]byte, error) {
	return run(ctx, r, nil, "show", "--no-color", "--format="+format, "--end-of-options", commit, "--")
}
