package verifycommits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/notes"
)

// FixRounds is how many times a commit that fails the gate goes to the
// fixer before the fix escalates: the dispatch seed's Phase 5 notifies at
// its third round and asks the user from the fourth, which a command run
// without a user to ask turns into an escalation.
const FixRounds = 3

// Broken is a commit the gate fails, the rebase stopped at it: the work
// tree holds it, for the fixer to edit there.
type Broken struct {
	Commit  Commit
	Round   int // the fix round at this commit, 1-based
	Rounds  int // how many it gets
	Command string
	Exit    int
	Log     string // the gate's output
	// Start starts a process of the fixer's as the rebase's are: in a
	// process group the run records, which a recovery after a kill ends.
	Start func(*exec.Cmd) error
}

// Fixer edits the work tree at a broken commit. An error stops the fix
// and puts the branch back; a fixer that could not fix returns nil and
// the gate says so.
type Fixer func(context.Context, Broken) error

// Fixed is a commit the fix amended.
type Fixed struct {
	Old, New string // the commit failing, and the one that replaced it
	Subject  string
	Rounds   int
}

// FixReport is how a fix went: the verification of the fixed stack, or
// the commit that still failed, the branch back where it was.
type FixReport struct {
	Report     *Report
	Backup     string // the backup branch, refs/heads/...
	BackupKept bool   // it existed already: kept, not recreated
	Fixed      []Fixed
	Escalated  *Broken
	Recovered  *Interrupted // the killed run the fix put back before it began
}

// BackupBranch is the branch that keeps a stack as it was before its
// fixes: the dispatch seed's backup-<branch>-pre-dispatch.
func BackupBranch(branch string) string {
	return "refs/heads/backup-" + strings.TrimPrefix(branch, "refs/heads/") + "-pre-dispatch"
}

// Fix verifies Base..HEAD and repairs its failing commits in place, the
// earliest first: a git rebase -i stops at edit on it, fix runs there,
// its change is amended into the commit, the gate runs again, and the
// rebase goes on; up to FixRounds rounds a commit, then the fix escalates
// and the branch is put back where it was. The stack is kept first on the
// backup branch, which is never recreated: one that exists (a fix run
// again) is kept. Provenance notes and trailers follow the amended
// commits. A range that holds a merge is refused before anything runs.
func (s *Store) Fix(ctx context.Context, o Options, fix Fixer) (*FixReport, error) {
	unlock, in, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	branch, err := s.repo.ReadSymref("HEAD")
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(branch, "refs/heads/") {
		return nil, outcome.WithHints(&outcome.Refused{Err: errors.New("HEAD is detached: --fix rewrites a branch")},
			"check out the branch to fix first")
	}
	start, err := s.repo.HeadCommit()
	if err != nil {
		return nil, err
	}
	if err := s.checkClean(ctx); err != nil {
		return nil, err
	}
	commits, err := s.commits(ctx, o.Base, start)
	if err != nil {
		return nil, err
	}
	if err := fixable(commits); err != nil {
		return nil, err
	}
	fr := &FixReport{Backup: BackupBranch(branch), Recovered: in}
	o.KeepGoing, o.DryRun = false, false
	for last := -1; ; {
		rep, err := s.verify(ctx, o)
		if err != nil {
			return fr, err
		}
		fr.Report = rep
		i := firstFailure(rep.Commits)
		if i < 0 {
			return fr, nil
		}
		if i <= last {
			return fr, fmt.Errorf("commit %s fails again after its fix", rep.Commits[i].Commit)
		}
		last = i
		if len(fr.Fixed) == 0 && !fr.BackupKept {
			if fr.BackupKept, err = s.backup(ctx, fr.Backup, start); err != nil {
				return fr, err
			}
		}
		fixed, broken, err := s.fixAt(ctx, o, rep, i, fix)
		if err == nil && broken != nil {
			fr.Escalated = broken
			err = s.restore(ctx, branch, start)
		}
		if err != nil || broken != nil {
			return fr, err
		}
		fr.Fixed = append(fr.Fixed, fixed)
		o.Mode = UseCache // what this run tested stands
	}
}

// fixable refuses a range that holds a merge: the fix's rebase replays
// the range as a line of picks, which would flatten it.
func fixable(commits []Commit) error {
	for _, c := range slices.Backward(commits) {
		if len(c.Parents) > 1 {
			return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("--fix rewrites a line of commits, and the range holds merge %s (%s)", c.Commit[:12], c.Subject)},
				"fix the commits after it: git crucible verify-commits --fix "+c.Commit+"..HEAD",
				"or fix each topic branch before it is merged; without --fix, verify-commits verifies the whole range")
		}
	}
	return nil
}

// firstFailure is the index of the first failing commit, -1 when none.
func firstFailure(commits []Commit) int {
	for i, c := range commits {
		if c.Status == Fail {
			return i
		}
	}
	return -1
}

// backup creates the backup branch at head unless it exists: it then
// holds the stack as it was before an earlier fix, which a new one at
// head would lose. It reports whether it was kept.
func (s *Store) backup(ctx context.Context, ref, head string) (bool, error) {
	if _, err := s.repo.Resolve(ctx, ref); err == nil {
		return true, nil
	}
	err := s.repo.UpdateRefs(ctx, "git crucible verify-commits --fix: backup", gitext.RefUpdate{Name: ref, New: head})
	if errors.Is(err, gitext.ErrRefChanged) {
		return true, nil // made meanwhile: as old as ours, or older
	}
	return false, err
}

// fixAt fixes rep's commit i: a rebase stops at edit on it, then rounds
// of fix, amend and gate until it passes and the rebase goes on, or the
// rounds run out (the commit still failing, the rebase aborted).
func (s *Store) fixAt(ctx context.Context, o Options, rep *Report, i int, fix Fixer) (Fixed, *Broken, error) {
	bad := rep.Commits[i]
	if err := os.MkdirAll(filepath.Join(s.dir, "runs"), 0o755); err != nil {
		return Fixed{}, nil, err
	}
	run, err := os.MkdirTemp(filepath.Join(s.dir, "runs"), "fix-")
	if err != nil {
		return Fixed{}, nil, err
	}
	defer s.cleanUp(run)
	var todo strings.Builder
	for j, c := range rep.Commits {
		verb := "pick"
		if j == i {
			verb = "edit"
		}
		fmt.Fprintf(&todo, "%s %s\n", verb, c.Commit)
	}
	todoFile := filepath.Join(run, "todo")
	if err := os.WriteFile(todoFile, []byte(todo.String()), 0o644); err != nil {
		return Fixed{}, nil, err
	}
	branch, err := s.repo.ReadSymref("HEAD")
	if err != nil {
		return Fixed{}, nil, err
	}
	// Killed from here on, verify-commits --abort puts the branch back
	// where this rebase found it (the backup branch has the stack as it
	// was before the first fix).
	m := marker{Run: run, Head: rep.Head, Branch: branch, Base: o.Base, Gate: o.Gate, Spec: o.Spec, Mode: o.Mode, Fix: true}
	if err := m.write(s.repo); err != nil {
		return Fixed{}, nil, err
	}
	defer m.release()
	if err := s.rebaseTodo(ctx, &m, finishGroup, todoFile, notes.RewriteArgs...); err != nil {
		return Fixed{}, nil, s.abort(ctx, &m, fmt.Errorf("git rebase: %w", err))
	}
	broken := Broken{Commit: bad, Rounds: FixRounds, Command: o.Gate.Command, Exit: bad.Exit, Log: bad.Log,
		Start: func(cmd *exec.Cmd) error { return s.startGroup(&m, cmd, stopGroup) }}
	for broken.Round = 1; broken.Round <= FixRounds; broken.Round++ {
		before, err := s.repo.Dirty(ctx, s.repo.WorkTree)
		if err != nil {
			return Fixed{}, nil, s.abort(ctx, &m, err)
		}
		if err := fix(ctx, broken); err != nil {
			return Fixed{}, nil, s.abort(ctx, &m, err)
		}
		tree, err := s.amend(ctx, &m, before)
		if err != nil {
			return Fixed{}, nil, s.abort(ctx, &m, err)
		}
		// In the work tree, as the rebase's gate: a recovery ends it.
		inGroup := func(cmd *exec.Cmd) error { return s.runGroup(&m, cmd, stopGroup) }
		if err := s.testWith(ctx, inGroup, s.repo.WorkTree, o.Gate.Command, o.Spec, tree, UseCache); err != nil {
			return Fixed{}, nil, s.abort(ctx, &m, err)
		}
		r, _, err := s.Lookup(tree, o.Spec)
		if err != nil {
			return Fixed{}, nil, s.abort(ctx, &m, err)
		}
		if r.Status != Fail {
			head, err := s.repo.HeadCommit()
			if err != nil {
				return Fixed{}, nil, s.abort(ctx, &m, err)
			}
			rewriting := s.gitGroup(&m, finishGroup, []string{"GIT_EDITOR=true"}, append(append([]string{}, pinned...), notes.RewriteArgs...)...)
			if err := rewriting.RebaseContinue(ctx); err != nil {
				return Fixed{}, nil, s.abort(ctx, &m, fmt.Errorf("the commits after the fixed %s do not apply on it: %w", head[:12], err))
			}
			return Fixed{Old: bad.Commit, New: head, Subject: bad.Subject, Rounds: broken.Round}, nil, nil
		}
		broken.Exit, broken.Log = r.Exit, s.LogPath(tree, o.Spec)
	}
	broken.Round = FixRounds
	return Fixed{}, &broken, s.abort(ctx, &m, nil)
}

// amend commits what the fixer changed into the commit the rebase stopped
// at, its message (and so its trailers) kept, and returns its tree. What
// it changed are the paths dirty now that were not before it ran (the
// work tree as git status showed it then): a file that was there
// untracked is the user's, never staged, whatever the fixer did to it.
func (s *Store) amend(ctx context.Context, m *marker, before map[string]string) (string, error) {
	now, err := s.repo.Dirty(ctx, s.repo.WorkTree)
	if err != nil {
		return "", err
	}
	var paths []string
	for p := range now {
		if _, users := before[p]; !users {
			paths = append(paths, p)
		}
	}
	// Git that writes runs in the run's recorded group: a recovery waits
	// for it, or stops it with its locks removed.
	if paths != nil {
		if err := s.gitGroup(m, finishGroup, nil).AddPaths(ctx, paths); err != nil {
			return "", err
		}
	}
	staged, err := s.repo.With(gitext.Exec{Dir: s.repo.WorkTree}).DiffIndexQuiet(ctx, "HEAD", true)
	if err != nil {
		return "", err
	}
	if staged {
		amending := s.gitGroup(m, finishGroup, nil, append(append([]string{}, pinned...), notes.RewriteArgs...)...)
		if err := amending.Commit(ctx, gitext.CommitOptions{Amend: true}); err != nil {
			return "", err
		}
	}
	return s.repo.ResolveTree(ctx, "HEAD")
}

// abort ends the fix's rebase (run m), which puts the branch back where it
// found it, and returns err.
func (s *Store) abort(ctx context.Context, m *marker, err error) error {
	if aerr := s.abortRebase(ctx, m); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}

// restore puts branch back at start after an escalation, when fixes of
// earlier commits moved it: a compare-and-swap of the ref, and the work
// tree and index moved with it as git checkout would.
func (s *Store) restore(ctx context.Context, branch, start string) error {
	now, err := s.repo.HeadCommit()
	if err != nil || now == start {
		return err
	}
	if err := s.repo.UpdateRefs(ctx, "git crucible verify-commits --fix: escalated, put back",
		gitext.RefUpdate{Name: branch, Old: now, New: start}); err != nil {
		return err
	}
	return s.repo.With(gitext.Exec{Dir: s.repo.WorkTree}).ReadTreeMerge(ctx, now, start)
}
