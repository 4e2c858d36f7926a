package verifycommits

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
)

// RefuseDuringBuild refuses a run while a build of the pipeline active on
// the branch runs: it commits tasks under the rebase's feet, and runs
// verify-commits after each one itself.
func RefuseDuringBuild(ctx context.Context, repo *gitext.Repo) error {
	svc := pipeline.Open(repo)
	defer svc.Close()
	id, err := svc.Resolve(ctx, "")
	if err != nil {
		return nil
	}
	if h := pipeline.HolderOf(repo, id); h != nil {
		return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("the build of pipeline %s is running on this branch (pid %d)", id, h.Pid)},
			"the build verifies each task's commit itself; run verify-commits once it stops")
	}
	return nil
}

// Base resolves the range to the commit it starts after: BASE..HEAD,
// BASE.. or BASE; by default the merge base with the upstream, else the
// baseline of the pipeline active on the branch.
func Base(ctx context.Context, repo *gitext.Repo, arg string) (string, error) {
	rev := arg
	if b, tip, ok := strings.Cut(arg, ".."); ok {
		if strings.HasPrefix(tip, ".") {
			return "", outcome.Usagef("%q: a symmetric range cannot be verified; give BASE..HEAD", arg)
		}
		if tip != "" {
			head, err := resolveCommit(ctx, repo, tip)
			if err != nil {
				return "", err
			}
			if now, err := repo.HeadCommit(); err != nil {
				return "", err
			} else if head != now {
				return "", outcome.WithHints(outcome.Usagef("%q: the range must end at HEAD", arg), "check out "+tip+" first")
			}
		}
		rev = b
	}
	if rev != "" {
		return resolveCommit(ctx, repo, rev)
	}
	if up, err := repo.ResolveCommit(ctx, "@{upstream}"); err == nil {
		base, err := repo.MergeBase(ctx, up, "HEAD")
		if err != nil || base != "" {
			return base, err
		}
	}
	svc := pipeline.Open(repo)
	defer svc.Close()
	id, err := svc.Resolve(ctx, "")
	var none *pipeline.NoActiveError
	if errors.As(err, &none) {
		return "", outcome.WithHints(errors.New("no range: the branch has no upstream and no active pipeline"),
			"name the commits to verify: git crucible verify-commits <base>..HEAD")
	}
	if err != nil {
		return "", err
	}
	st, _, err := svc.Load(ctx, id)
	if err != nil {
		return "", err
	}
	if st.Baseline == "" || svc.EmptyBaseline(st) {
		return "", outcome.WithHints(fmt.Errorf("pipeline %s started on a branch with no commits: no baseline commit", id),
			"name the commits to verify: git crucible verify-commits <base>..HEAD")
	}
	return st.Baseline, nil
}

// resolveCommit is rev's commit id; a rev that starts with "-" is a bad
// command line.
func resolveCommit(ctx context.Context, repo *gitext.Repo, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", outcome.Usagef("%q is not a revision", rev)
	}
	return repo.ResolveCommit(ctx, rev)
}
