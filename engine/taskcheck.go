package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/rounds"
)

// TaskCheckFixes is how many times a task whose fast gate fails goes back
// to its implementer, the failure and the gate's output in its prompt,
// before the task escalates: crucible's one retry.
const TaskCheckFixes = 1

// taskCheck runs task's fast gate; while it fails and fixes are left, the
// task's implementer (the fixer template, the failure as a fatal finding)
// fixes it at round n of the step, its change amended into the task's
// commit, and the gate runs again. A fix already in the chain is adopted,
// so a resume neither runs one twice nor grants more. Still failing, the
// task escalates, its commit taken off the branch and kept at a
// FailedRef the error names (setAside); a resume that finds the branch
// still where that left it escalates again.
func (w *walker) taskCheck(ctx context.Context, p pipeline.Point, st *pipespec.Step, task *report.PlanTask, command string) (stepEnd, error) {
	last := p // the round that escalates
	last.Round = TaskCheckFixes
	escalated := func(reason, ref string) (stepEnd, error) {
		suggestion := fmt.Sprintf("Fix task %s by hand until %s passes, or revise the plan, then go on with git crucible build --resume.", task.ID, command)
		if ref != "" {
			suggestion = fmt.Sprintf("Fix task %s by hand until %s passes (its work: git cherry-pick %s), or revise the plan, then go on with git crucible build --resume.", task.ID, command, ref)
		}
		end := stopped(last, pipeline.StepEscalated, WalkEscalated, reason)
		end.stop.Suggestion = suggestion
		return end, w.escalate(ctx, last, end.stop)
	}
	if ref, err := w.keptAside(ctx, task); err != nil || ref != "" {
		if err != nil {
			return stepEnd{}, err
		}
		return escalated(fmt.Sprintf("%s: task %s's work still fails %s: it is kept at %s, the branch at its last passing commit", st.ID, task.ID, command, ref), ref)
	}
	for round := 0; ; round++ {
		code, log, err := w.checkTaskCommit(ctx, st, task, command)
		if err != nil {
			return stepEnd{}, err
		}
		if code == 0 {
			result := fmt.Sprintf("exit 0: %s", command)
			if round > 0 {
				result += fmt.Sprintf(" (after %d fix)", round)
			}
			return done(result), w.reopen(ctx, p, fmt.Sprintf("task %s passes %s now", task.ID, command))
		}
		if round == TaskCheckFixes {
			reason := fmt.Sprintf("%s: %s still fails (exit %d) after %d fix by the task's implementer; its output is in %s",
				st.ID, command, code, round, log)
			ref, err := w.setAside(ctx, task)
			if err != nil {
				return stepEnd{}, err
			}
			if ref != "" {
				reason += fmt.Sprintf("; its work is kept at %s, the branch back at its last passing commit", ref)
			}
			return escalated(reason, ref)
		}
		role := w.implementer(p)
		if role == "" {
			return stopped(p, pipeline.StepFailed, WalkFailed, ranFailed(st, command, code, log)), nil
		}
		q := p
		q.Round = round + 1
		d, err := w.data(ctx, q, st, task)
		if err != nil {
			return stepEnd{}, err
		}
		if d.Artifact.Path, err = w.diff(ctx, st, task); err != nil {
			return stepEnd{}, err
		}
		d.Artifact.Name, d.MaxRounds = pipespec.Diff, TaskCheckFixes
		d.Findings = GateFailure("the task's fast gate", command, code, log)
		d.Report.Format = prompt.ReportTask
		fixed, end, err := w.dispatch(ctx, q, role, "fixer", d)
		if err != nil || end != nil {
			return deref(end), err
		}
		if err := w.commitFix(ctx, task, fixed.Seq, role); err != nil {
			return stepEnd{}, err
		}
		if _, end := w.parsedTask(q, fixed); end != nil {
			return *end, nil
		}
	}
}

// reopen begins p's phase again when an escalation of it recorded FAIL
// and what escalated has since been put right (why): the ledger would
// stop the walk at the phase's end otherwise.
func (w *walker) reopen(ctx context.Context, p pipeline.Point, why string) error {
	if w.state.Gates.Ledger.Entry(p.Phase).Status != ledger.Fail {
		return nil
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID,
		pipeline.Draft{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{Type: rounds.JournalEscalation,
			Choice: fmt.Sprintf("Phase %d goes on", p.Phase), Reason: why + ": what escalated was put right"}},
		pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: p.Phase}}); err != nil {
		return err
	}
	return w.refresh(ctx)
}

// GateFailure is a fast gate that fails, as the fatal finding a fixer
// answers: what failed, its exit status and the end of its output (the
// file log).
func GateFailure(what, command string, code int, log string) *report.Findings {
	return &report.Findings{Fatal: []report.Finding{{Title: fmt.Sprintf("%s fails: %s (exit %d)", what, command, code),
		Detail: "its output ends:\n" + logTail(log)}}}
}

// implementer is the role that implements the tasks of p's tasks step:
// its first dispatch step's.
func (w *walker) implementer(p pipeline.Point) string {
	l, ok := w.sp.Find(p.Step)
	if !ok || l.Parent == nil {
		return ""
	}
	for _, s := range l.Parent.Steps {
		if s.Kind == pipespec.Dispatch {
			return s.Role
		}
	}
	return ""
}

// logTail is the last lines of a run's log, as a prompt quotes them.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
