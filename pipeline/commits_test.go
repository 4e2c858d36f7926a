package pipeline

import (
	"context"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestCommits: a pipeline's commits are those on its branch whose
// Crucible-Pipeline trailer names it, oldest first, with their trailers;
// a branch that is gone has none, not an error.
func TestCommits(t *testing.T) {
	s := openService(t)
	ctx := context.Background()
	dir := s.Repo.WorkTree
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	st, _, err := s.Start(ctx, StartOptions{Goal: "g", Mode: "feature", ID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "one", "-m", "Crucible-Pipeline: p1\nCrucible-Seq: 1")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "by hand")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "other", "-m", "Crucible-Pipeline: p2")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two", "-m", "Crucible-Pipeline: p1")
	got, err := s.Commits(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Subject != "one" || got[1].Subject != "two" {
		t.Fatalf("commits %+v, want one and two", got)
	}
	if tr := got[0].Trailers; len(tr) != 2 || tr[1] != (Trailer{Key: "Crucible-Seq", Value: "1"}) {
		t.Errorf("one's trailers %+v, want Crucible-Pipeline and Crucible-Seq", tr)
	}
	gittest.Git(t, dir, "checkout", "-q", "--detach")
	gittest.Git(t, dir, "branch", "-D", st.Branch)
	if got, err := s.Commits(ctx, st); err != nil || got != nil {
		t.Errorf("the branch gone: commits %+v, %v; want none and no error", got, err)
	}
}
