// Package gitext is the only package that runs git processes or touches a
// repository's files: discovery, subprocess hygiene, objects and ref
// transactions. Higher packages see repositories only through it.
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

// run starts git with args in the current directory and returns stdout.
func run(ctx context.Context, r *Repo, stdin []byte, args ...string) ([]byte, error) {
	return runEnv(ctx, r, "", nil, stdin, args...)
}

// runEnv runs git in dir ("" for the current directory) with extra
// environment variables.
func runEnv(ctx context.Context, r *Repo, dir string, extra []string, stdin []byte, args ...string) ([]byte, error) {
	return runTee(ctx, r, dir, extra, stdin, nil, false, args...)
}

// runTee is runEnv that also copies git's stderr to progress, when given.
// With group, git runs in a process group of its own, all of which an
// ended ctx asks to stop: for git running programs of its own.
func runTee(ctx context.Context, r *Repo, dir string, extra []string, stdin []byte, progress io.Writer, group bool, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	// An ended ctx asks git to stop (SIGTERM: it removes its lock files),
	// rather than killing it with a lock held; a git that does not stop
	// is killed after killGrace.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	}
	cmd.WaitDelay = killGrace
	cmd.Dir = dir
	cmd.Env = Env(r, extra...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return stdout.Bytes(), &Error{Args: args, Stderr: stderr.String(), ExitCode: exit.ExitCode()}
		}
		return nil, fmt.Errorf("cannot run git: %w", err)
	}
	return stdout.Bytes(), nil
}

// Git runs a git command against r and returns its stdout.
func (r *Repo) Git(ctx context.Context, args ...string) ([]byte, error) {
	return run(ctx, r, nil, args...)
}

// GitEnv is Git run in dir ("" for the current directory) with extra
// environment variables: for commands that run programs of their own in
// a work tree, as git rebase --exec does.
func (r *Repo) GitEnv(ctx context.Context, dir string, extra []string, args ...string) ([]byte, error) {
	return runEnv(ctx, r, dir, extra, nil, args...)
}

// GitEnvInput is GitEnv with stdin on git's standard input.
func (r *Repo) GitEnvInput(ctx context.Context, dir string, extra []string, stdin []byte, args ...string) ([]byte, error) {
	return runEnv(ctx, r, dir, extra, stdin, args...)
}

// GitGroup is GitEnv for a git that runs programs of its own (rebase
// --exec): in a process group of its own, which an ended ctx asks to stop
// as a whole, so that none of them outlives the command.
func (r *Repo) GitGroup(ctx context.Context, dir string, extra []string, args ...string) ([]byte, error) {
	return runTee(ctx, r, dir, extra, nil, nil, true, args...)
}

// GitLocking is Git for a command that takes a lock of r's (its index, a
// worktree's HEAD): in a process group of its own, as a ref transaction
// runs, so that a kill -9 of the caller's group leaves it to finish and
// release the lock rather than leaving the lock for a person to clear. An
// ended ctx still asks it to stop (SIGTERM: it removes its lock).
func (r *Repo) GitLocking(ctx context.Context, args ...string) ([]byte, error) {
	return runTee(ctx, r, "", nil, nil, nil, true, args...)
}

// GitProgress is Git for commands that talk to remotes: git's stderr, where
// it reports progress, is also copied to progress (nil: kept quiet).
func (r *Repo) GitProgress(ctx context.Context, progress io.Writer, args ...string) ([]byte, error) {
	return runTee(ctx, r, "", nil, nil, progress, false, args...)
}

// InitBare creates a bare repository at dir with the given object format
// and no template (no sample hooks).
func InitBare(ctx context.Context, dir, format string) error {
	// Private: a shadow created inside a push quarantine still gets its own objects.
	_, err := run(ctx, &Repo{GitDir: dir, Private: true}, nil, "init", "-q", "--bare", "--template=", "--object-format="+format, dir)
	return err
}

// GitIndex is Git with its own index file instead of the repository's (and
// whatever GIT_INDEX_FILE a hook was given).
func (r *Repo) GitIndex(ctx context.Context, index string, args ...string) ([]byte, error) {
	return r.GitIndexInput(ctx, index, nil, args...)
}

// GitIndexInput is GitIndex with stdin on git's standard input.
func (r *Repo) GitIndexInput(ctx context.Context, index string, stdin []byte, args ...string) ([]byte, error) {
	return runEnv(ctx, r, "", []string{"GIT_INDEX_FILE=" + index}, stdin, args...)
}

// GitInput is Git with stdin on git's standard input.
func (r *Repo) GitInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return run(ctx, r, stdin, args...)
}

// ChangedPaths are the paths that differ between commits a and b.
func (r *Repo) ChangedPaths(ctx context.Context, a, b string) ([]string, error) {
	out, err := r.Git(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-renames", a, b)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	return paths, nil
}

// FirstParent is commit's first parent, "" for a root commit. A commit
// stored loose, as one just made is, is read in process, without a look
// at replace refs: it is for commits git-crucible has just made, whose
// ids nothing can have replaced yet. Another is read by git.
func (r *Repo) FirstParent(ctx context.Context, commit string) (string, error) {
	if kind, data, err := r.ReadLoose(commit); err == nil && kind == "commit" {
		c, err := DecodeCommit(data)
		if err != nil || len(c.Parents) == 0 {
			return "", err
		}
		return c.Parents[0], nil
	}
	out, err := r.Git(ctx, "rev-list", "--parents", "-n", "1", commit+"^{commit}", "--")
	if err != nil {
		return "", err
	}
	if f := strings.Fields(string(out)); len(f) > 1 {
		return f[1], nil
	}
	return "", nil
}

// IsAncestor reports whether commit a is reachable from commit b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.Git(ctx, "merge-base", "--is-ancestor", a, b)
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// MergeBase returns a best common ancestor of commits a and b, or "" when
// they share no history. When criss-cross merges leave several, it is the
// lowest id of them, so that every clone and every git version choose the
// same one (git's own pick depends on the order it is asked in).
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := r.Git(ctx, "merge-base", "--all", a, b)
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	bases := strings.Fields(string(out))
	if len(bases) == 0 {
		return "", nil
	}
	return slices.Min(bases), nil
}

// TreeFile is one entry of a recursive tree listing.
type TreeFile struct{ Mode, Type, OID, Path string }

// ListTree lists every file below treeish, recursively (git ls-tree -r).
func (r *Repo) ListTree(ctx context.Context, treeish string) ([]TreeFile, error) {
	out, err := r.Git(ctx, "ls-tree", "-r", "-z", "--full-tree", treeish)
	if err != nil {
		return nil, err
	}
	var files []TreeFile
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("ls-tree %s: unexpected entry %q", treeish, rec)
		}
		files = append(files, TreeFile{Mode: fields[0], Type: fields[1], OID: fields[2], Path: path})
	}
	return files, nil
}
