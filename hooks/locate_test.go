package hooks

import (
	"path/filepath"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

func TestLocate(t *testing.T) {
	dir := gittest.Init(t)
	t.Chdir(dir)
	repo, err := gitext.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Locate(t.Context(), repo)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(repo.CommonDir, "hooks")
	if !samePath(s.Dir, own) || s.DefaultDir != own || s.HooksPath != nil || s.Bare || len(s.Config) != 0 {
		t.Fatalf("plain repository: %+v", s)
	}

	// A core.hooksPath that names the repository's own directory moves nothing.
	gittest.Git(t, dir, "config", "core.hooksPath", own)
	if s, err = Locate(t.Context(), repo); err != nil || s.HooksPath != nil || len(s.Config) != 1 {
		t.Fatalf("hooksPath at the default: %+v, %v", s, err)
	}

	gittest.Git(t, dir, "config", "core.hooksPath", "elsewhere")
	gittest.Git(t, dir, "config", "notes.rewriteMode", "overwrite")
	gittest.Git(t, dir, "config", "user.name", "not read")
	if s, err = Locate(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	if !samePath(s.Dir, filepath.Join(dir, "elsewhere")) || s.HooksPath == nil || s.HooksPath.Value != "elsewhere" || s.HooksPath.Scope != "local" {
		t.Fatalf("hooksPath elsewhere: %+v", s)
	}
	if len(s.Config) != 2 || s.Config[1].Key != "notes.rewritemode" {
		t.Fatalf("config %+v", s.Config)
	}
}
