package cliexit

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestReportGitError: an error that wraps git's says both what was being
// done and git's own words, each prefix once; git's exit code maps to 128
// unless it is one of git's own above 125.
func TestReportGitError(t *testing.T) {
	lock := &gitext.Error{Args: []string{"fetch"}, Stderr: "error: cannot lock ref 'refs/x': is at 1 but expected 2\n", ExitCode: 1}
	for _, c := range []struct {
		err  error
		want string
		code int
	}{
		{lock, "error: cannot lock ref 'refs/x': is at 1 but expected 2\n", 128},
		{fmt.Errorf("another sync moved the same ref at the same time: %w", lock),
			"error: cannot lock ref 'refs/x': is at 1 but expected 2\nfatal: another sync moved the same ref at the same time\n", 128},
		{fmt.Errorf("reading notes/a.md: %w", &gitext.Error{Stderr: "fatal: bad object HEAD\n", ExitCode: 128}),
			"fatal: bad object HEAD\nfatal: reading notes/a.md\n", 128},
		{fmt.Errorf("pipeline p1: %w", &gitext.Error{Stderr: "object missing\n", ExitCode: 1}),
			"error: object missing\nfatal: pipeline p1\n", 128},
		{&gitext.Error{Stderr: "usage: git x\n", ExitCode: 129}, "fatal: usage: git x\n", 129},
		{errors.Join(errors.New("x"), lock), "error: cannot lock ref 'refs/x': is at 1 but expected 2\nfatal: x\n", 128},
		{fmt.Errorf("in %w, ref x", lock), "fatal: in error: cannot lock ref 'refs/x': is at 1 but expected 2, ref x\n", 128},
	} {
		var b bytes.Buffer
		if code := Report(&b, c.err); b.String() != c.want || code != c.code {
			t.Errorf("%v:\n%q exit %d\nwant\n%q exit %d", c.err, b.String(), code, c.want, c.code)
		}
	}
}

// TestReportSignalledGit: git killed by a signal (exit code -1 to Go) ends
// the command with 128, as a fatal git error, not 255.
func TestReportSignalledGit(t *testing.T) {
	t.Chdir(gittest.Init(t))
	repo, err := gitext.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Git(t.Context(), "-c", "alias.die=!kill -KILL $PPID", "die")
	var gerr *gitext.Error
	if !errors.As(err, &gerr) || gerr.ExitCode != -1 {
		t.Fatalf("git was not killed: %v", err)
	}
	var b bytes.Buffer
	if code := Report(&b, fmt.Errorf("writing p1: %w", err)); code != ExitFatal || b.String() != "error: git -c alias.die=!kill -KILL $PPID die: killed by a signal\nfatal: writing p1\n" {
		t.Errorf("%q exit %d", b.String(), code)
	}
}

// TestReportMissingObject: an object gone from the repository (what a
// gc --prune=now racing a write leaves) says where to find an earlier tip.
func TestReportMissingObject(t *testing.T) {
	var b bytes.Buffer
	err := fmt.Errorf("commit a0241c2cd330: a0241c2cd33094c2cc75b70b694a75e27b87d889: %w", gitext.ErrMissing)
	want := "fatal: commit a0241c2cd330: a0241c2cd33094c2cc75b70b694a75e27b87d889: object not found\n" +
		"hint: an object is gone from the repository (a git gc --prune=now while it was being written?);\n" +
		"hint: a chain's reflog holds its earlier tips: git reflog show refs/crucible/pipelines/<id>, then git update-ref to a whole one\n"
	if code := Report(&b, err); code != ExitFatal || b.String() != want {
		t.Errorf("%q exit %d", b.String(), code)
	}
}
