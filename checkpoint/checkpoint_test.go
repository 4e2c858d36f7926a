package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

var ctx = context.Background()

func openShadow(t *testing.T) (*Shadow, string) {
	t.Helper()
	dir := gittest.Init(t)
	return openShadowIn(t, dir), dir
}

// openShadowIn opens the shadow of the repository at dir, from dir.
func openShadowIn(t *testing.T, dir string) *Shadow {
	t.Helper()
	t.Chdir(dir)
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPruneFreesObjects: a pruned checkpoint's unique content leaves the
// shadow's object store; what the kept ones hold stays.
func TestPruneFreesObjects(t *testing.T) {
	s, dir := openShadow(t)
	var blobs []string
	for i := 0; i < 3; i++ {
		content := strings.Repeat(string(rune('a'+i)), 5000)
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, "r", "test", ""); err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, s.repo.HashObject("blob", []byte(content)))
	}
	gone, err := s.Prune(ctx, 1, time.Hour)
	if err != nil || len(gone) != 2 {
		t.Fatalf("pruned %d, %v", len(gone), err)
	}
	has := func(oid string) bool {
		_, err := s.repo.Git(context.Background(), "cat-file", "-e", oid)
		return err == nil
	}
	if has(blobs[0]) || has(blobs[1]) {
		t.Fatal("a pruned checkpoint's content is still in the shadow")
	}
	if !has(blobs[2]) {
		t.Fatal("the kept checkpoint's content is gone")
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v, %v", list, err)
	}
}

// TestDamagedShadowIsReported: a shadow that lost its HEAD is reported and
// left as it is, never re-created over what it still holds.
func TestDamagedShadowIsReported(t *testing.T) {
	s, _ := openShadow(t)
	if _, err := s.Create(ctx, "r", "test", ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.Dir(), "HEAD")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), s.main)
	if err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Fatalf("Open = %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "objects")); err != nil {
		t.Fatal("the damaged shadow's objects were touched")
	}
}

func TestProgressSteps(t *testing.T) {
	s, _ := openShadow(t)
	var steps []string
	s.Progress = func(step string) { steps = append(steps, step) }
	if _, err := s.Create(ctx, "r", "test", ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(steps, ", "); got != "looking for changes, adding files, writing the tree" {
		t.Fatalf("steps: %s", got)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, s *Shadow, reason string) *Result {
	t.Helper()
	r, err := s.Create(ctx, reason, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// files lists a checkpoint's paths with their modes.
func files(t *testing.T, s *Shadow, c *Checkpoint) string {
	t.Helper()
	f, err := s.Files(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(f, ", ")
}

// TestStaleRecordsFallBack: a records file that misses the newest
// checkpoint (a create killed between its ref and the file), or is
// damaged or gone, is not trusted: an unchanged tree still gives back
// exactly the newest checkpoint, and the file is rewritten whole.
func TestStaleRecordsFallBack(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "a")
	first := mustCreate(t, s, "first")
	old, err := os.ReadFile(s.recordsPath())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.txt"), "b")
	second := mustCreate(t, s, "second")
	for name, content := range map[string][]byte{"stale": old, "damaged": old[:len(old)-3], "missing": nil} {
		if content == nil {
			os.Remove(s.recordsPath())
		} else if err := os.WriteFile(s.recordsPath(), content, 0o644); err != nil {
			t.Fatal(err)
		}
		r := mustCreate(t, s, "again")
		if !r.Unchanged || r.ID != second.ID || r.Seq != 2 {
			t.Fatalf("%s records: got %s (seq %d, unchanged %v), want %s", name, r.ID, r.Seq, r.Unchanged, second.ID)
		}
		b, _ := os.ReadFile(s.recordsPath())
		if recs := decodeRecords(b); len(recs) != 2 || recs[first.ID].tree != first.Tree || recs[second.ID].tree != second.Tree {
			t.Fatalf("%s records were not rewritten: %q", name, b)
		}
	}
}

// TestOlderShadowUpgraded: a shadow made before the shadow settings
// existed (no settings, no attributes, no records, nested repositories in
// its excludes, no branch) gets them on open, once, and goes on exactly.
func TestOlderShadowUpgraded(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "a")
	first := mustCreate(t, s, "first")
	cfg, _ := os.ReadFile(filepath.Join(s.Dir(), "config"))
	before, _, ok := strings.Cut(string(cfg), shadowConfig)
	if !ok {
		t.Fatalf("no settings in the config:\n%s", cfg)
	}
	writeFile(t, filepath.Join(s.Dir(), "config"), before)
	writeFile(t, filepath.Join(s.Dir(), "info", "exclude"), "/nested/\n")
	for _, p := range []string{"info/attributes", "crucible-checkpoints", "refs/heads/main"} {
		if err := os.Remove(filepath.Join(s.Dir(), p)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		var err error
		if s, err = Open(context.Background(), s.main); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ = os.ReadFile(filepath.Join(s.Dir(), "config"))
	if strings.Count(string(cfg), shadowConfig) != 1 {
		t.Fatalf("config after two opens:\n%s", cfg)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Dir(), "info", "attributes")); string(b) != shadowAttributes {
		t.Fatalf("attributes: %q", b)
	}
	if r := mustCreate(t, s, "again"); !r.Unchanged || r.ID != first.ID {
		t.Fatalf("unchanged tree gave %s, want %s", r.ID, first.ID)
	}
	if head := gittest.Git(t, dir, "--git-dir="+s.Dir(), "rev-parse", "HEAD"); head != first.ID {
		t.Fatalf("the shadow's HEAD is %s, want the newest checkpoint %s", head, first.ID)
	}
	writeFile(t, filepath.Join(dir, "nested", "x"), "no longer excluded")
	if r := mustCreate(t, s, "nested"); r.Unchanged || !strings.Contains(files(t, s, &r.Checkpoint), "nested/x") {
		t.Fatalf("nested/x missing: %+v", r)
	}
}

// TestNestedRepositories: nested repositories, with and without a commit,
// are left out and reported on every create; one that stops being a
// repository comes in; one that appears later is left out too.
func TestNestedRepositories(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "top.txt"), "top")
	for _, n := range []string{"empty", "sub/full"} {
		writeFile(t, filepath.Join(dir, n, "inner.txt"), n)
		gittest.Git(t, filepath.Join(dir, n), "init", "-q")
	}
	gittest.Git(t, filepath.Join(dir, "sub", "full"), "add", "inner.txt")
	gittest.Git(t, filepath.Join(dir, "sub", "full"), "commit", "-q", "-m", "nested")
	r := mustCreate(t, s, "one")
	if got := strings.Join(r.Skipped, ", "); got != "empty, sub/full" {
		t.Fatalf("skipped %q", got)
	}
	if got := files(t, s, &r.Checkpoint); got != "100644 top.txt" {
		t.Fatalf("files: %s", got)
	}
	if err := os.RemoveAll(filepath.Join(dir, "empty", ".git")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "later", "x"), "x")
	gittest.Git(t, filepath.Join(dir, "later"), "init", "-q")
	r = mustCreate(t, s, "two")
	if got := strings.Join(r.Skipped, ", "); got != "later, sub/full" {
		t.Fatalf("skipped %q", got)
	}
	if got := files(t, s, &r.Checkpoint); got != "100644 empty/inner.txt, 100644 top.txt" {
		t.Fatalf("files: %s", got)
	}
}

// TestBeyondSymlink: a tracked directory replaced by a symbolic link is
// something update-index refuses; the whole-tree add takes it, and the
// checkpoint holds the link, not what is behind it.
func TestBeyondSymlink(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "d", "b.txt"), "b")
	writeFile(t, filepath.Join(dir, "out", "b.txt"), "outside")
	mustCreate(t, s, "one")
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("out", filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	r := mustCreate(t, s, "two")
	if got := files(t, s, &r.Checkpoint); got != "120000 d, 100644 out/b.txt" {
		t.Fatalf("files: %s", got)
	}
}

// TestDiffTreesMatchesGit: the in-process comparison of two checkpoints
// gives git diff-tree's changes, in its order, for every pair of a series
// of trees with edits, additions, deletions, a mode change, a file turned
// symbolic link, a file turned directory and back, and an emptied tree;
// with the trees loose, then packed by a gc of the shadow.
func TestDiffTreesMatchesGit(t *testing.T) {
	s, dir := openShadow(t)
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	steps := []func(){
		func() {
			writeFile(t, p("a.txt"), "a")
			writeFile(t, p("d/e/f.txt"), "f")
			writeFile(t, p("d/g.txt"), "g")
			writeFile(t, p("x.txt"), "x")
			writeFile(t, p("x0"), "x0")
		},
		func() {
			writeFile(t, p("a.txt"), "a2")
			os.Chmod(p("d/g.txt"), 0o755)
			os.Remove(p("x.txt"))
			os.Symlink("a.txt", p("x.txt"))
			writeFile(t, p("new/deep/n.txt"), "n")
		},
		func() {
			os.Remove(p("a.txt"))
			writeFile(t, p("a.txt/inner"), "now a directory")
			os.RemoveAll(p("d"))
			writeFile(t, p("d"), "now a file")
		},
		func() {
			for _, e := range []string{"a.txt", "d", "new", "x.txt", "x0"} {
				os.RemoveAll(p(e))
			}
			writeFile(t, p("only.txt"), "o")
		},
	}
	var trees []string
	for i, step := range steps {
		step()
		trees = append(trees, mustCreate(t, s, fmt.Sprint("step-", i)).Tree)
	}
	compare := func(stored string) {
		for _, a := range trees {
			for _, b := range trees {
				var got []Change
				if err := s.diffTrees("", a, b, &got); err != nil {
					t.Fatalf("%s: %v", stored, err)
				}
				want := gittest.Git(t, dir, "--git-dir="+s.Dir(), "diff-tree", "-r", "--no-renames", "--name-status", a, b)
				var lines []string
				for _, c := range got {
					lines = append(lines, c.Op+"\t"+c.Path)
				}
				if strings.Join(lines, "\n") != want {
					t.Errorf("%s: %s..%s in process:\n%s\ngit:\n%s", stored, a[:7], b[:7], strings.Join(lines, "\n"), want)
				}
			}
		}
	}
	compare("loose")
	gittest.Git(t, dir, "--git-dir="+s.Dir(), "gc", "-q", "--prune=now")
	if _, _, err := s.repo.ReadLoose(trees[0]); !errors.Is(err, gitext.ErrMissing) {
		t.Fatalf("a tree is still loose after the gc: %v", err)
	}
	compare("packed")
}

// TestManyChanges: past maxListed changed paths the whole tree is added at
// once; nested repositories and files over the cap are still left out.
func TestManyChanges(t *testing.T) {
	s, dir := openShadow(t)
	gittest.Git(t, dir, "config", "crucible.checkpoint.maxFileSize", "10")
	for i := 0; i <= maxListed; i++ {
		writeFile(t, filepath.Join(dir, "many", fmt.Sprintf("f%03d", i)), "x")
	}
	writeFile(t, filepath.Join(dir, "big.bin"), "more than ten bytes")
	writeFile(t, filepath.Join(dir, "nested", "x"), "x")
	gittest.Git(t, filepath.Join(dir, "nested"), "init", "-q")
	r := mustCreate(t, s, "many")
	if strings.Join(r.Skipped, ",") != "nested" || len(r.TooLarge) != 1 || r.TooLarge[0] != "big.bin (19 bytes)" {
		t.Fatalf("skipped %v, too large %v", r.Skipped, r.TooLarge)
	}
	got := files(t, s, &r.Checkpoint)
	if n := strings.Count(got, "many/f"); n != maxListed+1 || strings.Contains(got, "big.bin") || strings.Contains(got, "nested") {
		t.Fatalf("%d of %d files, or more: %s", n, maxListed+1, got)
	}
}

// TestExcludesFileFollowsConfig: the status runs with the excludes file of
// the last create while git reads the config; when the repository's
// core.excludesFile changes, the very next checkpoint follows it.
func TestExcludesFileFollowsConfig(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "keep.txt"), "k")
	writeFile(t, filepath.Join(dir, "scratch.tmp"), "s")
	ignore := filepath.Join(t.TempDir(), "ignore")
	writeFile(t, ignore, "*.tmp\n")
	for i, want := range []string{"100644 keep.txt, 100644 scratch.tmp", "100644 keep.txt", "100644 keep.txt, 100644 scratch.tmp"} {
		switch i {
		case 1:
			gittest.Git(t, dir, "config", "core.excludesFile", ignore)
		case 2:
			gittest.Git(t, dir, "config", "--unset", "core.excludesFile")
		}
		// A fresh index each time: excludes only decide about untracked files.
		os.Remove(filepath.Join(s.Dir(), "index"))
		r := mustCreate(t, s, fmt.Sprint("step-", i))
		if got := files(t, s, &r.Checkpoint); got != want {
			t.Fatalf("step %d: %s, want %s", i, got, want)
		}
	}
}

// TestRefsPacked: past maxLoose loose checkpoint refs the shadow packs
// them, and every checkpoint is still listed and found exactly.
func TestRefsPacked(t *testing.T) {
	s, dir := openShadow(t)
	var ids []string
	for i := 0; i <= maxLoose+1; i++ {
		writeFile(t, filepath.Join(dir, "f.txt"), fmt.Sprint(i))
		ids = append(ids, mustCreate(t, s, fmt.Sprint("r", i)).ID)
	}
	loose, _ := os.ReadDir(filepath.Join(s.Dir(), "refs", "checkpoints"))
	if len(loose) > maxLoose {
		t.Fatalf("%d loose refs", len(loose))
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != len(ids) || list[0].ID != ids[len(ids)-1] {
		t.Fatalf("list of %d, %v", len(list), err)
	}
	if r := mustCreate(t, s, "same"); !r.Unchanged || r.ID != ids[len(ids)-1] {
		t.Fatalf("unchanged tree gave %s", r.ID)
	}
	if c, err := s.Find(ctx, "r3"); err != nil || c.ID != ids[3] {
		t.Fatalf("Find(r3) = %v, %v", c, err)
	}
}

// TestQuarantineDoesNotLeak: run where git's object-store variables point
// elsewhere (a push quarantine sets them for the receiving repository), the
// shadow is still created in, and writes to, its own object store.
func TestQuarantineDoesNotLeak(t *testing.T) {
	dir := gittest.Init(t)
	elsewhere := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "--bare", elsewhere)
	t.Setenv("GIT_OBJECT_DIRECTORY", filepath.Join(elsewhere, "objects"))
	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", filepath.Join(dir, ".git", "objects"))
	s := openShadowIn(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("quarantined\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := s.Create(ctx, "r", "test", "")
	if err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("GIT_OBJECT_DIRECTORY")
	os.Unsetenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")
	gittest.Git(t, dir, "--git-dir="+s.repo.GitDir, "fsck", "--strict", "--no-dangling")
	if got := gittest.Git(t, dir, "--git-dir="+s.repo.GitDir, "show", c.ID+":f.txt"); got != "quarantined" {
		t.Fatalf("the checkpoint reads %q from its own store", got)
	}
	if out, _ := exec.Command("git", "--git-dir="+elsewhere, "count-objects").Output(); !strings.HasPrefix(string(out), "0 objects") {
		t.Fatalf("objects leaked into the quarantine: %s", out)
	}
}
