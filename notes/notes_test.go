package notes

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

var ctx = context.Background()

// setup makes a hermetic repository and opens it.
func setup(t testing.TB) (*gitext.Repo, string) {
	t.Helper()
	dir := gittest.Init(t)
	t.Chdir(dir)
	repo, err := gitext.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
		}
	})
	return repo, dir
}

// key is an object id for the i-th annotated object. Notes may annotate
// ids the repository lacks; git accepts them too.
func key(i int) string {
	sum := sha1.Sum([]byte(fmt.Sprint("object ", i)))
	return hex.EncodeToString(sum[:])
}

// crafted returns ids that fill every slot of the root, of ab/, of ab/cd/
// and of ab/cd/ef/ twice, so that git fans a tree holding them out to four
// levels there: ab/cd/ef/01/….
func crafted() []string {
	var out []string
	for _, prefix := range []string{"", "ab", "abcd", "abcdef"} {
		for d := 0; d < 16; d++ {
			for j := 0; j < 2; j++ {
				k := fmt.Sprintf("%s%x%x", prefix, d, j) + key(len(out))
				out = append(out, k[:40])
			}
		}
	}
	return out
}

func mustAppend(t testing.TB, repo *gitext.Repo, ref, object string, lines ...string) {
	t.Helper()
	var bs [][]byte
	for _, l := range lines {
		bs = append(bs, []byte(l))
	}
	if err := Append(ctx, repo, ref, object, bs...); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t testing.TB, repo *gitext.Repo, ref, object string) string {
	t.Helper()
	note, ok, err := Read(ctx, repo, ref, object)
	if err != nil || !ok {
		t.Fatalf("Read(%s, %s) = %v, %v", ref, object, ok, err)
	}
	return string(note)
}

// treeLog lists the trees of ref's commits, oldest first.
func treeLog(t testing.TB, dir, ref string) []string {
	t.Helper()
	return strings.Fields(gittest.Git(t, dir, "log", "--reverse", "--format=%T", ref))
}

// TestFanoutMatchesGit adds the same notes one by one with git notes add and
// with Append: after every single note the two trees must be identical,
// through fan-outs 0 to 4 (a bug in the layout rule shows as a different
// tree at the step that triggers it). Then git's notes read back through
// Read, at every depth.
func TestFanoutMatchesGit(t *testing.T) {
	repo, dir := setup(t)
	keys := crafted()
	for i := 0; len(keys) < 320; i++ {
		keys = append(keys, key(1000+i))
	}
	// Interleave so that the root fills up while ab/ grows.
	for i := range keys {
		j := (i * 7919) % len(keys)
		keys[i], keys[j] = keys[j], keys[i]
	}
	for i, k := range keys {
		msg := fmt.Sprintf("note %d", i)
		gittest.Git(t, dir, "notes", "--ref=git", "add", "-m", msg, k)
		mustAppend(t, repo, "refs/notes/ours", k, msg)
	}
	git, ours := treeLog(t, dir, "refs/notes/git"), treeLog(t, dir, "refs/notes/ours")
	if len(git) != len(keys) || len(ours) != len(keys) {
		t.Fatalf("%d git commits, %d ours, for %d notes", len(git), len(ours), len(keys))
	}
	for i := range git {
		if git[i] != ours[i] {
			t.Fatalf("after note %d (%s): git's tree %s, ours %s\n%s", i, keys[i], git[i], ours[i],
				gittest.Git(t, dir, "diff", "--stat", git[i], ours[i]))
		}
	}
	deepest := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/notes/git", "ab/cd/ef/")
	if !strings.HasPrefix(deepest, "ab/cd/ef/") || strings.Count(strings.Fields(deepest)[0], "/") != 4 {
		t.Fatalf("git did not fan ab/cd/ef out: %q", deepest)
	}
	r, err := NewReader(ctx, repo, "refs/notes/git")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, k := range keys {
		note, ok, err := r.Read(ctx, k)
		if want := fmt.Sprintf("note %d\n", i); err != nil || !ok || string(note) != want {
			t.Fatalf("Read(%s) = %q, %v, %v; want %q", k, note, ok, err, want)
		}
	}
	if note, ok, err := r.Read(ctx, key(1)); err != nil || ok || note != nil {
		t.Fatalf("Read(no note) = %q, %v, %v", note, ok, err)
	}
}

// TestAppendThenGit: what Append writes is what git notes show prints, git
// appends after us, and we read and extend what git wrote.
func TestAppendThenGit(t *testing.T) {
	repo, dir := setup(t)
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	const ref = "refs/notes/crucible/provenance"
	if _, ok, err := Read(ctx, repo, ref, head); ok || err != nil {
		t.Fatalf("note before any write: %v, %v", ok, err)
	}
	mustAppend(t, repo, ref, head, `{"pipeline":"p","phase":1}`, "second", "second", `{"pipeline":"p","phase":1}`)
	if got := gittest.Git(t, dir, "notes", "--ref="+ref, "show", head); got != "{\"pipeline\":\"p\",\"phase\":1}\nsecond" {
		t.Fatalf("git notes show: %q", got)
	}
	gittest.Git(t, dir, "notes", "--ref="+ref, "append", "-m", "by git", head)
	if got := mustRead(t, repo, ref, head); got != "{\"pipeline\":\"p\",\"phase\":1}\nsecond\n\nby git\n" {
		t.Fatalf("after git notes append: %q", got)
	}
	tip := gittest.Git(t, dir, "rev-parse", ref)
	mustAppend(t, repo, ref, head, "second", "by git") // nothing new: no commit
	if now := gittest.Git(t, dir, "rev-parse", ref); now != tip {
		t.Fatal("an append of present lines made a commit")
	}
	mustAppend(t, repo, ref, head, "third")
	if got := gittest.Git(t, dir, "log", "-1", "--format=%N", "--notes="+ref); got != "{\"pipeline\":\"p\",\"phase\":1}\nsecond\n\nby git\nthird" {
		t.Fatalf("git log --notes: %q", got)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--format=%an <%ae> %cI|%P|%B", ref); got != "git-crucible <notes@git-crucible> 2026-11-22T10:00:00+00:00|"+tip+"|Notes added by 'git crucible'" {
		t.Fatalf("notes commit: %q", got)
	}
	if err := Append(ctx, repo, ref, head, []byte("two\nlines")); err == nil {
		t.Fatal("a line with a newline was accepted")
	}
	if err := Append(ctx, repo, ref, "HEAD", []byte("x")); err == nil {
		t.Fatal("a revision that is no object id was accepted")
	}
	if err := Append(ctx, repo, "refs/heads/main", head, []byte("x")); err == nil {
		t.Fatal("a notes ref outside refs/notes/ was accepted")
	}
	if err := Append(ctx, repo, "refs/notes/../../x", head, []byte("x")); err == nil {
		t.Fatal("a notes ref leaving refs/ was accepted")
	}
}

// TestThousandsOfNotes copies one note to 3,000 objects with Copy and with
// git notes copy --stdin: the same tree, every note listed by git and read
// back by us, and a further note by either gives the same tree again.
func TestThousandsOfNotes(t *testing.T) {
	repo, dir := setup(t)
	src := key(0)
	gittest.Git(t, dir, "notes", "--ref=git", "add", "-m", "source", src)
	gittest.Git(t, dir, "update-ref", "refs/notes/ours", "refs/notes/git")
	var pairs []Rewrite
	var stdin strings.Builder
	for i := 1; i <= 3000; i++ {
		pairs = append(pairs, Rewrite{Old: src, New: key(i)})
		fmt.Fprintf(&stdin, "%s %s\n", src, key(i))
	}
	for _, k := range crafted() {
		pairs = append(pairs, Rewrite{Old: src, New: k})
		fmt.Fprintf(&stdin, "%s %s\n", src, k)
	}
	cmd := exec.Command("git", "notes", "--ref=git", "copy", "--stdin")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git notes copy: %v\n%s", err, out)
	}
	n, err := Copy(ctx, repo, "refs/notes/ours", pairs)
	if err != nil || n != len(pairs) {
		t.Fatalf("Copy = %d, %v; want %d", n, err, len(pairs))
	}
	if g, o := gittest.Git(t, dir, "rev-parse", "refs/notes/git^{tree}"), gittest.Git(t, dir, "rev-parse", "refs/notes/ours^{tree}"); g != o {
		t.Fatalf("git copied into tree %s, we into %s", g, o)
	}
	listed := strings.Split(gittest.Git(t, dir, "notes", "--ref=ours", "list"), "\n")
	if len(listed) != len(pairs)+1 {
		t.Fatalf("git lists %d notes, want %d", len(listed), len(pairs)+1)
	}
	r, err := NewReader(ctx, repo, "refs/notes/ours")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, line := range listed {
		_, object, _ := strings.Cut(line, " ")
		if note, ok, err := r.Read(ctx, object); err != nil || !ok || string(note) != "source\n" {
			t.Fatalf("Read(%s) = %q, %v, %v", object, note, ok, err)
		}
	}
	// One more note on the big tree, by each: only the path to it changes.
	extra := key(5000)
	gittest.Git(t, dir, "notes", "--ref=git", "add", "-m", "extra", extra)
	mustAppend(t, repo, "refs/notes/ours", extra, "extra")
	if g, o := gittest.Git(t, dir, "rev-parse", "refs/notes/git^{tree}"), gittest.Git(t, dir, "rev-parse", "refs/notes/ours^{tree}"); g != o {
		t.Fatalf("after one more note: git's tree %s, ours %s", g, o)
	}
	changed := gittest.Git(t, dir, "diff-tree", "-t", "--name-only", "refs/notes/ours~1", "refs/notes/ours")
	if want := extra[:2] + "\n" + extra[:2] + "/" + extra[2:]; changed != want {
		t.Fatalf("one note rewrote %q", changed)
	}
}

// TestConcurrentAppend: 8 writers appending at once, to one note and to
// their own, lose no line.
func TestConcurrentAppend(t *testing.T) {
	repo, dir := setup(t)
	const writers, each = 8, 12
	shared := key(0)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				line := []byte(fmt.Sprintf("writer %d line %d", w, i))
				if err := Append(ctx, repo, "refs/notes/x", shared, line); err != nil {
					errs <- err
					return
				}
				if err := Append(ctx, repo, "refs/notes/x", key(100+w), line); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	note := mustRead(t, repo, "refs/notes/x", shared)
	for w := 0; w < writers; w++ {
		own := mustRead(t, repo, "refs/notes/x", key(100+w))
		for i := 0; i < each; i++ {
			line := fmt.Sprintf("writer %d line %d\n", w, i)
			if !strings.Contains(note, line) || !strings.Contains(own, line) {
				t.Fatalf("lost %q", line)
			}
		}
	}
	if n := strings.Count(note, "\n"); n != writers*each {
		t.Fatalf("shared note has %d lines, want %d", n, writers*each)
	}
	if n := gittest.Git(t, dir, "rev-list", "--count", "refs/notes/x"); n != fmt.Sprint(2*writers*each) {
		t.Fatalf("%s notes commits, want one per append", n)
	}
}

// TestSHA256 lays out notes in a sha256 repository (64-digit names) as git
// does, and reads them back.
func TestSHA256(t *testing.T) {
	gittest.Hermetic(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "--object-format=sha256")
	t.Chdir(dir)
	repo, err := gitext.Discover(ctx)
	if err != nil || repo.HashLen() != 32 {
		t.Fatalf("Discover = %+v, %v", repo, err)
	}
	keys := crafted()
	for i := 0; i < 40; i++ {
		keys = append(keys, key(i))
	}
	for i, k := range keys {
		k += key(i)[:24]
		msg := fmt.Sprintf("note %d", i)
		gittest.Git(t, dir, "notes", "--ref=git", "add", "-m", msg, k)
		mustAppend(t, repo, "refs/notes/ours", k, msg)
		if got := mustRead(t, repo, "refs/notes/git", k); got != msg+"\n" {
			t.Fatalf("Read = %q", got)
		}
	}
	if g, o := treeLog(t, dir, "refs/notes/git"), treeLog(t, dir, "refs/notes/ours"); strings.Join(g, " ") != strings.Join(o, " ") {
		t.Fatalf("git's trees %v\nours %v", g, o)
	}
	deepest := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/notes/ours", "ab/cd/ef/")
	if !strings.HasPrefix(deepest, "ab/cd/ef/") || len(strings.Fields(deepest)[0]) != 64+4 {
		t.Fatalf("no ab/cd/ef/01/… fan-out: %q", deepest)
	}
	if err := Append(ctx, repo, "refs/notes/ours", key(0), []byte("x")); err == nil {
		t.Fatal("a sha1 id was accepted in a sha256 repository")
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

// TestStoredNeedsNoGit: Append starts only git's ref transaction and Read
// no git process at all, whether the trees on a note's path are loose (the
// previous note wrote them) or packed by a gc; objects only an alternate
// holds fall back to git cat-file.
func TestStoredNeedsNoGit(t *testing.T) {
	repo, dir := setup(t)
	mustAppend(t, repo, "refs/notes/x", key(1), "one")
	for _, k := range crafted()[:40] {
		mustAppend(t, repo, "refs/notes/x", k, "fanned out")
	}
	gittest.Git(t, dir, "gc", "-q", "--prune=now")
	tip := gittest.Git(t, dir, "rev-parse", "refs/notes/x")

	// A repository borrowing the objects: its notes are git's to read.
	other := t.TempDir()
	gittest.Git(t, other, "init", "-q")
	if err := os.WriteFile(filepath.Join(other, ".git", "objects", "info", "alternates"), []byte(repo.ObjectDir()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, other, "update-ref", "refs/notes/x", tip)
	borrowing := &gitext.Repo{GitDir: filepath.Join(other, ".git"), CommonDir: filepath.Join(other, ".git"), WorkTree: other, Format: repo.Format}

	onlyUpdateRef(t)
	if got := mustRead(t, repo, "refs/notes/x", key(1)); got != "one\n" {
		t.Fatalf("Read of a packed note = %q", got)
	}
	mustAppend(t, repo, "refs/notes/x", "ab"+key(3)[2:], "no git")
	mustAppend(t, repo, "refs/notes/x", "ab"+key(3)[2:], "still no git")
	if got := mustRead(t, repo, "refs/notes/x", "ab"+key(3)[2:]); got != "no git\nstill no git\n" {
		t.Fatalf("Read = %q", got)
	}
	if _, _, err := Read(ctx, borrowing, "refs/notes/x", key(1)); err == nil || !strings.Contains(err.Error(), "git cat-file") {
		t.Fatalf("a note in an alternate was read without git: %v", err)
	}
}

// onlyUpdateRef puts a git first on PATH that runs git update-ref --stdin
// (as BeginRefs runs it)
// and refuses anything else.
func onlyUpdateRef(t *testing.T) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \" $* \" in *' update-ref --create-reflog --stdin '*) exec " + real + " \"$@\";; esac\necho \"git $* refused\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
}

// TestAppendLeavesGCToGit: notes are written from hooks of git commands
// that run auto maintenance themselves, so Append never runs git gc,
// however many loose objects git's sample (objects/17) finds.
func TestAppendLeavesGCToGit(t *testing.T) {
	repo, dir := setup(t)
	gittest.Git(t, dir, "config", "gc.auto", "256") // a limit of 1 in objects/17
	gittest.Git(t, dir, "config", "gc.autoDetach", "false")
	for i := 0; ; i++ {
		if sample, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "17", "*")); len(sample) >= 3 {
			break
		}
		mustAppend(t, repo, "refs/notes/x", key(i), "a note")
		if packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(packs) != 0 {
			t.Fatalf("note %d: Append ran git gc: %v", i, packs)
		}
	}
}

// TestAppendEach: notes on several objects in one notes commit, none when
// every line is there already.
func TestAppendEach(t *testing.T) {
	repo, dir := setup(t)
	const ref = "refs/notes/crucible/gates"
	batch := []Lines{{Object: key(1), Lines: [][]byte{[]byte("a"), []byte("b")}}, {Object: key(2), Lines: [][]byte{[]byte("c")}}}
	if err := AppendEach(ctx, repo, ref, batch); err != nil {
		t.Fatal(err)
	}
	if n := gittest.Git(t, dir, "rev-list", "--count", ref); n != "1" {
		t.Fatalf("%s notes commits, want 1", n)
	}
	if got := mustRead(t, repo, ref, key(1)) + mustRead(t, repo, ref, key(2)); got != "a\nb\nc\n" {
		t.Fatalf("notes: %q", got)
	}
	tip := gittest.Git(t, dir, "rev-parse", ref)
	if err := AppendEach(ctx, repo, ref, batch[1:]); err != nil {
		t.Fatal(err)
	}
	if now := gittest.Git(t, dir, "rev-parse", ref); now != tip {
		t.Fatal("a batch of present lines made a commit")
	}
	if err := AppendEach(ctx, repo, ref, []Lines{{Object: key(3), Lines: [][]byte{[]byte("x\ny")}}}); err == nil {
		t.Fatal("a line with a newline was accepted")
	}
}
