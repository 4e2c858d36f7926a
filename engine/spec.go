package engine

import (
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/trust"
)

// TrustedOverride judges the content of repo's work-tree spec override
// (pipespec.OverridePath): it runs only in the content the user trusted,
// for its run steps are commands, and it can arrive with a pull request.
func TrustedOverride(repo *gitext.Repo) func(content []byte) error {
	return func(content []byte) error {
		if err := trust.Check(repo, pipespec.OverridePath, content); err != nil {
			return outcome.WithHints(&outcome.Refused{Err: err}, "review it, then trust it with: git crucible trust "+pipespec.OverridePath)
		}
		return nil
	}
}
