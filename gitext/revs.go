package gitext

import (
	"bytes"
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

// RevSet names commits as git rev-list takes them: those reachable from
// Include and from none of Exclude, nor from ExcludeRemote's
// remote-tracking branches. Its revisions reach git on its standard input
// (--stdin), one a line, however many there are: one that would read as
// an option ("-" first), or as more or fewer lines than one, is refused.
type RevSet struct {
	Include       []string // revisions whose commits are in it: "A", "A..B"; "^A" for one whose are not
	Exclude       []string // revisions whose commits are not
	ExcludeRemote string   // a remote whose remote-tracking branches' commits are not ("": none), as git's --remotes= takes it
}

// RevOrder is the order a rev-list gives commits in.
type RevOrder int

const (
	NewestFirst   RevOrder = iota // by commit date, git's own order
	ChildrenFirst                 // every commit before its parents (--topo-order)
	ParentsFirst                  // every commit after its parents (--topo-order --reverse)
)

// revList is git rev-list's arguments and input for the commits of s in
// order, with format's lines for each commit ("": its id alone).
func (s RevSet) revList(order RevOrder, format ...string) (args []string, stdin []byte, err error) {
	var in bytes.Buffer
	for i, list := range [][]string{s.Include, s.Exclude} {
		for _, rev := range list {
			// git takes "-..." as an option (git 2.42 also on --stdin), ends
			// its input at an empty line and reads a line end as two lines.
			if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\n\r") {
				return nil, nil, fmt.Errorf("%q is not a revision", rev)
			}
			if i == 1 {
				in.WriteByte('^')
			}
			in.WriteString(rev)
			in.WriteByte('\n')
		}
	}
	args = append([]string{"rev-list"}, format...)
	switch order {
	case ChildrenFirst:
		args = append(args, "--topo-order")
	case ParentsFirst:
		args = append(args, "--topo-order", "--reverse")
	}
	args = append(args, "--stdin")
	if s.ExcludeRemote != "" {
		args = append(args, "--not", "--remotes="+s.ExcludeRemote)
	}
	return append(args, "--"), in.Bytes(), nil
}

// RevListIDs lists the commits of s in order, by id.
func (r *Repo) RevListIDs(ctx context.Context, s RevSet, order RevOrder) ([]string, error) {
	args, stdin, err := s.revList(order)
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, r, stdin, args...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// RevCommit is a commit as git rev-list --parents lists it, with its tree
// and subject.
type RevCommit struct {
	ID      string
	Parents []string
	Tree    string
	Subject string
}

// RevList lists the commits of s in order, each with its parents, tree
// and subject.
func (r *Repo) RevList(ctx context.Context, s RevSet, order RevOrder) ([]RevCommit, error) {
	args, stdin, err := s.revList(order, "--parents", "--format=%T %s")
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, r, stdin, args...)
	if err != nil {
		return nil, err
	}
	var commits []RevCommit
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i := 0; i+1 < len(lines); i += 2 { // "commit <id> <parents>", then the format's line
		ids := strings.Fields(lines[i])
		if len(ids) < 2 || ids[0] != "commit" {
			return nil, fmt.Errorf("git rev-list: unexpected line %q", lines[i])
		}
		tree, subject, _ := strings.Cut(lines[i+1], " ")
		commits = append(commits, RevCommit{ID: ids[1], Parents: ids[2:], Tree: tree, Subject: subject})
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
