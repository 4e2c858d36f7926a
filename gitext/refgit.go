package gitext

import (
	"context"
	"strings"
)

// UpdateRef moves ref name (HEAD: the branch it is on) from old to new by
// compare-and-swap, "" old meaning it must not exist, with reason in the
// reflogs (git update-ref): one ref, its locks left to the caller to
// wait for. A ref not at old is git's error (UpdateRefs says
// ErrRefChanged).
func (r *Repo) UpdateRef(ctx context.Context, reason, name, new, old string) error {
	if old == "" {
		old = strings.Repeat("0", r.HashLen()*2)
	}
	_, err := run(ctx, r, nil, "update-ref", "-m", reason, "--end-of-options", name, new, old)
	return err
}

// SetOrigHead points ORIG_HEAD at commit, as git reset does: a pseudo-ref
// git itself sets without an old value.
func (r *Repo) SetOrigHead(ctx context.Context, commit string) error {
	_, err := run(ctx, r, nil, "update-ref", "--no-deref", "--end-of-options", "ORIG_HEAD", commit)
	return err
}

// PackRefs moves every loose ref into packed-refs (git pack-refs --all
// --prune).
func (r *Repo) PackRefs(ctx context.Context) error {
	_, err := run(ctx, r, nil, "pack-refs", "--all", "--prune")
	return err
}

// RefCommit is a ref's commit: its id, tree and message.
type RefCommit struct{ OID, Tree, Message string }

// RefCommits lists the commits of the refs under prefix, by ref name.
func (r *Repo) RefCommits(ctx context.Context, prefix string) ([]RefCommit, error) {
	out, err := run(ctx, r, nil, "for-each-ref", "--format=%(objectname)%00%(tree)%00%(contents)%00", "--end-of-options", prefix)
	if err != nil {
		return nil, err
	}
	commits := []RefCommit{}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		// Each record after the first starts with the line end that ends the one before.
		commits = append(commits, RefCommit{OID: strings.TrimSpace(fields[i]), Tree: fields[i+1], Message: fields[i+2]})
	}
	return commits, nil
}
