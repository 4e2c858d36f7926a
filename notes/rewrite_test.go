package notes

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// commit makes an empty commit on HEAD and returns its id.
func commit(t testing.TB, dir, msg string) string {
	t.Helper()
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return gittest.Git(t, dir, "rev-parse", "HEAD")
}

// TestCopyAmend is post-rewrite after git commit --amend: the new commit
// gets the old one's note as is, and a second copy changes nothing.
func TestCopyAmend(t *testing.T) {
	repo, dir := setup(t)
	const ref = "refs/notes/crucible/provenance"
	old := commit(t, dir, "work")
	mustAppend(t, repo, ref, old, `{"pipeline":"p","phase":3,"seq":4}`, "second line")
	gittest.Git(t, dir, "commit", "-q", "--amend", "--allow-empty", "-m", "work, amended")
	amended := gittest.Git(t, dir, "rev-parse", "HEAD")
	n, err := Copy(ctx, repo, ref, []Rewrite{{Old: old, New: amended}})
	if err != nil || n != 1 {
		t.Fatalf("Copy = %d, %v", n, err)
	}
	if got := gittest.Git(t, dir, "notes", "--ref="+ref, "show", amended); got != "{\"pipeline\":\"p\",\"phase\":3,\"seq\":4}\nsecond line" {
		t.Fatalf("amended commit's note: %q", got)
	}
	if a, b := gittest.Git(t, dir, "notes", "--ref="+ref, "list", old), gittest.Git(t, dir, "notes", "--ref="+ref, "list", amended); a != b {
		t.Fatalf("the copy is not the same note: %s, %s", a, b)
	}
	tip := gittest.Git(t, dir, "rev-parse", ref)
	if n, err := Copy(ctx, repo, ref, []Rewrite{{Old: old, New: amended}, {Old: amended, New: amended}}); err != nil || n != 0 {
		t.Fatalf("second Copy = %d, %v", n, err)
	}
	if gittest.Git(t, dir, "rev-parse", ref) != tip {
		t.Fatal("a copy that changed nothing made a commit")
	}
}

// TestCopySquash is post-rewrite after a squash or fixup: the commits that
// became one all bring their lines, once each, after the lines the new
// commit already has (say, copied by git's notes.rewriteRef), in order.
func TestCopySquash(t *testing.T) {
	repo, dir := setup(t)
	const ref = "refs/notes/x"
	a, b, c := commit(t, dir, "a"), commit(t, dir, "b"), commit(t, dir, "c")
	noNote := commit(t, dir, "d")
	mustAppend(t, repo, ref, a, "from a", "shared")
	mustAppend(t, repo, ref, b, "from b", "shared")
	gittest.Git(t, dir, "notes", "--ref=x", "add", "-m", "from c", c)
	gittest.Git(t, dir, "reset", "-q", "--soft", "HEAD~4")
	squashed := commit(t, dir, "a+b+c+d")
	gittest.Git(t, dir, "notes", "--ref=x", "add", "-m", "from b", squashed) // already there
	n, err := Copy(ctx, repo, ref, []Rewrite{{a, squashed}, {b, squashed}, {c, squashed}, {noNote, squashed}})
	if err != nil || n != 1 {
		t.Fatalf("Copy = %d, %v", n, err)
	}
	if got := mustRead(t, repo, ref, squashed); got != "from b\nfrom a\nshared\nfrom c\n" {
		t.Fatalf("squashed note: %q", got)
	}
	if got := mustRead(t, repo, ref, a); got != "from a\nshared\n" {
		t.Fatalf("the old commit's note changed: %q", got)
	}
	if got := gittest.Git(t, dir, "rev-list", "--count", ref); got != "5" {
		t.Fatalf("%s notes commits, want 5 (4 adds, 1 copy)", got)
	}
	if _, err := Copy(ctx, repo, ref, []Rewrite{{a, "HEAD"}}); err == nil {
		t.Fatal("Copy accepted a revision that is no object id")
	}
}

// TestMerge covers the three outcomes: fast-forward (also onto a missing
// ref), already up to date, and two diverged histories joined by a merge
// commit holding the union of both sides' lines.
func TestMerge(t *testing.T) {
	repo, dir := setup(t)
	const ref, remote = "refs/notes/crucible/provenance", "refs/crucible-remote/origin/notes/crucible/provenance"
	c1, c2, c3 := commit(t, dir, "1"), commit(t, dir, "2"), commit(t, dir, "3")
	// The other clone writes refs/notes/theirs; a fetch brings it to remote.
	theirSide := func(object, line string) {
		mustAppend(t, repo, "refs/notes/theirs", object, line)
		gittest.Git(t, dir, "update-ref", remote, "refs/notes/theirs")
	}
	theirSide(c1, "base")

	res, err := Merge(ctx, repo, ref, remote)
	base := gittest.Git(t, dir, "rev-parse", remote)
	if err != nil || res != (MergeResult{FastForward, base}) || gittest.Git(t, dir, "rev-parse", ref) != base {
		t.Fatalf("Merge into a missing ref = %+v, %v", res, err)
	}
	theirSide(c1, "theirs 1")
	if res, err = Merge(ctx, repo, ref, remote); err != nil || res.Outcome != FastForward || res.Commit != gittest.Git(t, dir, "rev-parse", remote) {
		t.Fatalf("fast-forward = %+v, %v", res, err)
	}
	if res, err = Merge(ctx, repo, ref, base); err != nil || res.Outcome != UpToDate || res.Commit != gittest.Git(t, dir, "rev-parse", ref) {
		t.Fatalf("merging an ancestor = %+v, %v", res, err)
	}
	if res, err = Merge(ctx, repo, ref, remote); err != nil || res.Outcome != UpToDate {
		t.Fatalf("merging the same commit = %+v, %v", res, err)
	}

	// Diverge: both sides write to c1 and c2, each alone to one commit.
	mustAppend(t, repo, ref, c1, "ours 1")
	mustAppend(t, repo, ref, c2, "ours 2", "both 2")
	mustAppend(t, repo, ref, c3, "ours 3")
	theirSide(c1, "theirs 1b")
	theirSide(c2, "both 2")
	theirSide(c2, "theirs 2")
	theirSide(base, "theirs on a commit id") // any object may carry a note
	ours, theirs := gittest.Git(t, dir, "rev-parse", ref), gittest.Git(t, dir, "rev-parse", remote)
	res, err = Merge(ctx, repo, ref, remote)
	if err != nil || res.Outcome != Merged || gittest.Git(t, dir, "rev-parse", ref) != res.Commit {
		t.Fatalf("divergent Merge = %+v, %v", res, err)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--format=%P|%an|%s", ref); got != ours+" "+theirs+"|git-crucible|Notes merged by 'git crucible'" {
		t.Fatalf("merge commit: %q", got)
	}
	for object, want := range map[string]string{
		c1:   "base\ntheirs 1\nours 1\ntheirs 1b",
		c2:   "ours 2\nboth 2\ntheirs 2",
		c3:   "ours 3",
		base: "theirs on a commit id",
	} {
		if got := gittest.Git(t, dir, "notes", "--ref="+ref, "show", object); got != want {
			t.Errorf("note on %s: %q, want %q", object[:7], got, want)
		}
	}
	if res, err = Merge(ctx, repo, ref, theirs); err != nil || res.Outcome != UpToDate {
		t.Fatalf("merging again = %+v, %v", res, err)
	}
	if _, err = Merge(ctx, repo, ref, "refs/crucible-remote/none"); err == nil {
		t.Fatal("merging a missing ref succeeded")
	}
	if _, err = Merge(ctx, repo, ref, "origin/main"); err == nil {
		t.Fatal("merging an abbreviated name succeeded")
	}
}

// TestMergeUnrelatedLarge joins two clones' notes that began apart (no
// common ancestor), both fanned out, overlapping on 500 objects and a few
// flat ones: every note of both sides is there afterwards, the
// overlapping ones joined.
func TestMergeUnrelatedLarge(t *testing.T) {
	repo, dir := setup(t)
	spread := func(ref, line string, from, to int) {
		mustAppend(t, repo, ref, key(from), line)
		var pairs []Rewrite
		for i := from + 1; i < to; i++ {
			pairs = append(pairs, Rewrite{Old: key(from), New: key(i)})
		}
		if _, err := Copy(ctx, repo, ref, pairs); err != nil {
			t.Fatal(err)
		}
	}
	spread("refs/notes/theirs", "theirs", 0, 1000)
	spread("refs/notes/ours", "ours", 500, 1500)
	res, err := Merge(ctx, repo, "refs/notes/ours", "refs/notes/theirs")
	if err != nil || res.Outcome != Merged {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	listed := strings.Split(gittest.Git(t, dir, "notes", "--ref=ours", "list"), "\n")
	if len(listed) != 1500 {
		t.Fatalf("%d notes after the merge, want 1500", len(listed))
	}
	r, err := NewReader(ctx, repo, "refs/notes/ours")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < 1500; i++ {
		want := "ours\ntheirs\n"
		if i < 500 {
			want = "theirs\n"
		} else if i >= 1000 {
			want = "ours\n"
		}
		note, _, err := r.Read(ctx, key(i))
		if err != nil || string(note) != want {
			t.Fatalf("note %d: %q, %v; want %q", i, note, err, want)
		}
	}
}

// writeNotesTree commits a notes tree with exactly the given files (path
// to content), whatever their layout, as git's plumbing would, and points
// ref at it.
func writeNotesTree(t *testing.T, repo *gitext.Repo, dir, ref string, files map[string]string) {
	t.Helper()
	var info strings.Builder
	for path, content := range files {
		oid, err := repo.WriteObject("blob", []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&info, "100644 %s\t%s\n", oid, path)
	}
	index := filepath.Join(t.TempDir(), "index")
	cmd := exec.Command("git", "update-index", "--add", "--index-info")
	cmd.Dir, cmd.Stdin, cmd.Env = dir, strings.NewReader(info.String()), append(os.Environ(), "GIT_INDEX_FILE="+index)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-index: %v\n%s", err, out)
	}
	cmd = exec.Command("git", "write-tree")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_INDEX_FILE="+index)
	tree, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	c := gittest.Git(t, dir, "commit-tree", "-m", "hand-made notes", strings.TrimSpace(string(tree)))
	gittest.Git(t, dir, "update-ref", ref, c)
}

// TestForeignLayout starts from trees git did not lay out (fanned out too
// deep for their size, as fast-import does; a note stored at two depths;
// files that are no notes): Append rewrites them exactly as git notes add
// does, and reads them as git does.
func TestForeignLayout(t *testing.T) {
	repo, dir := setup(t)
	k1, k2, k3 := "abcd"+key(1)[4:], "abce"+key(2)[4:], "12"+key(3)[2:]
	deep := map[string]string{
		"ab/cd/" + k1[4:]: "one\n",
		"ab/ce/" + k2[4:]: "two\n",
		"12/" + k3[2:]:    "three\n",
		"README":          "not a note\n",
		"ab/notes.txt":    "not a note either\n",
	}
	writeNotesTree(t, repo, dir, "refs/notes/git", deep)
	writeNotesTree(t, repo, dir, "refs/notes/ours", deep)
	for _, k := range []string{k1, key(4)} {
		// What Append makes of the note, given whole to git.
		want := map[string]string{k1: "one\nmore\n", key(4): "more\n"}[k]
		file := filepath.Join(t.TempDir(), "note")
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "notes", "--ref=git", "add", "-f", "-F", file, k)
		mustAppend(t, repo, "refs/notes/ours", k, "more")
		if g, o := gittest.Git(t, dir, "rev-parse", "refs/notes/git^{tree}"), gittest.Git(t, dir, "rev-parse", "refs/notes/ours^{tree}"); g != o {
			t.Fatalf("git's tree\n%s\nours\n%s", gittest.Git(t, dir, "ls-tree", "-r", "refs/notes/git"), gittest.Git(t, dir, "ls-tree", "-r", "refs/notes/ours"))
		}
	}
	if got := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/notes/ours"); !strings.Contains(got, "README\nab/notes.txt") {
		t.Fatalf("files that are no notes were lost:\n%s", got)
	}
	if got := mustRead(t, repo, "refs/notes/ours", k1); got != "one\nmore\n" {
		t.Fatalf("note k1: %q", got)
	}

	// One object noted twice, flat and fanned out: one note of both lines.
	writeNotesTree(t, repo, dir, "refs/notes/twice", map[string]string{k1: "flat\nshared\n", "ab/" + k1[2:]: "deep\nshared\n"})
	if got := mustRead(t, repo, "refs/notes/twice", k1); got != "deep\nshared\nflat\n" {
		t.Fatalf("note stored twice reads %q", got)
	}
	mustAppend(t, repo, "refs/notes/twice", k1, "new")
	got := gittest.Git(t, dir, "ls-tree", "-r", "refs/notes/twice")
	if strings.Count(got, "\n") != 0 || !strings.HasSuffix(got, "\t"+k1) {
		t.Fatalf("the two notes were not made one:\n%s", got)
	}
	if got := mustRead(t, repo, "refs/notes/twice", k1); got != "deep\nshared\nflat\nnew\n" {
		t.Fatalf("after Append: %q", got)
	}
}

// TestGitRewriteThenCopy: when git's own notes.rewriteRef already copied the
// note on amend, the post-rewrite Copy finds nothing to add.
func TestGitRewriteThenCopy(t *testing.T) {
	repo, dir := setup(t)
	const ref = "refs/notes/crucible/provenance"
	gittest.Git(t, dir, "config", "notes.rewriteRef", "refs/notes/crucible/*")
	gittest.Git(t, dir, "config", "notes.rewriteMode", "cat_sort_uniq")
	old := commit(t, dir, "work")
	mustAppend(t, repo, ref, old, "b line", "a line")
	gittest.Git(t, dir, "commit", "-q", "--amend", "--allow-empty", "-m", "amended")
	amended := gittest.Git(t, dir, "rev-parse", "HEAD")
	lines := strings.Split(mustRead(t, repo, ref, amended), "\n")
	sort.Strings(lines)
	if strings.Join(lines, ",") != ",a line,b line" {
		t.Fatalf("git's rewrite copied %q", lines)
	}
	if n, err := Copy(ctx, repo, ref, []Rewrite{{old, amended}}); err != nil || n != 0 {
		t.Fatalf("Copy after git's own copy = %d, %v", n, err)
	}
}
