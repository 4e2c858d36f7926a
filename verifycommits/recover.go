package verifycommits

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

// marker is what a run under way leaves in the worktree's git dir, beside
// the rebase it runs: enough to put the branch back and keep what was
// tested if the run is killed.
type marker struct {
	Run       string   `json:"run"`    // the run's directory: gate, todo, results, logs
	Head      string   `json:"head"`   // HEAD's commit before the rebase
	Branch    string   `json:"branch"` // the ref HEAD was on, "" when detached
	Base      string   `json:"base"`
	Gate      Gate     `json:"gate"`
	Spec      string   `json:"spec"`
	Mode      Mode     `json:"mode"`
	KeepGoing bool     `json:"keep_going"`
	Commits   []Commit `json:"commits"` // the range, by the index the results name
	// Pgid is the process group of the run's git rebase (the gate its
	// exec lines run is in it), recorded before that git starts: see
	// runGroup. Its processes hold the run's lock (runLock) while they live.
	Pgid int `json:"pgid,omitempty"`
	// Kind says how a recovery ends the group Pgid names: see endRun.
	Kind groupKind `json:"kind,omitempty"`
	Fix  bool      `json:"fix,omitempty"` // a --fix run: its rebase amends a commit

	lock *os.File // the run's lock, once held: see hold
}

// groupKind is what a run's group runs, which says how a recovery ends
// it (endRun): git stopped by a signal at the wrong moment leaves its lock
// (a signal while it creates one) or half of its rebase's state (while it
// removes it), so a recovery signals no git of the run's own.
type groupKind int

const (
	// stopGroup is a gate or the fixer: asked to stop (SIGTERM).
	stopGroup groupKind = iota
	// finishGroup is a git that writes and ends on its own (an abort, an
	// amend, a rebase with no gate to run): waited for.
	finishGroup
	// gateRebase is the rebase whose exec lines run the gate: asked to
	// stop at its next exec line, its gate stopped, then waited for.
	gateRebase
)

// runLock is the file whose flock the processes of a run's rebase hold
// while any of them lives: the run's directory is its own, so a process
// an earlier run left (a gate's daemon) cannot hold a later run's.
func runLock(run string) string { return filepath.Join(run, "lock") }

// startGroup starts cmd (a git rebase, a gate, the fixer) in a process
// group of its own that m records before cmd starts, for a recovery after
// a kill to end it: an sh starts first, waits for a line on a pipe, which
// it gets once the marker has its pid (its group's id), and only then is
// replaced by cmd. A run killed before that line leaves sh an end of
// file: it exits, cmd never starts. Every process of the group inherits
// the run's lock (hold), held while it lives. kind is what cmd is, for a
// recovery to end it: a gateRebase's git also holds gitLock, which its
// exec lines close before they run the gate. The caller waits for cmd.
func (s *Store) startGroup(m *marker, cmd *exec.Cmd, kind groupKind) error {
	if err := m.hold(); err != nil {
		return err
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return err
	}
	wait, start, err := os.Pipe()
	if err != nil {
		return err
	}
	defer wait.Close()
	defer start.Close()
	cmd.Path, cmd.Args = sh, append([]string{"sh", "-c", `IFS= read -r go <&4 || exit 1; exec 4<&-; exec "$@"`, "sh"}, cmd.Args...)
	cmd.ExtraFiles = []*os.File{m.lock, wait}
	if kind == gateRebase {
		git, err := os.OpenFile(gitLock(m.Run), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer git.Close()
		if err := syscall.Flock(int(git.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return fmt.Errorf("%s: %w", gitLock(m.Run), err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, git) // fd 5
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	m.Pgid, m.Kind = cmd.Process.Pid, kind
	if err := m.write(s.repo); err != nil {
		start.Close() // sh exits: cmd never runs
		_ = cmd.Wait()
		return err
	}
	_, _ = start.Write([]byte("go\n")) // sh gone: Wait says why
	return nil
}

// runGroup runs cmd under startGroup and returns what cmd.Wait does.
func (s *Store) runGroup(m *marker, cmd *exec.Cmd, kind groupKind) error {
	if err := s.startGroup(m, cmd, kind); err != nil {
		return err
	}
	return cmd.Wait()
}

// hold takes the run's lock, once, for the processes of its groups to
// inherit: a recovery knows none of them runs once it can take it.
func (m *marker) hold() error {
	if m.lock != nil {
		return nil
	}
	lock, err := os.OpenFile(runLock(m.Run), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return fmt.Errorf("%s: %w", runLock(m.Run), err)
	}
	m.lock = lock
	return nil
}

// release lets go of the run's lock, once this process has no more use
// for it (its groups' processes may still hold it).
func (m *marker) release() {
	if m.lock != nil {
		m.lock.Close()
	}
}

// gitGroup is the repository running git in the work tree under runGroup,
// with env and config (git -c pairs) its own; an ended ctx asks its group
// to stop (SIGTERM). kind is as for startGroup.
func (s *Store) gitGroup(m *marker, kind groupKind, env []string, config ...string) *gitext.Repo {
	return s.repo.With(gitext.Exec{Dir: s.repo.WorkTree, Env: env, Config: config, Group: true,
		Run: func(cmd *exec.Cmd) error { return s.runGroup(m, cmd, kind) }})
}

// endRun ends what a killed run left running, before anything is put
// back under it: a process that still holds the run's lock is of one of
// its recorded groups, the last of which is ended as its kind says. A git
// that ends on its own (finishGroup) is waited for. The rebase running the
// gate (gateRebase) is asked to stop, without a signal to its git: run's
// stop file makes its next exec line fail, and the exec line running the
// gate now (its pid in run's pid file) is asked to stop (SIGTERM), which
// git sees fail; the group is frozen (SIGSTOP) meanwhile, so that the pid
// cannot be another's. Its git then stops, or finishes when it is past
// its gates, and is waited for until it no longer holds gitLock. Whatever
// is left (a gate's processes, the fixer) is asked to stop (SIGTERM),
// then killed, and waited for until none holds the run's lock. A lock no
// one holds is a run with nothing left running, whose group's id is not
// touched (another process may have it by now).
func endRun(m marker) error {
	lock, err := os.Open(runLock(m.Run))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing of it ever started
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	free := func(lock *os.File, wait time.Duration) bool {
		for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
			if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
		}
	}
	if free(lock, 0) {
		return nil
	}
	switch {
	case m.Pgid <= 0:
	case m.Kind == finishGroup:
		if free(lock, finishWait) {
			return nil
		}
	case m.Kind == gateRebase:
		if err := os.WriteFile(stopFile(m.Run), nil, 0o644); err != nil {
			return err
		}
		_ = syscall.Kill(-m.Pgid, syscall.SIGSTOP) // ESRCH: gone meanwhile
		if b, err := os.ReadFile(pidFile(m.Run)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && pid != m.Pgid {
				if pg, err := syscall.Getpgid(pid); err == nil && pg == m.Pgid {
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		_ = syscall.Kill(-m.Pgid, syscall.SIGCONT)
		if git, err := os.Open(gitLock(m.Run)); err == nil {
			free(git, finishWait)
			git.Close()
		}
		if free(lock, 0) {
			return nil
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if m.Pgid > 0 {
			_ = syscall.Kill(-m.Pgid, sig) // ESRCH: gone meanwhile
		}
		if free(lock, endWait) {
			return nil
		}
	}
	return outcome.WithHints(fmt.Errorf("a process of the interrupted run still runs (it holds %s)", runLock(m.Run)),
		"end it (fuser -v "+runLock(m.Run)+" names it), then: git crucible verify-commits --abort")
}

// stopFile is the file a recovery writes to stop a run's rebase at its
// next exec line (see the run's gate file).
func stopFile(run string) string { return filepath.Join(run, "stop") }

// pidFile holds the pid of the sh of the exec line running the gate.
func pidFile(run string) string { return filepath.Join(run, "pid") }

// gitLock is the file whose flock a gateRebase's git holds while it (or
// a git it runs) lives; its exec lines close it before the gate runs.
func gitLock(run string) string { return filepath.Join(run, "git.lock") }

// finishWait is how long endRun waits for a killed run's git that ends on
// its own before it is asked to stop all the same.
const finishWait = time.Minute

// waitIndexLock gives a git the killed run started outside its groups
// (one reading the index, which may refresh it) a moment to finish and
// release the index, before the abort needs it. A lock left by a git
// killed with it stays: the abort says so.
func waitIndexLock(repo *gitext.Repo) {
	lock := filepath.Join(repo.GitDir, "index.lock")
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Lstat(lock); errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// endWait is how long endRun waits for a killed run's processes to end
// after each signal: git ends at once on SIGTERM, a gate may take a
// moment; one that outlives SIGKILL left the group.
const endWait = 5 * time.Second

func markerPath(repo *gitext.Repo) string {
	return filepath.Join(repo.GitDir, "crucible-verify-commits")
}

func (m marker) write(repo *gitext.Repo) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(markerPath(repo), b, 0o644)
}

func readMarker(repo *gitext.Repo) (marker, bool, error) {
	var m marker
	b, err := os.ReadFile(markerPath(repo))
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: %w", markerPath(repo), err)
	}
	return m, true, nil
}

func removeMarker(repo *gitext.Repo) { _ = os.Remove(markerPath(repo)) }

// abortRebase aborts the rebase run m left under way, which puts the
// branch back, in the run's recorded group as the rebase ran. One git
// cannot abort (a file in the way) stays, with the run's marker and
// directory, for verify-commits --abort to finish.
func (s *Store) abortRebase(ctx context.Context, m *marker) error {
	if s.repo.Operation() != "rebase" {
		return nil
	}
	if err := s.gitGroup(m, finishGroup, nil).RebaseAbort(context.WithoutCancel(ctx)); err != nil {
		return outcome.WithHints(fmt.Errorf("cannot abort the rebase: %w", err),
			"move what git names out of the way, then: git crucible verify-commits --abort")
	}
	return nil
}

// cleanUp removes run's directory and the marker, unless its rebase is
// still under way: --abort and --continue need them to put it back.
func (s *Store) cleanUp(run string) {
	if s.repo.Operation() == "rebase" {
		return
	}
	removeMarker(s.repo)
	os.RemoveAll(run)
}

// lockWorktree makes sure one run at a time rebases in this worktree (a
// second would abort the first's rebase as its own); the kernel releases
// the lock when its holder dies.
func lockWorktree(repo *gitext.Repo) (unlock func(), err error) {
	unlock, err = fsutil.TryLock(markerPath(repo)+".lock", []byte(gitext.Owner()))
	var held *fsutil.HeldError
	if errors.As(err, &held) {
		return nil, &outcome.Refused{Err: errors.New("another verify-commits is running in this worktree")}
	}
	return unlock, err
}

// Interrupted is a killed run, recovered: the branch back as it was, the
// results it had recorded kept. Options run it again.
type Interrupted struct {
	Options Options
	Head    string
	Branch  string
	Kept    int // results the killed run had, now recorded
}

// Interrupted reports whether a run was killed in this worktree, for
// Recover to put back.
func (s *Store) Interrupted() (bool, error) {
	_, ok, err := readMarker(s.repo)
	return ok, err
}

// Recover puts back a run that was killed mid-way (a stale rebase-merge
// directory and the run's marker): it ends what the run left running (its
// rebase's process group), records the results the run's exec lines had
// written, aborts the rebase, checks that HEAD and its branch are what
// they were, and forgets the run. A rebase that verify-commits did not
// start is left alone.
func (s *Store) Recover(ctx context.Context) (*Interrupted, error) {
	unlock, err := lockWorktree(s.repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, ok, err := readMarker(s.repo)
	if err != nil {
		return nil, err
	}
	if !ok {
		if op := s.repo.Operation(); op != "" {
			return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("the %s under way was not started by verify-commits", op)},
				"see: git status")
		}
		return nil, &outcome.Refused{Err: errors.New("no interrupted verify-commits run in this worktree")}
	}
	return s.recover(ctx, m)
}

// recover is Recover, the worktree locked, m the killed run's marker.
// Whatever it cannot vouch for it leaves as it is, the marker with it, and
// says what to run.
func (s *Store) recover(ctx context.Context, m marker) (*Interrupted, error) {
	if err := endRun(m); err != nil {
		return nil, err
	}
	commits := append([]Commit(nil), m.Commits...)
	if err := s.collect(m.Run, m.Spec, commits); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	kept := 0
	for _, c := range commits {
		if c.Status != "" {
			kept++
		}
	}
	if _, err := s.Flush(ctx); err != nil {
		return nil, err
	}
	if s.repo.Operation() == "rebase" {
		if err := s.checkOurs(m); err != nil {
			return nil, err
		}
		// A pick the rebase was stopped in leaves its CHERRY_PICK_HEAD,
		// which the abort keeps.
		_, err := os.Stat(filepath.Join(s.repo.GitDir, "CHERRY_PICK_HEAD"))
		picking := err == nil
		waitIndexLock(s.repo)
		// In the run's recorded group, as its own abort: this recovery
		// killed, the next one waits for it.
		err = s.abortRebase(ctx, &m)
		m.release()
		if err != nil {
			return nil, err
		}
		if picking {
			if err := s.repo.With(gitext.Exec{Dir: s.repo.WorkTree}).CherryPickQuit(ctx); err != nil {
				return nil, err
			}
		}
	}
	head, err := s.checkRestored(ctx, m)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(m.Run); err != nil {
		return nil, err
	}
	removeMarker(s.repo)
	return &Interrupted{Head: head, Branch: m.Branch, Kept: kept,
		Options: Options{Base: m.Base, Gate: m.Gate, Spec: m.Spec, Mode: m.Mode, KeepGoing: m.KeepGoing}}, nil
}

// checkOurs makes sure the rebase under way is the killed run's, which
// started at m.Head on m.Branch, before aborting it: the abort moves HEAD
// and the branch back to where that rebase started.
func (s *Store) checkOurs(m marker) error {
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(s.repo.GitDir, "rebase-merge", name))
		return strings.TrimSpace(string(b))
	}
	branch := m.Branch
	if branch == "" {
		branch = "detached HEAD"
	}
	if read("orig-head") != m.Head || read("head-name") != branch {
		return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("the rebase under way is not the interrupted run's (of %s at %s)", branch, m.Head)},
			"see: git status; once it is finished or aborted: git crucible verify-commits --abort")
	}
	return nil
}

// checkRestored makes sure HEAD is back on the branch at the commit it
// was on, and returns it: the rebase moves the branch only when it
// finishes, so the abort restores it. A --fix run's rebase that finished
// before the kill (the branch's last move is its finish, from m.Head) has
// the commit fixed as the run would leave it: that stands. Anything else
// is said, not papered over.
func (s *Store) checkRestored(ctx context.Context, m marker) (string, error) {
	branch, err := s.repo.ReadSymref("HEAD")
	if err != nil {
		return "", err
	}
	head, err := s.repo.HeadCommit()
	if err != nil {
		return "", err
	}
	if branch == m.Branch && (head == m.Head || m.Fix && branch != "" && s.finishedFrom(ctx, branch, head, m.Head)) {
		return head, nil
	}
	where := m.Head
	if m.Branch != "" {
		where = m.Branch + " at " + m.Head
	}
	return "", outcome.WithHints(fmt.Errorf("HEAD is not back where the run found it (%s)", where),
		"see: git reflog")
}

// finishedFrom reports whether branch's last move, to head, was a rebase
// finishing that started at from.
func (s *Store) finishedFrom(ctx context.Context, branch, head, from string) bool {
	moves, err := s.repo.Reflog(ctx, branch, 2)
	return err == nil && len(moves) == 2 && moves[0].OID == head && strings.HasPrefix(moves[0].Subject, "rebase (finish): ") && moves[1].OID == from
}
