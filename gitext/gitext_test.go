package gitext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestDiscoverMatchesGit checks the in-process discovery against git's own
// answer in every layout the fast path claims, and that it declines the rest.
func TestDiscoverMatchesGit(t *testing.T) {
	repo, sub, wt, bare := layouts(t)
	sha256 := filepath.Join(t.TempDir(), "sha256")
	gittest.Git(t, repo, "init", "-q", "--object-format=sha256", sha256)

	cases := []struct {
		name   string
		dir    string
		env    map[string]string
		fast   bool
		bare   bool
		common string
	}{
		{"top", repo, nil, true, false, filepath.Join(repo, ".git")},
		{"subdir", sub, nil, true, false, filepath.Join(repo, ".git")},
		{"linked worktree", wt, nil, true, false, filepath.Join(repo, ".git")},
		{"GIT_DIR", repo, map[string]string{"GIT_DIR": ".git"}, true, false, filepath.Join(repo, ".git")},
		{"SHA-256", sha256, nil, true, false, filepath.Join(sha256, ".git")},
		{"inside .git", filepath.Join(repo, ".git"), nil, false, false, filepath.Join(repo, ".git")},
		{"bare", bare, nil, false, true, bare},
		{"GIT_WORK_TREE", sub, map[string]string{"GIT_DIR": filepath.Join(repo, ".git"), "GIT_WORK_TREE": repo}, false, false, filepath.Join(repo, ".git")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(c.dir)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			want, err := discoverWithGit(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want.CommonDir != c.common || want.Bare != c.bare {
				t.Fatalf("git says common %s bare %v; want %s %v", want.CommonDir, want.Bare, c.common, c.bare)
			}
			got, ok := discoverFast()
			if ok != c.fast {
				t.Fatalf("fast path taken = %v, want %v", ok, c.fast)
			}
			if ok && *got != *want {
				t.Fatalf("fast discovery %+v, git %+v", *got, *want)
			}
		})
	}
}

// TestObjectFormat: the fast path reads the object format only as git
// init writes it, and leaves every other spelling to git.
func TestObjectFormat(t *testing.T) {
	for _, c := range []struct {
		cfg    string
		format string
		ok     bool
	}{
		{"[core]\n\tbare = false\n", "sha1", true},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n", "sha256", true},
		{"[extensions]\r\n\tobjectformat=sha1\r\n", "sha1", true},
		{"[extensions]\n\tobjectformat = \"sha256\"\n", "", false},
		{"[extensions]\n\tobjectformat = sha256 # comment\n", "", false},
		{"[extensions] objectformat = sha256\n", "", false},
		{"[core]\n\tobjectformat = sha256\n", "", false},
		{"[extensions]\n\tobjectformat = sha256\n\tobjectformat = sha1\n", "", false},
		{"[extensions]\n\tcompatobjectformat = sha1\n\tobjectformat = sha256\n", "", false},
		{"[extensions]\n\tx = a\\\n\tobjectformat = sha256\n", "", false},
		{"[core]\n\t# objectformat = sha256\n", "", false},
	} {
		format, ok := objectFormat([]byte(c.cfg))
		if format != c.format || ok != c.ok {
			t.Errorf("objectFormat(%q) = %q, %v; want %q, %v", c.cfg, format, ok, c.format, c.ok)
		}
	}
}

// layouts makes a repository with a subdirectory, a linked worktree and
// a bare clone.
func layouts(t *testing.T) (repo, sub, wt, bare string) {
	repo = gittest.Init(t)
	sub = filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wt = filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", wt, "-b", "side")
	bare = filepath.Join(t.TempDir(), "bare.git")
	gittest.Git(t, repo, "clone", "-q", "--bare", repo, bare)
	return repo, sub, wt, bare
}

func TestDiscoverOutsideRepository(t *testing.T) {
	gittest.Hermetic(t)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err := Discover(context.Background())
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != ExitFatal {
		t.Fatalf("err = %v, want git's exit-128 'not a git repository'", err)
	}
	if got := err.Error(); got != "fatal: not a git repository (or any of the parent directories): .git" {
		t.Fatalf("message %q", got)
	}
}

func openRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	dir := gittest.Init(t)
	t.Chdir(dir)
	r, err := Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// TestObjectsReadByGit writes a blob, tree and commit in process and has git
// read them back and fsck them.
func TestObjectsReadByGit(t *testing.T) {
	r, dir := openRepo(t)
	blob, err := r.WriteObject("blob", []byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if blob != "ce013625030ba8dba906f756967f9e9ca394464a" { // git hash-object of "hello\n"
		t.Fatalf("blob id %s", blob)
	}
	if got := gittest.Git(t, dir, "cat-file", "-p", blob); got != "hello" {
		t.Fatalf("blob reads back as %q", got)
	}
	data, err := EncodeTree([]TreeEntry{{Mode: "100644", Name: "b.txt", OID: blob}, {Mode: "100644", Name: "a.txt", OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteObject("tree", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "ls-tree", "--name-only", tree); got != "a.txt\nb.txt" {
		t.Fatalf("tree lists %q", got)
	}
	sig := Signature("Ada", "ada@example.com", mustDate(t, "2026-11-22T10:00:00Z"))
	c := Commit{Tree: tree, Author: sig, Committer: sig, Message: "m\n"}
	oid, err := r.WriteObject("commit", c.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--format=%T %an %aI %s", oid); got != tree+" Ada 2026-11-22T10:00:00+00:00 m" {
		t.Fatalf("commit reads back as %q", got)
	}
	if err := r.UpdateRefs(context.Background(), "test", RefUpdate{Name: "refs/test/x", New: oid}); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")

	or, err := r.NewObjectReader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer or.Close()
	body, err := or.ReadKind(oid, "commit")
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeCommit(body)
	if err != nil || back.Tree != tree || back.Message != "m\n" {
		t.Fatalf("DecodeCommit = %+v, %v", back, err)
	}
	raw, _ := or.ReadKind(tree, "tree")
	entries, err := DecodeTree(raw, r.HashLen())
	if err != nil || len(entries) != 2 || entries[0].Name != "a.txt" {
		t.Fatalf("DecodeTree = %+v, %v", entries, err)
	}
	if _, _, err := or.Read(strings.Repeat("0", 40)); !errors.Is(err, ErrMissing) {
		t.Fatalf("missing object: %v", err)
	}
}

func mustDate(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestSymrefs(t *testing.T) {
	r, dir := openRepo(t)
	if err := r.SetSymref("refs/crucible/active/main", "refs/crucible/pipelines/a", ""); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "symbolic-ref", "refs/crucible/active/main"); got != "refs/crucible/pipelines/a" {
		t.Fatalf("git reads %q", got)
	}
	if err := r.SetSymref("refs/crucible/active/main", "refs/crucible/pipelines/b", "refs/crucible/pipelines/x"); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("stale old target: %v", err)
	}
	if got, err := r.ReadSymref("refs/crucible/active/main"); got != "refs/crucible/pipelines/a" || err != nil {
		t.Fatalf("ReadSymref = %q, %v", got, err)
	}
}

func TestDeleteSymref(t *testing.T) {
	r, dir := openRepo(t)
	const name, a = "refs/crucible/active/main", "refs/crucible/pipelines/a"
	if err := r.SetSymref(name, a, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteSymref(name, "refs/crucible/pipelines/b"); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("another target: %v", err)
	}
	if got := gittest.Git(t, dir, "symbolic-ref", name); got != a {
		t.Fatalf("a lost compare-and-swap deleted it: git reads %q", got)
	}
	if err := r.DeleteSymref(name, a); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadSymref(name); got != "" || err != nil {
		t.Fatalf("after the delete ReadSymref = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", name+".lock")); !os.IsNotExist(err) {
		t.Fatalf("lock left behind: %v", err)
	}
	if err := r.DeleteSymref(name, a); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("deleting it again: %v", err)
	}
}

func TestParseDate(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.FixedZone("EEST", 3*3600) // a date without a zone is local time, as for git
	for _, c := range []struct{ in, want string }{
		{"@1700000000 +0100", "2023-11-14T23:13:20+01:00"},
		{"1700000000 -0500", "2023-11-14T17:13:20-05:00"},
		{"2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z"},
		{"2026-11-22 10:00:00 +0200", "2026-11-22T10:00:00+02:00"},
		{"2026-11-22T10:00:00", "2026-11-22T10:00:00+03:00"},
	} {
		got, err := ParseDate(c.in)
		if err != nil || got.Format("2006-01-02T15:04:05Z07:00") != c.want {
			t.Errorf("ParseDate(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"next tuesday", "2026-11-22"} { // git refuses a date without a time
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate accepted %q", bad)
		}
	}
}

// TestOperation: each multi-step command git can leave half-done is seen
// from its own markers, and a clean worktree has none.
func TestOperation(t *testing.T) {
	dir := gittest.Init(t)
	repo := &Repo{GitDir: filepath.Join(dir, ".git")}
	if op := repo.Operation(); op != "" {
		t.Fatalf("clean worktree: %q", op)
	}
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("side\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "f")
	gittest.Git(t, dir, "commit", "-q", "-m", "side")
	gittest.Git(t, dir, "checkout", "-q", "main")
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "f")
	gittest.Git(t, dir, "commit", "-q", "-m", "main")
	for _, c := range []struct {
		args  []string
		want  string
		abort []string
	}{
		{[]string{"merge", "-q", "side"}, "merge", []string{"merge", "--abort"}},
		{[]string{"cherry-pick", "side"}, "cherry-pick", []string{"cherry-pick", "--abort"}},
		{[]string{"rebase", "-q", "side"}, "rebase", []string{"rebase", "--abort"}},
	} {
		cmd := exec.Command("git", c.args...)
		cmd.Dir = dir
		if err := cmd.Run(); err == nil {
			t.Fatalf("git %v did not stop on the conflict", c.args)
		}
		if op := repo.Operation(); op != c.want {
			t.Errorf("during git %v: %q", c.args, op)
		}
		gittest.Git(t, dir, c.abort...)
		if op := repo.Operation(); op != "" {
			t.Errorf("after git %v: %q", c.abort, op)
		}
	}
}

// TestReadLoose reads loose objects written by git and by WriteObject, and
// refuses what it cannot vouch for: packed objects (ErrMissing, for the
// caller to ask git), damaged files and malformed ids.
func TestReadLoose(t *testing.T) {
	r, dir := openRepo(t)
	big := strings.Repeat("line of a large note\n", 5000)
	if err := os.WriteFile(filepath.Join(dir, "big"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	byGit := gittest.Git(t, dir, "hash-object", "-w", "big")
	kind, data, err := r.ReadLoose(byGit)
	if err != nil || kind != "blob" || string(data) != big {
		t.Fatalf("ReadLoose(git's blob) = %q, %d bytes, %v", kind, len(data), err)
	}
	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	if kind, data, err = r.ReadLoose(tree); err != nil || kind != "tree" || len(data) != 0 {
		t.Fatalf("ReadLoose(empty tree) = %q, %q, %v", kind, data, err)
	}
	for i := 0; i < 3; i++ { // the pooled decompressor is reused
		ours, err := r.WriteObject("blob", []byte(fmt.Sprintf("note %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		if kind, data, err := r.ReadLoose(ours); err != nil || kind != "blob" || string(data) != fmt.Sprintf("note %d\n", i) {
			t.Fatalf("ReadLoose(our blob) = %q, %q, %v", kind, data, err)
		}
	}

	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "gc", "-q", "--prune=now")
	if _, _, err := r.ReadLoose(head); !errors.Is(err, ErrMissing) {
		t.Fatalf("packed object: %v, want ErrMissing", err)
	}

	// A file under the wrong name: readable, but not the object it claims.
	other, err := r.WriteObject("blob", []byte("other\n"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(r.ObjectDir(), other[:2], other[2:]))
	if err != nil {
		t.Fatal(err)
	}
	fake := strings.Repeat("ab", 20)
	if err := os.MkdirAll(filepath.Join(r.ObjectDir(), "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.ObjectDir(), "ab", fake[2:]), raw, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReadLoose(fake); err == nil || !strings.Contains(err.Error(), "does not match its name") {
		t.Fatalf("misnamed object: %v", err)
	}
	if err := os.WriteFile(filepath.Join(r.ObjectDir(), "ab", strings.Repeat("cd", 19)), []byte("not zlib"), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReadLoose("ab" + strings.Repeat("cd", 19)); err == nil || errors.Is(err, ErrMissing) {
		t.Fatalf("damaged object: %v", err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("AB", 20), strings.Repeat("ab", 32)} {
		if _, _, err := r.ReadLoose(bad); err == nil || errors.Is(err, ErrMissing) {
			t.Errorf("ReadLoose(%q) = %v, want an invalid-id error", bad, err)
		}
	}
}

// TestCheckRefName: what git check-ref-format accepts under refs/, and
// nothing that as a path could leave the refs directory.
func TestCheckRefName(t *testing.T) {
	for _, good := range []string{"refs/heads/main", "refs/heads/feature/x", "refs/crucible/active/a-b_c.d", "refs/notes/crucible/provenance"} {
		if err := CheckRefName(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
		if out, err := exec.Command("git", "check-ref-format", good).CombinedOutput(); err != nil {
			t.Errorf("git refuses %q: %s", good, out)
		}
	}
	for _, bad := range []string{"refs/heads/../../config", "refs/heads/x/..", "HEAD", "config", "refs//x", "refs/x/", "refs/.hidden",
		"refs/x.lock", "refs/x.", "refs/a b", "refs/a~1", "refs/a:b", "refs/a\\b", "refs/a@{1}", "refs/a\x01"} {
		if err := CheckRefName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
		if exec.Command("git", "check-ref-format", bad).Run() == nil && bad != "refs/x/" {
			t.Errorf("git accepts %q, which CheckRefName refuses", bad)
		}
	}
}

// TestListRefsMatchesGit: the in-process listing gives what for-each-ref
// gives, for loose and packed refs and a loose one that overrides its
// packed copy, and leaves a symbolic ref to git.
func TestListRefsMatchesGit(t *testing.T) {
	r, dir := openRepo(t)
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	for _, name := range []string{"refs/x/a", "refs/x/b/c", "refs/x/d", "refs/y/e"} {
		gittest.Git(t, dir, "update-ref", name, head)
	}
	gittest.Git(t, dir, "pack-refs", "--all", "--prune")
	gittest.Git(t, dir, "update-ref", "refs/x/d", tree) // loose, over the packed one
	gittest.Git(t, dir, "update-ref", "refs/x/f", tree)
	gittest.Git(t, dir, "update-ref", "-d", "refs/x/a")
	if err := os.WriteFile(filepath.Join(dir, ".git", "refs", "x", "g.lock"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		refs, err := r.ListRefs(context.Background(), "refs/x/")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ref := range refs {
			b.WriteString(ref.OID + " " + ref.Name + "\n")
		}
		return strings.TrimSpace(b.String())
	}
	want := gittest.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/x/")
	if _, ok := r.listRefsFiles("refs/x/"); !ok {
		t.Fatal("plain refs were not listed in process")
	}
	if got := list(); got != want || strings.Count(got, "\n") != 2 {
		t.Fatalf("in process:\n%s\ngit:\n%s", got, want)
	}
	if refs, ok := r.listRefsFiles("refs/none/"); !ok || len(refs) != 0 {
		t.Fatalf("an absent prefix lists %v, %v", refs, ok)
	}
	gittest.Git(t, dir, "symbolic-ref", "refs/x/s", "refs/x/f")
	if _, ok := r.listRefsFiles("refs/x/"); ok {
		t.Fatal("a symbolic ref was listed in process")
	}
	want = gittest.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/x/")
	if got := list(); got != want {
		t.Fatalf("with a symbolic ref:\n%s\ngit:\n%s", got, want)
	}
}

// FuzzEachPackedRef: any packed-refs content is walked without a panic, and
// every pair it yields is a line of the file.
func FuzzEachPackedRef(f *testing.F) {
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n" +
		"0123456789012345678901234567890123456789 refs/heads/main\n^1111111111111111111111111111111111111111\n"))
	f.Add([]byte("x\n y\n\n^\n#"))
	f.Fuzz(func(t *testing.T, b []byte) {
		eachPackedRef(b, func(name, oid []byte) bool {
			line := string(oid) + " " + string(name)
			if len(name) == 0 || len(oid) == 0 || !strings.Contains("\n"+string(b)+"\n", "\n"+line+"\n") {
				t.Fatalf("yielded %q, not a line of %q", line, b)
			}
			return true
		})
	})
}

// TestBareSpellings: a bare repository whose hooks run with GIT_DIR set is
// found bare however its config spells core.bare, as git finds it; the
// spellings of false keep the fast path.
func TestBareSpellings(t *testing.T) {
	_, _, _, bare := layouts(t)
	t.Chdir(bare)
	t.Setenv("GIT_DIR", ".")
	head := "[core]\n\trepositoryformatversion = 0\n"
	for _, c := range []struct {
		config string
		bare   bool
	}{
		{head + "\tbare = true\n", true},
		{head + "\tbare=true\n", true},
		{head + "\tbare = yes\n", true},
		{head + "\tbare=1\n", true},
		{head + "\tBare = On\n", true},
		{head + "\tbare\n", true},
		{head + "\tbare = \"true\"\n", true},
		{head + "[core] bare = true\n", true},
		{head + "\tbare = false # no\n\tbare = 2\n", true},
		{head + "\tbare = false\n", false},
		{head + "\tbare=no\n", false},
		{head + "\tbare = off\n\tbare=0\n", false},
		{head + "[remote \"x\"]\n\turl = /srv/bare.git\n", false},
	} {
		if err := os.WriteFile(filepath.Join(bare, "config"), []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := discoverWithGit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want.Bare != c.bare {
			t.Fatalf("%q: git says bare %v", c.config, want.Bare)
		}
		got, err := Discover(context.Background())
		if err != nil || got.Bare != want.Bare || got.WorkTree != want.WorkTree {
			t.Errorf("%q: Discover gives %+v, %v; git %+v", c.config, got, err, want)
		}
		if _, fast := discoverFast(); fast == c.bare {
			t.Errorf("%q: fast path taken = %v", c.config, fast)
		}
	}
}

// TestEmptyTreeMatchesGit: the empty tree is what `git hash-object -t tree
// /dev/null` says, in SHA-1 and in SHA-256 repositories.
func TestEmptyTreeMatchesGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			gittest.Hermetic(t)
			dir := filepath.Join(t.TempDir(), "r")
			gittest.Git(t, t.TempDir(), "init", "-q", "--object-format="+format, dir)
			t.Chdir(dir)
			r, err := Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSpace(gittest.Git(t, dir, "hash-object", "-t", "tree", os.DevNull))
			if got := r.EmptyTree(); got != want {
				t.Fatalf("EmptyTree() = %s, git says %s", got, want)
			}
		})
	}
}

// TestGitStoppedLeavesNoLock: a git whose context ends is asked to stop,
// so it removes its lock files; killed outright, git commit left
// index.lock, and every later commit failed.
func TestGitStoppedLeavesNoLock(t *testing.T) {
	r, dir := openRepo(t)
	started := filepath.Join(t.TempDir(), "started")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n: >'"+started+"'\nexec sleep 3 >/dev/null 2>&1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		for {
			if _, err := os.Stat(started); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	// -a: git holds index.lock while its hooks run.
	if _, err := r.Git(ctx, "commit", "-q", "-a", "--allow-empty", "-m", "stopped"); err == nil {
		t.Fatal("a stopped commit succeeded")
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("index.lock left: %v", err)
	}
}

// TestLooseObjectSizes: objects stored uncompressed (up to storedMax) and
// compressed (or stored, in blocks, when that is shorter) read back the
// same, in process and by git, and pass fsck.
func TestLooseObjectSizes(t *testing.T) {
	r, dir := openRepo(t)
	var objects [][]byte
	for _, n := range []int{0, 1, storedMax - 12, storedMax - 11, storedMax - 10, 3 * storedMax} {
		objects = append(objects, bytes.Repeat([]byte{'a' + byte(n%26)}, n))
	}
	objects = append(objects, rows(150), randomBytes(5*storedMax))
	for _, data := range objects {
		n := len(data)
		oid, err := r.WriteObject("blob", data)
		if err != nil {
			t.Fatal(err)
		}
		if got := gittest.Git(t, dir, "cat-file", "-s", oid); got != fmt.Sprint(n) {
			t.Errorf("%d bytes: git reads %s", n, got)
		}
		kind, back, err := r.ReadLoose(oid)
		if err != nil || kind != "blob" || !bytes.Equal(back, data) {
			t.Errorf("%d bytes: ReadLoose %s, %d bytes, %v", n, kind, len(back), err)
		}
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling", "--unreachable")
}

// TestFirstParent: a commit's first parent is read in process (no git on
// PATH), loose or packed; a root commit's is ErrMissing; what is not a
// commit is an error.
func TestFirstParent(t *testing.T) {
	r, dir := openRepo(t)
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "child")
	parent, child := gittest.Git(t, dir, "rev-parse", "HEAD^"), gittest.Git(t, dir, "rev-parse", "HEAD")
	root := gittest.Git(t, dir, "rev-list", "--max-parents=0", "HEAD")
	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	want := map[string]string{child: parent}
	check := func(what string) {
		t.Helper()
		for commit, want := range want {
			if got, err := r.FirstParent(t.Context(), commit); err != nil || got != want {
				t.Errorf("%s: FirstParent(%s) = %q, %v; want %q", what, commit[:7], got, err, want)
			}
		}
		if _, err := r.FirstParent(t.Context(), tree); err == nil {
			t.Errorf("%s: FirstParent of a tree succeeded", what)
		}
		if p, err := r.FirstParent(t.Context(), root); !errors.Is(err, ErrMissing) {
			t.Errorf("%s: FirstParent of the root commit = %q, %v; want ErrMissing", what, p, err)
		}
	}
	noGit := func(what string) {
		t.Helper()
		path := os.Getenv("PATH")
		t.Setenv("PATH", t.TempDir())
		for commit, want := range want {
			if got, err := r.FirstParent(t.Context(), commit); err != nil || got != want {
				t.Errorf("%s, no git: FirstParent(%s) = %q, %v; want %q", what, commit[:7], got, err, want)
			}
		}
		t.Setenv("PATH", path)
	}
	noGit("loose")
	check("loose")
	gittest.Git(t, dir, "gc", "-q", "--prune=now")
	noGit("packed")
	check("packed")
}
