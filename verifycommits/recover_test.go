package verifycommits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/repotest"
)

// TestEndRunStopsGateRebaseWithoutSignallingGit ends a run's rebase while
// its gate runs (a gate that never ends by itself): the gate is stopped,
// git stops the rebase on its own (exit 1, not a signal: a signal can
// leave its index.lock), no result is recorded for the stopped gate, and
// the run, aborted, leaves no lock and no rebase.
func TestEndRunStopsGateRebaseWithoutSignallingGit(t *testing.T) {
	r := repotest.Open(t)
	base := gittest.Git(t, r.WorkTree, "rev-parse", "HEAD")
	for i := 1; i <= 3; i++ {
		if err := os.WriteFile(filepath.Join(r.WorkTree, fmt.Sprint("f", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, r.WorkTree, "add", "-A")
		gittest.Git(t, r.WorkTree, "commit", "-q", "-m", fmt.Sprint("c", i))
	}
	started := filepath.Join(t.TempDir(), "started")
	cmd := "if [ -e f2 ]; then : >'" + started + "'; while :; do sleep 0.05; done; fi"
	s := Open(r)
	o := Options{Base: base, Gate: Gate{Name: "exec", Command: cmd}, Spec: "spec", Mode: Force}
	done := make(chan error, 1)
	go func() {
		_, err := s.Verify(context.Background(), o)
		done <- err
	}()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before its gate at c2: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	m, ok, err := readMarker(r)
	if err != nil || !ok || m.Kind != gateRebase {
		t.Fatalf("the run's marker: %+v, %v, %v", m, ok, err)
	}
	if err := endRun(m); err != nil {
		t.Fatal(err)
	}
	err = <-done
	var gerr *gitext.Error
	if !errors.As(err, &gerr) || gerr.ExitCode != 1 {
		t.Fatalf("the run's rebase ended with %v, want git's own exit 1", err)
	}
	for _, name := range []string{"index.lock", "HEAD.lock", "rebase-merge", "crucible-verify-commits"} {
		if _, err := os.Lstat(filepath.Join(r.GitDir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf(".git/%s is left (%v)", name, err)
		}
	}
	if _, ok, _ := s.Lookup(gittest.Git(t, r.WorkTree, "rev-parse", "HEAD~1^{tree}"), "spec"); ok {
		t.Error("the stopped gate's commit has a result")
	}
}
