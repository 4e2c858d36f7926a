package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/verifycommits"
)

// JournalVerifyCommits is the decision type of a verify-commits result
// the walk records: which commits the fast gate passed or failed at.
const JournalVerifyCommits = "verify-commits"

// checkTaskCommit runs the task's fast gate at the commit the task made
// (HEAD), through verify-commits' cache, where a tree tested before is not
// tested again, and records the result; its exit status and the gate's
// output, as runCommand returns them. A HEAD with no parent has no range
// to verify: the gate runs in the work tree.
func (w *walker) checkTaskCommit(ctx context.Context, st *pipespec.Step, task *report.PlanTask, command string) (int, string, error) {
	parent, err := w.e.Service.Repo.FirstParent(ctx, "HEAD")
	if err != nil {
		return w.runCommand(ctx, st, task, command)
	}
	rep, err := w.verifyCommits(ctx, parent, command, "task "+task.ID, "")
	if err != nil {
		return 0, "", err
	}
	for _, c := range rep.Commits {
		if c.Status == verifycommits.Fail {
			return c.Exit, c.Log, nil
		}
	}
	return 0, "", nil
}

// verifyPhase verifies every commit Phase 3 made, base..HEAD, with the
// plan's fast gate, and records the result: a commit that only builds
// because of a later one (a task's broken commit that its fix round
// repaired on top) is named, with what repairs it in place. The walk goes
// on: every task's own check passed at the phase's HEAD. No common fast
// gate, or no base, verifies nothing.
func (w *walker) verifyPhase(ctx context.Context, p pipeline.Point, tasks []report.PlanTask) error {
	if len(tasks) == 0 {
		return nil
	}
	command, base := tasks[0].FastGate, w.view.taskBase[tasks[0].ID]
	for _, t := range tasks {
		if t.FastGate != command {
			command = ""
		}
	}
	if command == "" || base == "" {
		return nil
	}
	// The plan's fast gate is an agent's: without consent its tasks' checks
	// did not run it, nor does this.
	if ok, err := w.mayRun(ctx, command); !ok || err != nil {
		return err
	}
	_, err := w.verifyCommits(ctx, base, command, fmt.Sprintf("Phase %d", p.Phase),
		"Repair the failing commits in place: git crucible verify-commits --fix "+base[:12]+"..HEAD")
	return err
}

// verifyCommits runs verify-commits' machinery over base..HEAD with the
// gate command and records the result as a decision of what (a task, the
// phase), with suggestion when a commit fails.
func (w *walker) verifyCommits(ctx context.Context, base, command, what, suggestion string) (*verifycommits.Report, error) {
	o := verifycommits.Options{Base: base, Gate: verifycommits.Gate{Name: "fast-gate", Command: command}, Spec: fastgate.Identity(command, "")}
	// Verify puts back a run an engine killed in its middle first.
	rep, err := verifycommits.Open(w.e.Service.Repo).Verify(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("verify-commits for %s: %w", what, err)
	}
	pass, fail := 0, []string{}
	for _, c := range rep.Commits {
		switch c.Status {
		case verifycommits.Pass, verifycommits.Skip:
			pass++
		case verifycommits.Fail:
			fail = append(fail, c.Commit[:12])
		}
	}
	d := pipeline.DecisionData{Type: JournalVerifyCommits,
		Choice: fmt.Sprintf("%s: %d of %d commits pass %s", what, pass, len(rep.Commits), command),
		Reason: fmt.Sprintf("%d gate runs, %d cached", rep.Ran, rep.Cached)}
	if len(fail) > 0 {
		d.Reason += "; failing: " + strings.Join(fail, ", ")
		d.Suggestion = suggestion
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, pipeline.Draft{Type: pipeline.TypeDecision, Data: d}); err != nil {
		return nil, err
	}
	return rep, w.refresh(ctx)
}

// SettleVerifyCommits puts back a verify-commits run that an engine killed
// in its middle left in repo's worktree — its rebase under way, HEAD
// detached on it, the rebase's own process group maybe still running —
// and reports whether there was one: the branch as it was, what it tested
// kept. Verify does so itself before it runs; a resume does it before
// anything, as the branch HEAD is on names the pipeline to go on with. A
// live run's lock makes it a refusal.
func SettleVerifyCommits(ctx context.Context, repo *gitext.Repo) (bool, error) {
	store := verifycommits.Open(repo)
	if killed, err := store.Interrupted(); err != nil || !killed {
		return false, err
	}
	_, err := store.Recover(ctx)
	return err == nil, err
}
