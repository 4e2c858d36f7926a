package wtpool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

func TestSlotReuse(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			gittest.Hermetic(t)
			dir := t.TempDir()
			gittest.Git(t, dir, "init", "-q", "-b", "main", "--object-format="+format)
			gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
			first := gittest.Git(t, dir, "rev-parse", "HEAD")
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("two\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, dir, "add", "f")
			gittest.Git(t, dir, "commit", "-q", "-m", "two")
			second := gittest.Git(t, dir, "rev-parse", "HEAD")
			gittest.Chdir(t, dir)
			ctx := context.Background()
			repo, err := gitext.Discover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pool := Pool{Repo: repo, Dir: filepath.Join(repo.CrucibleDir(), "worktrees")}

			at := func(commit string) string {
				slot, err := pool.Hold(1)
				if err != nil {
					t.Fatal(err)
				}
				defer slot.Release()
				if _, err := slot.Checkout(ctx, commit); err != nil {
					t.Fatal(err)
				}
				if got := gittest.Git(t, slot.Dir, "rev-parse", "HEAD"); got != commit {
					t.Fatalf("slot at %s, want %s", got, commit)
				}
				gitFile, err := os.ReadFile(filepath.Join(slot.Dir, ".git"))
				if err != nil {
					t.Fatal(err)
				}
				return string(gitFile)
			}
			made := at(second)
			// A dirty tracked file does not survive the next holder's checkout.
			if err := os.WriteFile(filepath.Join(pool.Path(1), "f"), []byte("dirty\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if reused := at(first); reused != made {
				t.Fatalf("the second hold made a new worktree: %q, then %q", made, reused)
			}
			if _, err := os.Stat(filepath.Join(pool.Path(1), "f")); !os.IsNotExist(err) {
				t.Fatalf("f at the base commit: %v", err)
			}
			// A .git file an agent rewrote to name the main repository is
			// not believed: the main worktree keeps its branch and index.
			if err := os.WriteFile(filepath.Join(pool.Path(1), ".git"), []byte("gitdir: "+repo.GitDir+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			at(first)
			if got := gittest.Git(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
				t.Fatalf("the main worktree's HEAD is %q", got)
			}
			if got := gittest.Git(t, dir, "status", "--porcelain"); got != "" {
				t.Fatalf("the main worktree changed:\n%s", got)
			}
			// A slot whose directory went away is added again.
			if err := os.RemoveAll(pool.Path(1)); err != nil {
				t.Fatal(err)
			}
			at(second)
			if got := gittest.Git(t, dir, "worktree", "list", "--porcelain"); len(got) == 0 {
				t.Fatal("no worktrees listed")
			}
			// So is one whose git worktree add was killed: git's record of
			// it is left locked ("initializing") and its directory missing.
			gittest.Git(t, dir, "worktree", "lock", "--reason", "initializing", pool.Path(1))
			if err := os.RemoveAll(pool.Path(1)); err != nil {
				t.Fatal(err)
			}
			at(first)
		})
	}
}
