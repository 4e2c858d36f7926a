package gitext

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestLogVerbs: ResolveCommit, Log and ShortStat against real git, and a
// revision that looks like an option never reaching git as one.
func TestLogVerbs(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	commit := func(file, text, msg string) string {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "add", file)
		gittest.Git(t, dir, "commit", "-q", "-m", msg)
		return gittest.Git(t, dir, "rev-parse", "HEAD")
	}
	first := commit("a", "1\n", "first")
	second := commit("a", "1\n2\n3\n", "second\n\nCrucible-Pipeline: p\n")
	third := commit("b", "x\n", "third")

	for _, tc := range []struct {
		rev, want string
		fail      bool
	}{
		{"HEAD", third, false},
		{"HEAD~2", first, false},
		{second[:12], second, false},
		{"HEAD^{tree}", "", true}, // a tree is no commit
		{"nope", "", true},
		{"--all", "", true},
		{"-n1", "", true},
	} {
		got, err := r.ResolveCommit(ctx, tc.rev)
		if (err != nil) != tc.fail || got != tc.want {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %q (fail %v)", tc.rev, got, err, tc.want, tc.fail)
		}
	}

	logged, err := r.Log(ctx, "HEAD", []string{first}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, c := range logged {
		subjects = append(subjects, c.Subject)
	}
	if !reflect.DeepEqual(subjects, []string{"second", "third"}) || logged[0].Hash != second ||
		logged[0].Trailers != "Crucible-Pipeline: p\n" || logged[1].Trailers != "" || len(logged[1].Abbrev) < 7 {
		t.Errorf("Log(HEAD ^first) = %+v", logged)
	}
	if newest, err := r.Log(ctx, "HEAD", nil, 1); err != nil || len(newest) != 1 || newest[0].Hash != third {
		t.Errorf("Log(HEAD, max 1) = %+v, %v; want the newest", newest, err)
	}
	if _, err := r.Log(ctx, "--all", nil, 0); err == nil {
		t.Errorf("Log(--all) took it as an option")
	}

	stat, err := r.ShortStat(ctx, first, third)
	if err != nil || stat != (DiffStat{Files: 2, Insertions: 3}) {
		t.Errorf("ShortStat = %+v, %v; want 2 files, 3 insertions", stat, err)
	}
	if stat, err := r.ShortStat(ctx, third, third); err != nil || stat != (DiffStat{}) {
		t.Errorf("ShortStat of no change = %+v, %v", stat, err)
	}
}

// TestLsFilesAt: a tracked file's own entry, a directory's files, nothing
// for an untracked path, and a path taken literally, from any directory.
func TestLsFilesAt(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	for _, f := range []string{"a", "d/b", "*"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, dir, "add", "a", "d/b", "*")
	t.Chdir(filepath.Join(dir, "d"))
	for path, want := range map[string][]string{"a": {"a"}, "d": {"d/b"}, "*": {"*"}, "nope": nil, "d/b": {"d/b"}} {
		entries, err := r.LsFilesAt(ctx, path)
		var got []string
		for _, e := range entries {
			got = append(got, e.Path)
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("LsFilesAt(%q) = %v, %v; want %v", path, got, err, want)
		}
	}
	if p, err := r.ShowPrefix(ctx); err != nil || p != "d/" {
		t.Errorf("ShowPrefix in d = %q, %v", p, err)
	}
}
