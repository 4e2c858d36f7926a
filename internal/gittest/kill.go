package gittest

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// RunUntil starts cmd in a process group of its own and waits for it to
// end, unless kill fires first: then it SIGKILLs the whole group — the
// process and the git it runs, as kill -9 of a command would, though not
// the agents, which have groups of their own. It returns the exit status,
// -1 when killed.
func RunUntil(t testing.TB, cmd *exec.Cmd, kill <-chan time.Time) int {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-kill:
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	return cmd.ProcessState.ExitCode()
}
