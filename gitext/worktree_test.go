package gitext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestIndexVerbs: the whole tree staged but what is excluded, paths staged
// as paths (never patterns, none staging nothing), the index listed, entries taken out, and the
// index put back at HEAD, as git status then shows them.
func TestIndexVerbs(t *testing.T) {
	r, dir, _ := history(t)
	ctx := context.Background()
	status := func() string { return gittest.Git(t, dir, "status", "--porcelain", "--untracked-files=all") }
	for _, f := range []string{"x.txt", "*.txt", "keep/y.txt", "big"} {
		writeTestFile(t, filepath.Join(dir, f), f)
	}
	os.Remove(filepath.Join(dir, "s.txt"))
	if err := r.AddAll(ctx, AddOptions{Exclude: []string{"keep", "big"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := status(), "A  *.txt\nD  s.txt\nA  x.txt\n?? big\n?? keep/y.txt"; got != want {
		t.Fatalf("after AddAll:\n%s\nwant:\n%s", got, want)
	}
	if err := r.ResetIndex(ctx); err != nil {
		t.Fatal(err)
	}
	// No paths stage nothing (git add --all of an empty pathspec file
	// would stage everything).
	if err := r.AddPaths(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := status(), "D s.txt\n?? *.txt\n?? big\n?? keep/y.txt\n?? x.txt"; got != want { // git status's first space trimmed
		t.Fatalf("after AddPaths of none:\n%s\nwant:\n%s", got, want)
	}
	if err := r.AddPaths(ctx, []string{"*.txt", "s.txt"}); err != nil {
		t.Fatal(err)
	}
	if got, want := status(), "A  *.txt\nD  s.txt\n?? big\n?? keep/y.txt\n?? x.txt"; got != want {
		t.Fatalf("after AddPaths:\n%s\nwant:\n%s", got, want)
	}
	entries, err := r.LsFiles(ctx)
	if err != nil || len(entries) != 2 || entries[0].Path != "*.txt" || entries[0].Stage != "0" || entries[1].Path != "a.txt" {
		t.Fatalf("LsFiles = %+v, %v", entries, err)
	}
	if err := r.RemoveCached(ctx, []string{"*.txt"}); err != nil {
		t.Fatal(err)
	}
	if got, want := status(), "D  s.txt\n?? *.txt\n?? big\n?? keep/y.txt\n?? x.txt"; got != want {
		t.Fatalf("after RemoveCached:\n%s\nwant:\n%s", got, want)
	}
	if err := r.UpdateIndexPaths(ctx, []string{"x.txt", "s.txt"}); err != nil {
		t.Fatal(err)
	}
	if got, want := status(), "D  s.txt\nA  x.txt\n?? *.txt\n?? big\n?? keep/y.txt"; got != want {
		t.Fatalf("after UpdateIndexPaths:\n%s\nwant:\n%s", got, want)
	}
}

// TestWorktreeVerbs: untracked files cleaned (ignored ones kept), the
// work tree reset, checked out detached, paths restored from a commit,
// and worktrees added over what git still lists, removed and pruned.
func TestWorktreeVerbs(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	writeTestFile(t, filepath.Join(dir, ".git", "info", "exclude"), "*.o\n")
	writeTestFile(t, filepath.Join(dir, "u", "v.txt"), "untracked")
	writeTestFile(t, filepath.Join(dir, "w.o"), "ignored")
	writeTestFile(t, filepath.Join(dir, "a.txt"), "changed")
	if err := r.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.ResetHard(ctx); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain", "--ignored"); got != "!! w.o" {
		t.Fatalf("after Clean and ResetHard: %q", got)
	}
	writeTestFile(t, filepath.Join(dir, "a.txt"), "changed")
	if err := r.CheckoutDetached(ctx, ids["two"]); err != nil {
		t.Fatal(err)
	}
	if head := gittest.Git(t, dir, "rev-parse", "HEAD"); head != ids["two"] || gittest.Git(t, dir, "status", "--porcelain") != "" {
		t.Fatalf("HEAD %s after CheckoutDetached(two)", head)
	}
	if err := r.CheckoutDetached(ctx, "-"); err == nil {
		t.Fatal(`CheckoutDetached("-"): no error`)
	}
	if err := r.Restore(ctx, ids["three"], []string{"a.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain"); got != "A  a.txt" {
		t.Fatalf("after Restore: %q", got)
	}

	wt := filepath.Join(t.TempDir(), "slot")
	for range 2 {
		if err := r.WorktreeAdd(ctx, wt, ids["one"]); err != nil {
			t.Fatal(err)
		}
		if head := gittest.Git(t, wt, "rev-parse", "HEAD"); head != ids["one"] {
			t.Fatalf("the worktree is at %s", head)
		}
		os.RemoveAll(wt) // gone, still listed: the next add replaces it
	}
	if err := r.WorktreeAdd(ctx, wt, ids["one"]); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(wt, "a.txt"), "uncommitted")
	if err := r.WorktreeRemove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed worktree is still there: %v", err)
	}
	if err := r.WorktreeAdd(ctx, wt, ids["one"]); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(wt)
	if err := r.WorktreePrune(ctx); err != nil {
		t.Fatal(err)
	}
	if list := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, wt) {
		t.Fatalf("the pruned worktree is still listed:\n%s", list)
	}
}

// TestCommitAndRebase: a commit of some paths alone with its message as
// it is, an amend keeping the message, an interactive rebase by its todo
// list, stopped, aborted and continued, and a cherry-pick forgotten.
func TestCommitAndRebase(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	writeTestFile(t, filepath.Join(dir, "a.txt"), "a4\n")
	writeTestFile(t, filepath.Join(dir, "s.txt"), "s2\n")
	gittest.Git(t, dir, "add", "s.txt")
	msg := filepath.Join(t.TempDir(), "msg")
	writeTestFile(t, msg, "subject\n\n\n# not a comment\n")
	if err := r.Commit(ctx, CommitOptions{MessageFile: msg, Only: []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain"); got != "M  s.txt" {
		t.Fatalf("after the commit of a.txt alone: %q", got)
	}
	if got := gittest.Git(t, dir, "cat-file", "commit", "HEAD"); !strings.HasSuffix(got, "\n\nsubject\n\n\n# not a comment") {
		t.Fatalf("the message was cleaned up:\n%s", got)
	}
	if err := r.Commit(ctx, CommitOptions{Amend: true}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "show", "--name-only", "--format=%s%n%P", "HEAD"); got != "subject\n"+ids["three"]+"\n\na.txt\ns.txt" {
		t.Fatalf("after the amend: %q", got)
	}

	todo := filepath.Join(t.TempDir(), "todo")
	writeTestFile(t, todo, "pick "+ids["one"]+"\nbreak\n")
	rebasing := r.With(Exec{Env: []string{"GIT_SEQUENCE_EDITOR=cp " + todo, "GIT_EDITOR=true"}})
	if err := rebasing.RebaseInteractive(ctx, ids["base"]); err != nil {
		t.Fatal(err)
	}
	if r.Operation() != "rebase" {
		t.Fatal("no rebase stopped at the break")
	}
	if err := r.RebaseAbort(ctx); err != nil || r.Operation() != "" {
		t.Fatalf("RebaseAbort: %v, %q under way", err, r.Operation())
	}
	if err := rebasing.RebaseInteractive(ctx, ids["base"]); err != nil {
		t.Fatal(err)
	}
	if err := rebasing.RebaseContinue(ctx); err != nil || r.Operation() != "" {
		t.Fatalf("RebaseContinue: %v, %q under way", err, r.Operation())
	}
	if got := gittest.Git(t, dir, "log", "--format=%s", "main"); got != "one\nbase" {
		t.Fatalf("main after the rebase: %q", got)
	}

	gittest.Git(t, dir, "switch", "-q", "--detach", ids["two"])
	writeTestFile(t, filepath.Join(dir, "a.txt"), "conflict\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "conflict")
	if _, err := r.Git(ctx, "cherry-pick", ids["one"]); err == nil || r.Operation() != "cherry-pick" {
		t.Fatalf("the cherry-pick did not stop: %v", err)
	}
	if err := r.CherryPickQuit(ctx); err != nil || r.Operation() != "" {
		t.Fatalf("CherryPickQuit: %v, %q under way", err, r.Operation())
	}
}

// TestRefVerbs: HEAD's branch moved by compare-and-swap with its reason
// in the reflogs, ORIG_HEAD set, refs packed, a prefix's commits listed,
// and unreachable objects pruned.
func TestRefVerbs(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	if err := r.UpdateRef(ctx, "test: wrong old", "HEAD", ids["one"], ids["two"]); err == nil {
		t.Fatal("UpdateRef from a wrong old value: no error")
	}
	if err := r.UpdateRef(ctx, "test: must not exist", "refs/heads/side", ids["one"], ""); err == nil {
		t.Fatal("UpdateRef of an existing ref from none: no error")
	}
	if err := r.UpdateRef(ctx, "test: back", "HEAD", ids["one"], ids["three"]); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "reflog", "-1", "--format=%H %gs", "main"); got != ids["one"]+" test: back" {
		t.Fatalf("main's reflog: %q", got)
	}
	if err := r.SetOrigHead(ctx, ids["three"]); err != nil || gittest.Git(t, dir, "rev-parse", "ORIG_HEAD") != ids["three"] {
		t.Fatalf("SetOrigHead: %v", err)
	}
	if err := r.UpdateRef(ctx, "test", "refs/crucible/x/b", ids["two"], ""); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "update-ref", "refs/crucible/x/a", ids["merge"])
	if err := r.PackRefs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "crucible", "x", "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a loose ref is left: %v", err)
	}
	commits, err := r.RefCommits(ctx, "refs/crucible/x/")
	want := []RefCommit{
		{ids["merge"], gittest.Git(t, dir, "rev-parse", ids["merge"]+"^{tree}"), "merge\n"},
		{ids["two"], gittest.Git(t, dir, "rev-parse", ids["two"]+"^{tree}"), "two\n"},
	}
	if err != nil || !reflect.DeepEqual(commits, want) {
		t.Fatalf("RefCommits = %q, %v\nwant %q", commits, err, want)
	}
	if commits, err := r.RefCommits(ctx, "refs/none/"); err != nil || len(commits) != 0 {
		t.Fatalf("RefCommits of no ref = %q, %v", commits, err)
	}
	blob := gittest.GitInput(t, dir, "unreachable", "hash-object", "-w", "--stdin")
	if err := r.PruneNow(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CatFile(ctx, "blob", blob); err == nil {
		t.Fatal("an unreachable blob survived PruneNow")
	}
}
