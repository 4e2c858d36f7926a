package gitext

import (
	"context"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestCommitWriterAsGit: a commit written in process is git commit-tree's,
// byte for byte; where the configuration gives commits another encoding
// (or would sign them), git writes it, with its header.
func TestCommitWriterAsGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := formatDir(t, format)
			gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
			r := discoverIn(t, dir)
			ctx := context.Background()
			tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
			parents := []string{gittest.Git(t, dir, "rev-parse", "HEAD")}
			message := "subject\n\nbody, kept as it is  \n\n\nCrucible-Task: 1"
			for _, encoding := range []string{"", "ISO-8859-1"} {
				if encoding != "" {
					gittest.Git(t, dir, "config", "i18n.commitEncoding", encoding)
				}
				w := r.NewCommitWriter()
				if w.byGit != (encoding != "") {
					t.Fatalf("encoding %q: by git %v", encoding, w.byGit)
				}
				got, err := w.Write(ctx, tree, parents, message)
				if err != nil {
					t.Fatal(err)
				}
				want, err := r.CommitTree(ctx, tree, parents, message)
				if err != nil || got != want {
					t.Fatalf("encoding %q: wrote %s, git commit-tree %s (%v):\n%s", encoding, got, want, err, gittest.Git(t, dir, "cat-file", "-p", got))
				}
			}
		})
	}
}
