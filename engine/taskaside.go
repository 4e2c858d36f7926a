package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/taskdag"
)

// FailedRef is where a task that escalated keeps its failing work,
// its branch put back at the last passing commit: refs/crucible/failed/
// <pipeline>/<task>, then <task>.2, <task>.3, ... for the task's later
// escalations, each made only where none is (compare-and-swap from
// nothing), so that none is ever overwritten.
func FailedRef(pipeline, task string, n int) string {
	ref := "refs/crucible/failed/" + pipeline + "/" + task
	if n > 1 {
		ref += "." + strconv.Itoa(n)
	}
	return ref
}

// commitFix commits the change of a fix round of task: into the task's
// own commit when HEAD is it, one commit per task as the dispatch seed
// asks; else (the task committed nothing) as the task's commit.
func (w *walker) commitFix(ctx context.Context, task *report.PlanTask, seq int, role string) error {
	base, head, err := w.taskCommit(ctx, task)
	if err != nil {
		return err
	}
	if base == "" || head == base {
		return w.commitTask(ctx, task, seq, role)
	}
	return w.commitWork(ctx, fmt.Sprintf("%s\n\n%s dispatch %d of pipeline %s.", taskdag.CommitSubject(task.Title, task.ID), role, seq, w.e.ID),
		enforce.Agent{Task: w.taskNumbers[task.ID], Seq: seq, Role: role}, true)
}

// taskCommit is the task's base (HEAD when its checkpoint was taken) and
// HEAD when HEAD is the task's one commit on it, by its parent and its
// subject, or HEAD is the base (the task committed nothing); "" and ""
// otherwise: HEAD's history does not end with the task's commit (a task
// of a parallel level committed after it), and neither is to be touched.
func (w *walker) taskCommit(ctx context.Context, task *report.PlanTask) (base, head string, err error) {
	base = w.view.taskBase[task.ID]
	if base == "" {
		return "", "", nil
	}
	head, err = w.e.Service.Repo.HeadCommit()
	if err != nil || head == base {
		return base, head, err
	}
	out, err := w.e.Service.Repo.LogFormat(ctx, "%P%n%s", gitext.LogOptions{Max: 1}, head)
	if err != nil {
		return "", "", err
	}
	parents, subject, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\n")
	if parents == base && subject == taskdag.CommitSubject(task.Title, task.ID) {
		return base, head, nil
	}
	return "", "", nil
}

// setAside takes task's failing commit off the branch: in one ref
// transaction, the commit is kept at the task's next FailedRef and the
// branch goes back to the task's base (both compare-and-swap); then the
// index and work tree follow for the paths the commit changed, and only
// those. It returns the ref, "" when nothing was moved: the task made no
// commit of its own at HEAD, HEAD is detached, or the commit's paths were
// changed since in the index or work tree (a person's work, left alone).
func (w *walker) setAside(ctx context.Context, task *report.PlanTask) (string, error) {
	base, head, err := w.taskCommit(ctx, task)
	if err != nil || base == "" || head == base {
		return "", err
	}
	repo := w.e.Service.Repo
	branch, err := repo.HeadBranch()
	if err != nil || branch == "" {
		return "", err
	}
	paths, err := repo.ChangedPaths(ctx, base, head)
	if err != nil {
		return "", err
	}
	if clean, err := holds(ctx, repo, head, paths); err != nil || !clean {
		return "", err
	}
	ref := ""
	for n := 1; ref == ""; n++ {
		old, err := repo.ReadRef(FailedRef(w.e.ID, task.ID, n))
		if err != nil {
			return "", err
		}
		if old == "" {
			ref = FailedRef(w.e.ID, task.ID, n)
		}
	}
	if err := repo.UpdateRefs(ctx, fmt.Sprintf("git crucible build: task %s escalated", task.ID),
		gitext.RefUpdate{Name: ref, New: head}, gitext.RefUpdate{Name: "refs/heads/" + branch, Old: head, New: base}); err != nil {
		return "", err
	}
	return ref, restorePaths(ctx, repo, base, paths)
}

// keptAside is the FailedRef task's escalation left the branch back
// from, when HEAD is still there, at the task's base: the index and work
// tree's move a kill cut short is finished. "" when there is none.
func (w *walker) keptAside(ctx context.Context, task *report.PlanTask) (string, error) {
	base, head, err := w.taskCommit(ctx, task)
	if err != nil || base == "" || head != base {
		return "", err
	}
	repo := w.e.Service.Repo
	ref, kept := "", ""
	for n := 1; ; n++ {
		c, err := repo.ReadRef(FailedRef(w.e.ID, task.ID, n))
		if err != nil {
			return "", err
		}
		if c == "" {
			break
		}
		ref, kept = FailedRef(w.e.ID, task.ID, n), c
	}
	if kept == "" {
		return "", nil
	}
	if parent, err := repo.FirstParent(ctx, kept); err != nil || parent != base {
		return "", nil // set aside from elsewhere: the branch moved since
	}
	paths, err := repo.ChangedPaths(ctx, base, kept)
	if err != nil {
		return "", err
	}
	if clean, err := holds(ctx, repo, kept, paths); err != nil {
		return "", err
	} else if clean {
		if err := restorePaths(ctx, repo, base, paths); err != nil {
			return "", err
		}
	}
	return ref, nil
}

// holds reports whether the index and the work tree have paths as commit
// has them.
func holds(ctx context.Context, repo *gitext.Repo, commit string, paths []string) (bool, error) {
	if len(paths) == 0 {
		return true, nil
	}
	for _, cached := range []bool{true, false} {
		if differs, err := repo.DiffQuiet(ctx, commit, cached, paths...); err != nil || differs {
			return false, err
		}
	}
	return true, nil
}

// restorePaths puts paths in the index and work tree as commit has them
// (removed where it has none), and nothing else.
func restorePaths(ctx context.Context, repo *gitext.Repo, commit string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	return repo.With(gitext.Exec{Group: true}).Restore(ctx, commit, paths)
}
