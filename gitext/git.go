// Package gitext is the only package that runs git processes or touches a
// repository's files: discovery, subprocess hygiene, objects, ref
// transactions, and a typed verb for each git operation the others need
// (revs.go, tree.go, diff.go, index.go, status.go, worktree.go, ...),
// run as an Exec says. Higher packages see repositories only through it
// (internal/layout checks it).
package gitext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Exit codes shared with git.
const (
	ExitFatal = 128 // not a repository, or git itself failed
	ExitUsage = 129 // bad command line
)

// Error is a failed git process: its arguments, stderr and exit code.
type Error struct {
	Args     []string
	Stderr   string
	ExitCode int
}

// IsExit reports whether err is git's exit with status code.
func IsExit(err error, code int) bool {
	var gerr *Error
	return errors.As(err, &gerr) && gerr.ExitCode == code
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.ExitCode < 0 {
		return fmt.Sprintf("git %s: killed by a signal", strings.Join(e.Args, " "))
	}
	if msg == "" {
		return fmt.Sprintf("git %s: exit status %d", strings.Join(e.Args, " "), e.ExitCode)
	}
	// git already says "fatal: ..." or "error: ..."; callers strip nothing.
	return msg
}

// Env returns the environment for a git subprocess: the caller's, minus what
// would make git's output unparseable or interactive, pinned to repo r when
// r is known so that the child sees the same repository whatever its cwd.
func Env(r *Repo, extra ...string) []string {
	drop := map[string]bool{
		"GIT_PAGER": true, "PAGER": true, "LC_ALL": true, "LANGUAGE": true,
		"GIT_EXTERNAL_DIFF": true, "GIT_TRACE": true, "GIT_TRACE_PACKET": true,
	}
	if r != nil {
		drop["GIT_DIR"], drop["GIT_WORK_TREE"], drop["GIT_COMMON_DIR"] = true, true, true
	}
	if r != nil && r.Private {
		drop["GIT_OBJECT_DIRECTORY"], drop["GIT_ALTERNATE_OBJECT_DIRECTORIES"], drop["GIT_QUARANTINE_PATH"] = true, true, true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_PAGER=cat", "PAGER=cat", "LC_ALL=C")
	if r != nil {
		env = append(env, "GIT_DIR="+r.GitDir)
		if r.WorkTree != "" {
			env = append(env, "GIT_WORK_TREE="+r.WorkTree)
		}
	}
	return append(env, extra...)
}

// killGrace is how long a git asked to stop has before it is killed.
const killGrace = 5 * time.Second

// Exec says how a Repo runs git, past which repository it runs in: the
// zero Exec runs git in the caller's directory, with the environment Env
// gives, ended with ctx. Repo.With makes a Repo that runs its verbs so.
type Exec struct {
	Dir   string   // where git runs, "" for the caller's directory: the paths it reads and prints are from there
	Env   []string // more environment variables, "KEY=value"
	Index string   // an index file of its own instead of the repository's (GIT_INDEX_FILE)
	// Config are settings for this git alone, as git takes them: "-c",
	// "key=value" pairs.
	Config []string
	// Group runs git in a process group of its own, all of which an ended
	// ctx asks to stop: for a git that runs programs of its own (rebase's
	// exec lines, hooks), or takes a lock of the repository's (its index,
	// a worktree's HEAD), which a kill -9 of the caller's group then
	// leaves it to finish and release rather than leaving the lock for a
	// person to clear. An ended ctx still asks it to stop (SIGTERM: it
	// removes its lock).
	Group bool
	// Progress also gets git's stderr, where it reports progress (nil:
	// kept quiet).
	Progress io.Writer
	// Inherit gives git the caller's environment as it is (plus Env), not
	// one pinned to the repository: for a git whose hooks run git in
	// repositories of their own.
	Inherit bool
	// Run runs git's command and waits for it (nil: cmd.Run): for a caller
	// that starts git in a process group it records itself.
	Run func(*exec.Cmd) error
}

// With is r running git as x says. It is for the git of r's verbs: ref
// transactions and object readers run as they always do.
func (r *Repo) With(x Exec) *Repo {
	c := *r
	c.via = &x
	return &c
}

// run runs git against r (nil before there is one) as r's Exec says, with
// stdin on its standard input when not nil, and returns its stdout.
func run(ctx context.Context, r *Repo, stdin []byte, args ...string) ([]byte, error) {
	var x Exec
	if r != nil && r.via != nil {
		x = *r.via
	}
	return runWith(ctx, r, x, stdin, args...)
}

// runWith is run as x says.
func runWith(ctx context.Context, r *Repo, x Exec, stdin []byte, args ...string) ([]byte, error) {
	for i := 0; i < len(x.Config); i += 2 {
		if x.Config[i] != "-c" || i+1 == len(x.Config) {
			return nil, fmt.Errorf("git settings %q are not -c key=value pairs", x.Config)
		}
	}
	args = append(slices.Clip(x.Config), args...)
	cmd := exec.CommandContext(ctx, "git", args...)
	// An ended ctx asks git to stop (SIGTERM: it removes its lock files),
	// rather than killing it with a lock held; a git that does not stop
	// is killed after killGrace.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if x.Group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	}
	cmd.WaitDelay = killGrace
	cmd.Dir = x.Dir
	extra := x.Env
	if x.Index != "" {
		extra = append(slices.Clip(extra), "GIT_INDEX_FILE="+x.Index)
	}
	if x.Inherit {
		cmd.Env = append(os.Environ(), extra...)
	} else {
		cmd.Env = Env(r, extra...)
	}
	if stdin != nil {
		f, err := stdinFile(stdin)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if x.Progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, x.Progress)
	}
	runCmd := x.Run
	if runCmd == nil {
		runCmd = (*exec.Cmd).Run
	}
	if err := runCmd(cmd); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return stdout.Bytes(), &Error{Args: args, Stderr: stderr.String(), ExitCode: exit.ExitCode()}
		}
		return nil, fmt.Errorf("cannot run git: %w", err)
	}
	return stdout.Bytes(), nil
}

// stdinFile is data in an unlinked temporary file, at its start, for git
// to read as its standard input: all of it is there before git starts.
// Through a pipe, a git that outlives its caller — git-crucible killed
// alone, or a git in a process group of its own (Exec.Group) — reads only
// what was written before the caller died, and git add --all
// --pathspec-from-file=- that finds no paths stages the whole work tree,
// the user's untracked files too (seen in a kill soak).
func stdinFile(data []byte) (*os.File, error) {
	f, err := os.CreateTemp("", "git-crucible-stdin-")
	if err != nil {
		return nil, fmt.Errorf("git's input: %w", err)
	}
	os.Remove(f.Name())
	if _, err = f.Write(data); err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("git's input: %w", err)
	}
	return f, nil
}

// Git runs a git command against r as r's Exec says and returns its
// stdout: git's arguments as they are, for tests; the packages above
// gitext run git through its verbs alone (internal/layout checks it).
func (r *Repo) Git(ctx context.Context, args ...string) ([]byte, error) {
	return run(ctx, r, nil, args...)
}

// InitBare creates a bare repository at dir with the given object format
// and no template (no sample hooks).
func InitBare(ctx context.Context, dir, format string) error {
	// Private: a shadow created inside a push quarantine still gets its own objects.
	_, err := run(ctx, &Repo{GitDir: dir, Private: true}, nil, "init", "-q", "--bare", "--template=", "--object-format="+format, dir)
	return err
}
