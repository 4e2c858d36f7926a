package fastgate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
)

// LocalEnv are the variables that pin git to one repository: git's own
// list (git rev-parse --local-env-vars) but for GIT_CONFIG_PARAMETERS and
// GIT_CONFIG_COUNT, which carry `git -c` settings and which git itself
// keeps when it runs a command in another repository (a submodule's). A
// gate runs without them, so that git in it finds the repository of the
// directory it runs in, not the one its caller was given.
func LocalEnv() []string {
	return []string{
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_OBJECT_DIRECTORY",
		"GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
		"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
		"GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
	}
}

// Env is environ (as os.Environ gives it) without LocalEnv.
func Env(environ []string) []string {
	local := LocalEnv()
	var env []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(local, k) {
			env = append(env, kv)
		}
	}
	return env
}

// Command is command run with sh -c in dir, the one way a gate (or any
// project command an engine runs: a build step's, a baseline's) runs: in
// the caller's environment without LocalEnv, in a process group of its
// own, which is killed (SIGKILL, the whole group) when ctx ends.
func Command(ctx context.Context, dir, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir, cmd.Env = dir, Env(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// Run runs Command(ctx, dir, command), its output (stdout and stderr,
// interleaved) captured, and returns its exit status (128+N when killed
// by signal N) and output. An error is a command that could not start, or
// ctx ending (ctx.Err(), with the output so far); its group is killed then.
func Run(ctx context.Context, dir, command string) (exit int, output []byte, err error) {
	return RunWith(ctx, dir, command, (*exec.Cmd).Run)
}

// RunWith is Run, run starting the command and waiting for it: a caller
// that must start it its own way (say, registering its process group
// first) does so there, the command and its environment as Command made
// them.
func RunWith(ctx context.Context, dir, command string, run func(*exec.Cmd) error) (exit int, output []byte, err error) {
	cmd := Command(ctx, dir, command)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = run(cmd)
	if ctx.Err() != nil {
		return 0, out.Bytes(), ctx.Err()
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), out.Bytes(), nil
		}
		return ee.ExitCode(), out.Bytes(), nil
	case err != nil:
		return 0, nil, err
	}
	return 0, out.Bytes(), nil
}
