// Package repotest opens hermetic test repositories through gitext. It is
// apart from gittest, which gitext's own tests import.
package repotest

import (
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// Open makes a hermetic repository with a work tree, makes it the test's
// current directory, and opens it.
func Open(t testing.TB) *gitext.Repo {
	t.Helper()
	t.Chdir(gittest.Init(t))
	r, err := gitext.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
