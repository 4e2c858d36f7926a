package gitext

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestExec: each of Exec's fields reaches the git a verb runs, and With
// leaves the Repo it copies as it was.
func TestExec(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	var ran *exec.Cmd
	spy := func(x Exec) *Repo {
		x.Run = func(cmd *exec.Cmd) error { ran = cmd; return cmd.Run() }
		return r.With(x)
	}
	has := func(list []string, s string) bool { return slices.Contains(list, s) }

	sub := filepath.Join(dir, "sub")
	writeTestFile(t, filepath.Join(sub, "f"), "f")
	index := filepath.Join(t.TempDir(), "index")
	if err := spy(Exec{Dir: sub, Index: index, Env: []string{"CRUCIBLE_X=1"}}).AddAll(ctx, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if ran.Dir != sub || !has(ran.Env, "GIT_INDEX_FILE="+index) || !has(ran.Env, "CRUCIBLE_X=1") || !has(ran.Env, "GIT_DIR="+r.GitDir) {
		t.Fatalf("dir %s, env %q", ran.Dir, ran.Env)
	}
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("the own index was not written: %v", err)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain"); got != "?? sub/" {
		t.Fatalf("the repository's index moved: %q", got)
	}

	if err := spy(Exec{Group: true, Inherit: true}).WorktreePrune(ctx); err != nil {
		t.Fatal(err)
	}
	if ran.SysProcAttr == nil || !ran.SysProcAttr.Setpgid {
		t.Fatal("Group: git is not in a process group of its own")
	}
	if slices.ContainsFunc(ran.Env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_DIR=") || kv == "LC_ALL=C" }) {
		t.Fatalf("Inherit: the environment is pinned: %q", ran.Env)
	}

	excludes := filepath.Join(t.TempDir(), "excludes")
	writeTestFile(t, excludes, "sub/\n")
	entries, err := r.With(Exec{Config: []string{"-c", "core.excludesFile=" + excludes}}).Status(ctx, UntrackedAll)
	if err != nil || len(entries) != 0 {
		t.Fatalf("Config: status with sub/ excluded = %q, %v", entries, err)
	}
	for _, bad := range [][]string{{"core.excludesFile=x"}, {"-c"}, {"-c", "a=b", "--exec-path=x"}} {
		if _, err := r.With(Exec{Config: bad}).Status(ctx, UntrackedAll); err == nil {
			t.Errorf("Config %q: no error", bad)
		}
	}

	var progress bytes.Buffer
	remote := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, dir, "init", "-q", "--bare", remote)
	if _, err := spy(Exec{Progress: &progress}).Push(ctx, remote, "HEAD:refs/heads/main"); err != nil {
		t.Fatal(err)
	}
	if !has(ran.Args, "--progress") || progress.Len() == 0 {
		t.Fatalf("Progress: args %q, progress %q", ran.Args, progress.String())
	}
	if r.via != nil {
		t.Fatal("With changed the Repo it copied")
	}
}

// TestStdinWhole: git's input is a regular file holding all of it before
// git starts, not a pipe a killed caller leaves half written: git add
// --all --pathspec-from-file=- reading none of its paths stages the whole
// work tree.
func TestStdinWhole(t *testing.T) {
	r, _ := openRepo(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var ran *exec.Cmd
	spy := r.With(Exec{Run: func(cmd *exec.Cmd) error {
		ran = cmd
		f, ok := cmd.Stdin.(*os.File)
		if !ok {
			t.Fatalf("git's input is a %T, not a file", cmd.Stdin)
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len("a\x00b\x00")) {
			t.Fatalf("git's input: %v, %v", fi, err)
		}
		return cmd.Run()
	}})
	if err := spy.AddPaths(context.Background(), []string{"a", "b"}); err == nil || ran == nil {
		t.Fatal("AddPaths of paths that are not there: no error") // git read both
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("the temporary directory holds %v (%v): git's input file is to be unlinked at once", entries, err)
	}
}

// TestRemoteVerbs: a push says what it did of each ref, also when it is
// refused; a fetch copies refspecs atomically and prunes what the remote
// no longer has.
func TestRemoteVerbs(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, dir, "init", "-q", "--bare", remote)
	out, err := r.Push(ctx, remote, "refs/heads/main:refs/heads/main", "refs/heads/side:refs/heads/side")
	if err != nil || !strings.Contains(string(out), "*\trefs/heads/main:refs/heads/main\t[new branch]") {
		t.Fatalf("Push:\n%s%v", out, err)
	}
	out, err = r.Push(ctx, remote, ids["one"]+":refs/heads/main")
	if err == nil || !strings.Contains(string(out), "!\t"+ids["one"]+":refs/heads/main\t[rejected]") {
		t.Fatalf("a push that is not a fast-forward:\n%s%v", out, err)
	}
	if err := r.Fetch(ctx, remote, "+refs/heads/*:refs/mirror/*"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/mirror/"); got != "refs/mirror/main "+ids["three"]+"\nrefs/mirror/side "+ids["two"] {
		t.Fatalf("after the fetch:\n%s", got)
	}
	gittest.Git(t, remote, "update-ref", "-d", "refs/heads/side")
	if err := r.Fetch(ctx, remote, "+refs/heads/*:refs/mirror/*"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/mirror/"); got != "refs/mirror/main" {
		t.Fatalf("after the pruning fetch:\n%s", got)
	}
}

// TestConfigWrites: values set, added and unset in the repository's file
// and the user's, read back by scope; unsetting nothing is no error; a
// write needs a scope.
func TestConfigWrites(t *testing.T) {
	r, _ := openRepo(t)
	ctx := context.Background()
	for _, step := range []error{
		r.ConfigSet(ctx, ConfigLocal, "crucible.x", "-one"),
		r.ConfigAdd(ctx, ConfigLocal, "crucible.x", "two"),
		r.ConfigSet(ctx, ConfigGlobal, "crucible.y", "g"),
		r.ConfigUnsetAll(ctx, ConfigLocal, "crucible.none"),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	values := func(scope ConfigScope) []string {
		entries, err := r.ConfigEntriesIn(ctx, scope, `^crucible\.`)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Scope+" "+e.Key+"="+e.Value)
		}
		return out
	}
	if got, want := values(ConfigLocal), []string{"local crucible.x=-one", "local crucible.x=two"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("local: %q, want %q", got, want)
	}
	if got, want := values(ConfigAll), []string{"global crucible.y=g", "local crucible.x=-one", "local crucible.x=two"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("all: %q, want %q", got, want)
	}
	if err := r.ConfigSet(ctx, ConfigLocal, "crucible.x", "three"); err == nil {
		t.Fatal("ConfigSet of a key with two values: no error")
	}
	if err := r.ConfigUnsetAll(ctx, ConfigLocal, "crucible.x"); err != nil || len(values(ConfigLocal)) != 0 {
		t.Fatalf("ConfigUnsetAll: %v, left %q", err, values(ConfigLocal))
	}
	if err := r.ConfigSet(ctx, ConfigAll, "crucible.z", "v"); err == nil {
		t.Fatal("a write to every scope: no error")
	}
}
