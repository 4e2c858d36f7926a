package fastgate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestEnv(t *testing.T) {
	for _, tc := range []struct {
		kv   string
		kept bool
	}{
		{"PATH=/bin", true},
		{"HOME=/home/me", true},
		{"GIT_CONFIG_PARAMETERS='core.editor'='true'", true},
		{"GIT_CONFIG_COUNT=1", true},
		{"GIT_CONFIG_KEY_0=core.editor", true},
		{"GIT_AUTHOR_NAME=me", true},
		{"GIT_DIRECTORY=x", true},
		{"GIT_DIR=/elsewhere/.git", false},
		{"GIT_WORK_TREE=/elsewhere", false},
		{"GIT_INDEX_FILE=/elsewhere/.git/index", false},
		{"GIT_COMMON_DIR=/elsewhere/.git", false},
		{"GIT_PREFIX=sub/", false},
		{"GIT_OBJECT_DIRECTORY=/elsewhere/.git/objects", false},
		{"GIT_ALTERNATE_OBJECT_DIRECTORIES=/elsewhere/.git/objects", false},
		{"GIT_IMPLICIT_WORK_TREE=0", false},
		{"GIT_SHALLOW_FILE=/elsewhere/shallow", false},
		{"GIT_CONFIG=/elsewhere/config", false},
	} {
		if got := slices.Contains(Env([]string{tc.kv}), tc.kv); got != tc.kept {
			t.Errorf("Env keeps %q: %v, want %v", tc.kv, got, tc.kept)
		}
	}
}

// gitInit makes a repository at dir with one commit.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "c"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = Env(os.Environ())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// A gate's git finds the repository of the directory it runs in, whatever
// its caller's environment names.
func TestRunFindsItsOwnRepository(t *testing.T) {
	other, own := filepath.Join(t.TempDir(), "other"), filepath.Join(t.TempDir(), "own")
	gitInit(t, other)
	gitInit(t, own)
	own, err := filepath.EvalSymlinks(own)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	t.Setenv("GIT_OBJECT_DIRECTORY", filepath.Join(other, ".git", "objects"))
	t.Setenv("GIT_COMMON_DIR", filepath.Join(other, ".git"))
	code, out, err := Run(t.Context(), own, "git rev-parse --show-toplevel --absolute-git-dir && { env | grep -E '^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|COMMON_DIR)=' || true; }")
	if err != nil || code != 0 {
		t.Fatalf("Run: exit %d, %v\n%s", code, err, out)
	}
	if want := own + "\n" + filepath.Join(own, ".git") + "\n"; string(out) != want {
		t.Errorf("the gate's git found:\n%s\nwant:\n%s", out, want)
	}
}

func TestRunStatus(t *testing.T) {
	for _, tc := range []struct {
		command string
		exit    int
		output  string
	}{
		{"echo out; echo err >&2", 0, "out\nerr\n"},
		{"echo no; exit 3", 3, "no\n"},
		{"kill -TERM $$", 128 + int(syscall.SIGTERM), ""},
	} {
		code, out, err := Run(t.Context(), t.TempDir(), tc.command)
		if err != nil || code != tc.exit || string(out) != tc.output {
			t.Errorf("Run(%q) = %d, %q, %v; want %d, %q", tc.command, code, out, err, tc.exit, tc.output)
		}
	}
	if _, _, err := Run(t.Context(), filepath.Join(t.TempDir(), "gone"), "true"); err == nil {
		t.Error("Run in a missing directory: no error")
	}
}

func TestCommandOwnProcessGroup(t *testing.T) {
	cmd := Command(t.Context(), t.TempDir(), "sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid != cmd.Process.Pid || pgid == syscall.Getpgrp() {
		t.Errorf("the gate's process group is %d (its pid %d, the test's group %d): want a group of its own", pgid, cmd.Process.Pid, syscall.Getpgrp())
	}
}

// alive says whether pid is a process not yet dead (a zombie is dead).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

func TestRunKillsItsGroupWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := Run(ctx, dir, "sleep 300 & echo $! >child.pid; wait")
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate never wrote its child's pid")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "child.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run cancelled: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once cancelled")
	}
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the gate's child sleep (pid %d) outlived its cancelled gate", pid)
		}
	}
}
