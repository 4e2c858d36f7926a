package hooks

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
)

// TestRefsHereIgnoresStops: once a hook lets its notes ref move in
// process, ^C, a hang-up or SIGTERM no longer end it mid-move.
func TestRefsHereIgnoresStops(t *testing.T) {
	if os.Getenv("HOOKS_REFS_HERE") != "" {
		refsHere(&gitext.Repo{})
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM} {
			syscall.Kill(os.Getpid(), sig)
		}
		os.Exit(7)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRefsHereIgnoresStops$")
	cmd.Env = append(os.Environ(), "HOOKS_REFS_HERE=1")
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signaled() || ws.ExitStatus() != 7 {
		t.Fatalf("the helper ended with %v", err)
	}
}
