package checkpoint

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestKilledAfterResetBlamesNoLaterLock: a restore killed after its git
// reset had finished (here while it set ORIG_HEAD) leaves its owner record;
// a later index.lock, a user's running git, is then git's to report, not
// the killed restore's.
func TestKilledAfterResetBlamesNoLaterLock(t *testing.T) {
	if os.Getenv("CRUCIBLE_KILLED_RESET_DIR") != "" {
		killedResetHelper(t)
		return
	}
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "f.txt"), "one\n")
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	one := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	two := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	hooks := t.TempDir()
	// Kill the restore (git's parent) once ORIG_HEAD, its last step, is set.
	writeFile(t, filepath.Join(hooks, "reference-transaction"),
		"#!/bin/sh\n[ \"$1\" = committed ] && grep -q ORIG_HEAD && kill -9 \"$CRUCIBLE_HELPER_PID\"\nexit 0\n")
	if err := os.Chmod(filepath.Join(hooks, "reference-transaction"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "config", "core.hooksPath", hooks)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledAfterResetBlamesNoLaterLock$")
	cmd.Env = append(os.Environ(), "CRUCIBLE_KILLED_RESET_DIR="+dir, "CRUCIBLE_RESET_FROM="+two, "CRUCIBLE_RESET_TO="+one)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the restore was not killed: %v\n%s", err, out)
	}
	for i := 0; i < 100; i++ { // its git finishes on its own
		if _, err := os.Lstat(filepath.Join(dir, ".git", "ORIG_HEAD.lock")); os.IsNotExist(err) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	gittest.Git(t, dir, "config", "--unset", "core.hooksPath")
	if now := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD")); now != one {
		t.Fatalf("the killed restore did not move HEAD: %s", now)
	}
	writeFile(t, filepath.Join(dir, ".git", "index.lock"), "") // a user's git
	err := s.ResetBranch(ctx, one, two)
	var killed *KilledRestoreError
	if err == nil || errors.As(err, &killed) || !strings.Contains(err.Error(), "index.lock': File exists") {
		t.Fatalf("a later lock was reported as: %v", err)
	}
}

// killedResetHelper is the restore the test kills.
func killedResetHelper(t *testing.T) {
	os.Setenv("CRUCIBLE_HELPER_PID", strconv.Itoa(os.Getpid()))
	s := openShadowIn(t, os.Getenv("CRUCIBLE_KILLED_RESET_DIR"))
	err := s.ResetBranch(ctx, os.Getenv("CRUCIBLE_RESET_FROM"), os.Getenv("CRUCIBLE_RESET_TO"))
	time.Sleep(5 * time.Second) // killed before this
	t.Fatalf("not killed: %v", err)
}
