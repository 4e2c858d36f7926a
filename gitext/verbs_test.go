package gitext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// history makes a repository whose main has base, one (a.txt), a merge of
// side (two, s.txt, from base) and three (a.txt changed), with side's
// commit tagged t, and returns the commits by name.
func history(t *testing.T) (*Repo, string, map[string]string) {
	t.Helper()
	return historyIn(t, "sha1")
}

// historyIn is history in a repository of the object format given.
func historyIn(t *testing.T, format string) (*Repo, string, map[string]string) {
	t.Helper()
	dir := formatDir(t, format)
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	r := discoverIn(t, dir)
	ids := map[string]string{"base": gittest.Git(t, dir, "rev-parse", "HEAD")}
	commit := func(name, file, content string) {
		writeTestFile(t, filepath.Join(dir, file), content)
		gittest.Git(t, dir, "add", file)
		gittest.Git(t, dir, "commit", "-q", "-m", name)
		ids[name] = gittest.Git(t, dir, "rev-parse", "HEAD")
	}
	commit("one", "a.txt", "a\n")
	gittest.Git(t, dir, "switch", "-q", "-c", "side", ids["base"])
	commit("two", "s.txt", "s\n")
	gittest.Git(t, dir, "tag", "t")
	gittest.Git(t, dir, "switch", "-q", "main")
	gittest.Git(t, dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
	ids["merge"] = gittest.Git(t, dir, "rev-parse", "HEAD")
	commit("three", "a.txt", "a2\n")
	return r, dir, ids
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResolve: what names an object resolves to git's answer; what names
// none (a root's parent, a missing ref, an option) is ErrMissing.
func TestResolve(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	for _, c := range []struct {
		verb, rev, want string
	}{
		{"Resolve", "HEAD", ids["three"]},
		{"Resolve", "t", ids["two"]},
		{"Resolve", "refs/heads/side", ids["two"]},
		{"Resolve", "HEAD~1^2", ids["two"]},
		{"Resolve", "nope", ""},
		{"Resolve", "-q", ""},
		{"Resolve", "--git-dir", ""},
		{"ResolveTree", "HEAD", gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")},
		{"ResolveTree", "nope", ""},
		{"FirstParent", "HEAD", ids["merge"]},
		{"FirstParent", ids["merge"], ids["one"]},
		{"FirstParent", ids["base"], ""},
	} {
		resolve := map[string]func(context.Context, string) (string, error){
			"Resolve": r.Resolve, "ResolveTree": r.ResolveTree, "FirstParent": r.FirstParent}[c.verb]
		got, err := resolve(ctx, c.rev)
		if c.want == "" && !errors.Is(err, ErrMissing) || c.want != "" && (err != nil || got != c.want) {
			t.Errorf("%s(%q) = %q, %v; want %q", c.verb, c.rev, got, err, c.want)
		}
	}
}

// TestHistoryVerbs: parents, a range in topological order, ancestry,
// merge bases, the refs that contain a commit, reflogs and log formats, as
// git gives them.
func TestHistoryVerbs(t *testing.T) {
	r, _, ids := history(t)
	ctx := context.Background()
	eq := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	parents, err := r.Parents(ctx, ids["merge"])
	eq("Parents(merge)", parents, []string{ids["one"], ids["two"]})
	eq("err", err, nil)
	parents, err = r.Parents(ctx, ids["base"])
	eq("Parents(base)", parents, []string{})
	eq("err", err, nil)
	if _, err := r.Parents(ctx, r.EmptyTree()); err == nil {
		t.Error("Parents of a tree: no error")
	}
	list, err := r.RevList(ctx, RevSet{Include: []string{ids["base"] + "..HEAD"}}, ParentsFirst)
	eq("err", err, nil)
	var order []string
	for _, c := range list {
		order = append(order, c.ID)
	}
	if len(order) != 4 || order[3] != ids["three"] || order[2] != ids["merge"] || !reflect.DeepEqual(list[2].Parents, []string{ids["one"], ids["two"]}) {
		t.Errorf("RevList(base..HEAD) = %+v", list)
	}
	list, err = r.RevList(ctx, RevSet{Include: []string{"HEAD..HEAD"}}, ParentsFirst)
	eq("RevList(HEAD..HEAD)", len(list), 0)
	eq("err", err, nil)

	for _, c := range []struct {
		a, b string
		want bool
	}{{ids["base"], ids["three"], true}, {ids["two"], ids["three"], true}, {ids["three"], ids["two"], false}} {
		got, err := r.IsAncestor(ctx, c.a, c.b)
		eq("IsAncestor", got, c.want)
		eq("err", err, nil)
	}
	base, err := r.MergeBase(ctx, ids["one"], ids["two"])
	eq("MergeBase", base, ids["base"])
	eq("err", err, nil)

	refs, err := r.RefsContaining(ctx, ids["two"])
	eq("RefsContaining(two)", refs, []string{"refs/heads/main", "refs/heads/side", "refs/tags/t"})
	eq("err", err, nil)
	refs, _ = r.RefsContaining(ctx, ids["three"])
	eq("RefsContaining(three)", refs, []string{"refs/heads/main"})

	moves, err := r.Reflog(ctx, "refs/heads/main", 2)
	eq("err", err, nil)
	eq("Reflog(main, 2)", moves, []ReflogEntry{{ids["three"], "commit: three"}, {ids["merge"], "merge side: Merge made by the 'ort' strategy."}})
	moves, _ = r.Reflog(ctx, "refs/heads/main", 0)
	eq("Reflog(main)", len(moves), 4)

	for _, c := range []struct {
		format string
		o      LogOptions
		revs   []string
		want   string
	}{
		{"%s", LogOptions{Max: 1}, []string{"HEAD"}, "three\n"},
		{"%B", LogOptions{Max: 1}, []string{ids["one"]}, "one\n\n"},
		{"%P%n%s", LogOptions{Max: 1}, []string{ids["merge"]}, ids["one"] + " " + ids["two"] + "\nmerge\n"},
		{"%s", LogOptions{}, []string{ids["one"] + ".." + ids["two"]}, "two\n"},
		{"%s", LogOptions{}, []string{ids["three"], "^" + ids["merge"]}, "three\n"},
		{"%s", LogOptions{Since: "2026-11-23"}, []string{"HEAD"}, ""},
	} {
		out, err := r.LogFormat(ctx, c.format, c.o, c.revs...)
		eq("LogFormat "+c.format, string(out), c.want)
		eq("err", err, nil)
	}
	if _, err := r.LogFormat(ctx, "%s", LogOptions{}); err == nil {
		t.Error("LogFormat of no revision: no error")
	}
	shown, err := r.Show(ctx, "commit %H%n%n%B", ids["three"])
	if err != nil || !strings.HasPrefix(string(shown), "commit "+ids["three"]+"\n\nthree\n\n\ndiff --git a/a.txt b/a.txt\n") || !strings.HasSuffix(string(shown), "-a\n+a2\n") {
		t.Errorf("Show:\n%s%v", shown, err)
	}
}

// TestRevSets: the commits a RevSet names, in each order, as git lists
// them, in both object formats; a revision that would reach git as an
// option, or as other lines than its own, is refused.
func TestRevSets(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			r, dir, ids := historyIn(t, format)
			ctx := context.Background()
			gittest.Git(t, dir, "update-ref", "refs/remotes/origin/main", ids["one"])
			gittest.Git(t, dir, "update-ref", "refs/remotes/originals/main", ids["two"]) // not origin's
			all := []string{"base", "one", "two", "merge", "three"}
			for _, c := range []struct {
				name string
				set  RevSet
				want []string // by name
			}{
				{"a tip", RevSet{Include: []string{"HEAD"}}, all},
				{"a range", RevSet{Include: []string{ids["base"] + "..HEAD"}}, all[1:]},
				{"a commit excluded", RevSet{Include: []string{"HEAD"}, Exclude: []string{ids["merge"]}}, []string{"three"}},
				{"a revision of the caller's own excluded", RevSet{Include: []string{"HEAD", "^" + ids["one"]}}, []string{"two", "merge", "three"}},
				{"several tips, one excluded", RevSet{Include: []string{ids["three"], ids["two"]}, Exclude: []string{ids["merge"]}}, []string{"three"}},
				{"a remote's branches excluded", RevSet{Include: []string{"t"}, ExcludeRemote: "origin"}, []string{"two"}},
				{"a remote's branches and a commit excluded", RevSet{Include: []string{"HEAD"}, Exclude: []string{ids["two"]}, ExcludeRemote: "origin"}, []string{"merge", "three"}},
				{"nothing", RevSet{}, nil},
			} {
				for _, order := range []RevOrder{NewestFirst, ChildrenFirst, ParentsFirst} {
					got, err := r.RevListIDs(ctx, c.set, order)
					if err != nil {
						t.Fatalf("%s, order %d: %v", c.name, order, err)
					}
					var want []string
					for _, name := range c.want {
						want = append(want, ids[name])
					}
					if !reflect.DeepEqual(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
						t.Errorf("%s, order %d: %q, want %q", c.name, order, got, c.want)
					}
					commits, err := r.RevList(ctx, c.set, order)
					if err != nil || len(commits) != len(got) {
						t.Fatalf("%s, order %d: RevList = %+v, %v; RevListIDs %q", c.name, order, commits, err, got)
					}
					at := map[string]int{}
					for i, c := range commits {
						at[c.ID] = i
					}
					for i, commit := range commits {
						if commit.ID != got[i] {
							t.Errorf("%s, order %d: RevList's %s where RevListIDs has %s", c.name, order, commit.ID, got[i])
						}
						if want := gittest.Git(t, dir, "rev-parse", commit.ID+"^{tree}"); commit.Tree != want {
							t.Errorf("%s: tree %s, git says %s", commit.ID, commit.Tree, want)
						}
						if want := gittest.Git(t, dir, "log", "-1", "--format=%s", commit.ID); commit.Subject != want {
							t.Errorf("%s: subject %q, git says %q", commit.ID, commit.Subject, want)
						}
						if want := strings.Fields(gittest.Git(t, dir, "rev-list", "--parents", "-n1", commit.ID))[1:]; !reflect.DeepEqual(commit.Parents, want) {
							t.Errorf("%s: parents %q, git says %q", commit.ID, commit.Parents, want)
						}
						for _, p := range commit.Parents {
							if j, listed := at[p]; listed && (order == ChildrenFirst && j < i || order == ParentsFirst && j > i) {
								t.Errorf("%s, order %d: %s listed on the wrong side of its parent %s", c.name, order, commit.ID, p)
							}
						}
					}
				}
			}
			for _, set := range []RevSet{
				{Include: []string{"--all"}},
				{Include: []string{"-n1"}},
				{Include: []string{"HEAD", ""}, Exclude: []string{ids["three"]}}, // an empty line would end git's input
				{Include: []string{"HEAD\n--all"}},
				{Include: []string{"HEAD\r"}},
				{Include: []string{"HEAD"}, Exclude: []string{"--all"}},
				{Include: []string{"HEAD"}, Exclude: []string{"-" + ids["one"]}},
			} {
				if got, err := r.RevListIDs(ctx, set, NewestFirst); err == nil {
					t.Errorf("RevListIDs(%q) = %q: no error", set, got)
				}
				if got, err := r.RevList(ctx, set, NewestFirst); err == nil {
					t.Errorf("RevList(%q) = %+v: no error", set, got)
				}
			}
		})
	}
}

// TestCommitter: who git names as committer, from the environment or
// from the config.
func TestCommitter(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	if name, email, err := r.Committer(ctx); err != nil || name != "Ada Tester" || email != "ada@example.com" {
		t.Errorf("Committer = %q, %q, %v; want GIT_COMMITTER_NAME's and _EMAIL's", name, email, err)
	}
	t.Setenv("GIT_COMMITTER_NAME", "")
	t.Setenv("GIT_COMMITTER_EMAIL", "")
	os.Unsetenv("GIT_COMMITTER_NAME")
	os.Unsetenv("GIT_COMMITTER_EMAIL")
	gittest.Git(t, dir, "config", "user.name", "Bo Config")
	gittest.Git(t, dir, "config", "user.email", "bo@example.org")
	if name, email, err := r.Committer(ctx); err != nil || name != "Bo Config" || email != "bo@example.org" {
		t.Errorf("Committer = %q, %q, %v; want user.name's and user.email's", name, email, err)
	}
}

// TestRevisionsAreNeverOptions: a revision (or remote, or path) that
// reads as an option reaches git as a name, after --end-of-options, or
// is refused: every verb fails, and none writes the file the option
// names.
func TestRevisionsAreNeverOptions(t *testing.T) {
	r, dir, _ := history(t)
	ctx := context.Background()
	pwned := filepath.Join(t.TempDir(), "pwned")
	bad := "--output=" + pwned
	verbs := map[string]func() error{
		"Resolve": func() error { _, err := r.Resolve(ctx, bad); return err },
		"Parents": func() error { _, err := r.Parents(ctx, bad); return err },
		"RevList": func() error { _, err := r.RevList(ctx, RevSet{Include: []string{bad}}, ParentsFirst); return err },
		"RevListIDs": func() error {
			_, err := r.RevListIDs(ctx, RevSet{Include: []string{"HEAD"}, Exclude: []string{bad}}, NewestFirst)
			return err
		},
		"IsAncestor":       func() error { _, err := r.IsAncestor(ctx, bad, "HEAD"); return err },
		"MergeBase":        func() error { _, err := r.MergeBase(ctx, "HEAD", bad); return err },
		"RefsContaining":   func() error { _, err := r.RefsContaining(ctx, bad); return err },
		"Reflog":           func() error { _, err := r.Reflog(ctx, bad, 0); return err },
		"LogFormat":        func() error { _, err := r.LogFormat(ctx, "%H", LogOptions{}, bad); return err },
		"Show":             func() error { _, err := r.Show(ctx, "%H", bad); return err },
		"ResolveCommit":    func() error { _, err := r.ResolveCommit(ctx, bad); return err },
		"Log":              func() error { _, err := r.Log(ctx, bad, nil, 0); return err },
		"ShortStat":        func() error { _, err := r.ShortStat(ctx, "HEAD", bad); return err },
		"ListTree":         func() error { _, err := r.ListTree(ctx, bad); return err },
		"ListDir":          func() error { _, err := r.ListDir(ctx, bad, "x"); return err },
		"CatFile":          func() error { _, err := r.CatFile(ctx, "commit", bad); return err },
		"CommitTree":       func() error { _, err := r.CommitTree(ctx, bad, nil, "m"); return err },
		"ReadTree":         func() error { return r.ReadTree(ctx, bad) },
		"ReadTreeMerge":    func() error { return r.ReadTreeMerge(ctx, "HEAD", bad) },
		"ChangedPaths":     func() error { _, err := r.ChangedPaths(ctx, bad, "HEAD"); return err },
		"TreeChanges":      func() error { _, err := r.TreeChanges(ctx, "HEAD", bad, nil); return err },
		"TreePatch":        func() error { _, err := r.TreePatch(ctx, bad, "HEAD"); return err },
		"TreeDiffstat":     func() error { _, err := r.TreeDiffstat(ctx, "HEAD", bad); return err },
		"WorkTreePatch":    func() error { _, err := r.WorkTreePatch(ctx, bad); return err },
		"DiffQuiet":        func() error { _, err := r.DiffQuiet(ctx, bad, false); return err },
		"DiffIndexQuiet":   func() error { _, err := r.DiffIndexQuiet(ctx, bad, true); return err },
		"CheckoutDetached": func() error { return r.CheckoutDetached(ctx, bad) },
		"Restore":          func() error { return r.Restore(ctx, bad, []string{"a.txt"}) },
		"WorktreeAdd":      func() error { return r.WorktreeAdd(ctx, filepath.Join(t.TempDir(), "wt"), bad) },
		"WorktreeRemove":   func() error { return r.WorktreeRemove(ctx, bad) },
		"RebaseInteractive": func() error {
			return r.With(Exec{Env: []string{"GIT_SEQUENCE_EDITOR=true"}}).RebaseInteractive(ctx, bad)
		},
		"UpdateRef":   func() error { return r.UpdateRef(ctx, "test", "refs/heads/x", bad, "") },
		"SetOrigHead": func() error { return r.SetOrigHead(ctx, bad) },
		"Fetch":       func() error { return r.Fetch(ctx, "--upload-pack=touch "+pwned, "refs/heads/*:refs/x/*") },
		"Push":        func() error { _, err := r.Push(ctx, "--receive-pack=touch "+pwned, "HEAD:refs/heads/x"); return err },
	}
	for name, verb := range verbs {
		if err := verb(); err == nil {
			t.Errorf("%s(%q): no error", name, bad)
		}
		if _, err := os.Lstat(pwned); err == nil {
			t.Fatalf("%s(%q) wrote %s", name, bad, pwned)
		}
	}
	if out := gittest.Git(t, dir, "status", "--porcelain"); out != "" {
		t.Fatalf("the work tree changed:\n%s", out)
	}
}

// TestTreeVerbs: trees listed, objects read, commits written as git
// commit-tree -m writes them, an index of its own read, changed and
// written, and the work tree moved between trees.
func TestTreeVerbs(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	files, err := r.ListTree(ctx, "HEAD")
	if err != nil || len(files) != 2 || files[0].Path != "a.txt" || files[1].Path != "s.txt" || files[0].Type != "blob" || files[0].Mode != "100644" {
		t.Fatalf("ListTree(HEAD) = %+v, %v", files, err)
	}
	writeTestFile(t, filepath.Join(dir, "d", "e", "f.md"), "f\n")
	writeTestFile(t, filepath.Join(dir, "d", "g.md"), "g\n")
	gittest.Git(t, dir, "add", "d")
	gittest.Git(t, dir, "commit", "-q", "-m", "d")
	top := filepath.Join(dir, "d", "e")
	t.Chdir(top) // paths are from the top wherever git runs
	entries, err := r.ListDir(ctx, "HEAD", "d")
	if err != nil || len(entries) != 2 || entries[0].Path != "d/e" || entries[0].Type != "tree" || entries[1].Path != "d/g.md" {
		t.Fatalf("ListDir(HEAD, d) = %+v, %v", entries, err)
	}
	blob, err := r.CatFile(ctx, "blob", "HEAD:d/g.md")
	if err != nil || string(blob) != "g\n" {
		t.Fatalf("CatFile = %q, %v", blob, err)
	}
	if _, err := r.CatFile(ctx, "blob", "HEAD"); err == nil {
		t.Fatal("CatFile of a commit as a blob: no error")
	}

	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	want := gittest.Git(t, dir, "commit-tree", "-p", ids["one"], "-p", ids["two"], "-m", "m", tree)
	got, err := r.CommitTree(ctx, "HEAD^{tree}", []string{ids["one"], ids["two"]}, "m\n")
	if err != nil || got != want {
		t.Fatalf("CommitTree = %s, %v; git commit-tree -m: %s", got, err, want)
	}

	own := r.With(Exec{Index: filepath.Join(t.TempDir(), "index")})
	if err := own.ReadTree(ctx, ids["one"]); err != nil {
		t.Fatal(err)
	}
	s := files[1]
	if err := own.UpdateIndexInfo(ctx, []TreeFile{{Mode: "0", Path: "a.txt"}, s}); err != nil {
		t.Fatal(err)
	}
	written, err := own.WriteTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "ls-tree", "--name-only", written); got != "s.txt" {
		t.Fatalf("the own index's tree holds %q", got)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("the repository's index moved: %q", got)
	}

	if err := r.ReadTreeMerge(ctx, "HEAD", ids["one"]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("s.txt is still in the work tree: %v", err)
	}
	writeTestFile(t, filepath.Join(dir, "a.txt"), "mine\n")
	if err := r.ReadTreeMerge(ctx, ids["one"], "HEAD"); err == nil {
		t.Fatal("ReadTreeMerge over a changed file: no error")
	}
}

// TestDiffVerbs: the paths and statuses between trees, limited to paths
// taken literally; patches; and whether the index or the work tree
// differs, with and without the stat data refreshed.
func TestDiffVerbs(t *testing.T) {
	r, dir, ids := history(t)
	ctx := context.Background()
	paths, err := r.ChangedPaths(ctx, ids["base"], "HEAD")
	if err != nil || !reflect.DeepEqual(paths, []string{"a.txt", "s.txt"}) {
		t.Fatalf("ChangedPaths = %q, %v", paths, err)
	}
	changes, err := r.TreeChanges(ctx, ids["two"], "HEAD", nil)
	if err != nil || !reflect.DeepEqual(changes, []NameStatus{{"A", "a.txt"}}) {
		t.Fatalf("TreeChanges = %+v, %v", changes, err)
	}
	changes, err = r.TreeChanges(ctx, ids["base"], "HEAD", []string{"s.*"})
	if err != nil || len(changes) != 0 {
		t.Fatalf("TreeChanges limited to a pattern taken literally = %+v, %v", changes, err)
	}
	patch, err := r.TreePatch(ctx, ids["one"], "HEAD")
	if err != nil || !strings.Contains(string(patch), "-a\n+a2\n") || !strings.Contains(string(patch), "+++ b/s.txt") {
		t.Fatalf("TreePatch:\n%s%v", patch, err)
	}
	stat, err := r.TreeDiffstat(ctx, ids["one"], "HEAD")
	if err != nil || !strings.Contains(string(stat), "2 files changed") {
		t.Fatalf("TreeDiffstat:\n%s%v", stat, err)
	}

	writeTestFile(t, filepath.Join(dir, "a.txt"), "a3\n")
	for _, from := range []string{"", ids["one"]} {
		patch, err := r.WorkTreePatch(ctx, from)
		if err != nil || !strings.Contains(string(patch), "+a3\n") {
			t.Fatalf("WorkTreePatch(%q):\n%s%v", from, patch, err)
		}
	}
	for _, c := range []struct {
		commit string
		cached bool
		paths  []string
		want   bool
	}{
		{"HEAD", false, nil, true},
		{"HEAD", true, nil, false},
		{"HEAD", false, []string{"s.txt"}, false},
		{ids["one"], true, []string{"a.txt"}, true},
		{ids["one"], true, []string{"s.txt"}, true},
		{ids["two"], true, []string{"s.txt"}, false},
	} {
		got, err := r.DiffQuiet(ctx, c.commit, c.cached, c.paths...)
		if err != nil || got != c.want {
			t.Errorf("DiffQuiet(%s, cached %v, %q) = %v, %v", c.commit, c.cached, c.paths, got, err)
		}
	}
	gittest.Git(t, dir, "checkout", "-q", "a.txt")
	// Stat data alone changed: diff-index counts it until the refresh.
	future := mustDate(t, "2030-01-01T00:00:00Z")
	if err := os.Chtimes(filepath.Join(dir, "a.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	if got, err := r.DiffIndexQuiet(ctx, "HEAD", false); err != nil || !got {
		t.Fatalf("DiffIndexQuiet before a refresh = %v, %v", got, err)
	}
	if err := r.RefreshIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := r.DiffIndexQuiet(ctx, "HEAD", false); err != nil || got {
		t.Fatalf("DiffIndexQuiet after a refresh = %v, %v", got, err)
	}
	gittest.Git(t, dir, "rm", "-q", "--cached", "s.txt")
	if got, err := r.DiffIndexQuiet(ctx, "HEAD", true); err != nil || !got {
		t.Fatalf("DiffIndexQuiet of the index = %v, %v", got, err)
	}
}
