package remote

import (
	"context"

	"github.com/git-crucible/git-crucible/gitext"
)

// DefaultName is the remote a command talks to when none is named: the
// current branch's upstream remote, else origin.
func DefaultName(ctx context.Context, repo *gitext.Repo) (string, error) {
	branch, err := repo.HeadBranch()
	if err != nil || branch == "" {
		return defaultName(""), err
	}
	upstream, ok, err := repo.ConfigValue(ctx, "", "branch."+branch+".remote")
	if err != nil || !ok { // unset
		return defaultName(""), nil
	}
	return defaultName(upstream), nil
}

// defaultName chooses between a branch's configured remote and origin:
// "." (the branch tracks another local branch) names no remote.
func defaultName(upstream string) string {
	if upstream == "" || upstream == "." {
		return "origin"
	}
	return upstream
}
