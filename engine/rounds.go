package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/rounds"
)

// judge is what gates and review loops share: package gate's Gate and Review.
type judge interface {
	Round(report.Findings) rounds.Decision
	Trajectory() []string
}

// rounds runs a gate or review loop: a fresh dispatch of its role each
// round, judged by package gate; on Continue the fixer, then the next
// round. Rounds already in the chain are adopted and judged again, so a
// resume goes on at the round it stopped in.
func (w *walker) rounds(ctx context.Context, p pipeline.Point, st *pipespec.Step, task *report.PlanTask) (stepEnd, error) {
	var j judge
	var g *rounds.Gate
	if st.Kind == pipespec.Gate {
		g = rounds.New(st.MaxRounds)
		j = g
	} else {
		j = rounds.NewReview(st.MaxRounds)
	}
	for round := 1; ; round++ {
		p.Round = round
		d, err := w.data(ctx, p, st, task)
		if err != nil {
			return stepEnd{}, err
		}
		d.MaxRounds = max(st.MaxRounds, 1)
		if d.Artifact, err = w.artifact(ctx, st, task); err != nil {
			return stepEnd{}, err
		}
		d.Report.Format = prompt.ReportFindings
		out, end, err := w.dispatch(ctx, p, st.Role, st.Template, d)
		if err != nil || end != nil {
			return deref(end), err
		}
		f, err := report.ParseFindings(out.Report)
		if out.Report == nil {
			err = errors.New("it wrote no report")
		}
		if err != nil {
			return stopped(p, pipeline.StepFailed, WalkFailed, fmt.Sprintf("dispatch %d (%s): no findings: %v", out.Seq, st.Role, err)), nil
		}
		dec := j.Round(f)
		if dec.Action != rounds.Continue {
			return w.conclude(ctx, p, st, g, dec, d.Artifact, out.Seq)
		}
		if err := w.journal(ctx, out.Seq, dec.Journal); err != nil {
			return stepEnd{}, err
		}
		fd := d
		fd.Findings, fd.Report.Format = &f, prompt.ReportTask
		if prod := w.sp.Producer(st.Artifact); prod != nil {
			fd.Exports = prod.Exports
		}
		fixed, end, err := w.dispatch(ctx, p, st.Fixer, st.FixTemplate, fd)
		if err != nil || end != nil {
			return deref(end), err
		}
		if task != nil {
			if err := w.commitFix(ctx, task, fixed.Seq, st.Fixer); err != nil {
				return stepEnd{}, err
			}
		}
		if _, end := w.parsedTask(p, fixed); end != nil {
			return *end, nil
		}
	}
}

// journal records a round's decisions once: not again when a resume
// judges a round whose decisions followed its dispatch already.
func (w *walker) journal(ctx context.Context, seq int, entries []rounds.JournalEntry) error {
	if len(entries) == 0 || w.view.decided(seq, entries[0]) {
		return nil
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, decisions(entries)...); err != nil {
		return err
	}
	return w.refresh(ctx)
}

// decisions are the chain's decision events of a round's journal entries.
func decisions(entries []rounds.JournalEntry) []pipeline.Draft {
	drafts := make([]pipeline.Draft, len(entries))
	for i, e := range entries {
		drafts[i] = pipeline.Draft{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{
			Type: e.Type, Choice: e.Choice, Reason: e.Reason, Alternatives: e.Alternatives, Suggestion: e.Suggestion}}
	}
	return drafts
}

// conclude ends a gate or loop that passed or escalated: its journal, a
// gate's verdict, and the ledger's PASS (a gate) or FAIL (an escalation),
// in one record, unless the ledger has it already.
func (w *walker) conclude(ctx context.Context, p pipeline.Point, st *pipespec.Step, g *rounds.Gate, dec rounds.Decision, art prompt.Artifact, seq int) (stepEnd, error) {
	end := done(dec.Verdict)
	if dec.Action == rounds.Escalate {
		end = stopped(p, pipeline.StepEscalated, WalkEscalated, fmt.Sprintf("%s escalated (%s): %s", st.ID, dec.Verdict, dec.Reason))
		end.result = dec.Verdict
		end.stop.Suggestion = dec.Suggestion
	}
	if w.state.Gates.Ledger.Entry(p.Phase).Status != ledger.InProgress ||
		g == nil && dec.Action == rounds.Pass && len(dec.Journal) > 0 && w.view.decided(seq, dec.Journal[0]) {
		return end, nil // concluded before a resume
	}
	drafts := decisions(dec.Journal)
	if g != nil {
		v, err := w.verdict(p, g, art, seq)
		if err != nil {
			return stepEnd{}, err
		}
		drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeVerdict, Data: v})
	}
	switch {
	case dec.Action == rounds.Escalate:
		drafts = append(drafts, pipeline.Draft{Type: pipeline.LedgerType(ledger.FailPhase),
			Data: pipeline.LedgerData{Phase: p.Phase, Reason: oneLine(dec.Reason)}})
	case g != nil:
		// The ledger names a file artifact by its work-tree path, the
		// diff by its name: its file is the engine's, not the user's.
		name := art.Path
		if art.Name == pipespec.Diff {
			name = pipespec.Diff
		}
		drafts = append(drafts, pipeline.Draft{Type: pipeline.LedgerType(ledger.PassGate),
			Data: pipeline.LedgerData{Phase: p.Phase, Artifact: name}})
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, drafts...); err != nil {
		return stepEnd{}, err
	}
	return end, w.refresh(ctx)
}

// escalate records an escalation that is not a gate's (a RED test that
// is GREEN, a task check still failing): the journal entry, which turns
// health RED, and the phase's FAIL while it is in progress (a phase whose
// gate passed stays PASS). Once: not again when a resume escalates at p
// again, nor when an engine was killed after recording it and before the
// step's end.
func (w *walker) escalate(ctx context.Context, p pipeline.Point, stop WalkResult) error {
	choice := p.Step + " escalated"
	if p.Task != "" {
		choice = fmt.Sprintf("%s of task %s escalated", p.Step, p.Task)
	}
	if w.escalated(p, choice) {
		return nil
	}
	drafts := []pipeline.Draft{{Type: pipeline.TypeDecision, Data: pipeline.DecisionData{Type: rounds.JournalEscalation,
		Choice: choice, Reason: stop.Reason, Suggestion: stop.Suggestion}}}
	if w.state.Gates.Ledger.Entry(p.Phase).Status == ledger.InProgress {
		drafts = append(drafts, pipeline.Draft{Type: pipeline.LedgerType(ledger.FailPhase),
			Data: pipeline.LedgerData{Phase: p.Phase, Reason: oneLine(stop.Reason)}})
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, drafts...); err != nil {
		return err
	}
	return w.refresh(ctx)
}

// budgetStop is the end of the step at p whose next dispatch the cost
// cap stopped: escalated, with its escalation recorded (health RED, the
// hint its action), but the phase left in progress: the step runs again
// when the walk goes on under a higher cap.
func (w *walker) budgetStop(ctx context.Context, p pipeline.Point, b *BudgetError) (stepEnd, error) {
	end := stopped(p, pipeline.StepEscalated, WalkEscalated, b.Error())
	end.stop.Suggestion = b.Suggestion()
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, pipeline.CostCapEscalation(budgetAt(p.Step, p.Task), b.Error(), b.Suggestion())); err != nil {
		return stepEnd{}, err
	}
	return end, w.refresh(ctx)
}

// escalated reports whether the escalation choice of the step at p is
// recorded: its step ended escalated, or the engine was killed after
// recording it, before the step's end.
func (w *walker) escalated(p pipeline.Point, choice string) bool {
	return w.stepStatus(p) == pipeline.StepEscalated || w.view.journalledSince(p, rounds.JournalEscalation, choice)
}

// verdict is the gate.verdict of a finished gate: its marker, completed
// with what the engine knows (phase, pipeline, artifact hash, time).
// Its run id names the last round's dispatch.
func (w *walker) verdict(p pipeline.Point, g *rounds.Gate, art prompt.Artifact, seq int) (pipeline.VerdictData, error) {
	m := interop.GateMarker(g)
	m.Phase, m.PipelineID, m.RunID = p.Phase, w.e.ID, fmt.Sprintf("%s-%d", w.e.ID, seq)
	now, err := pipeline.Now()
	if err != nil {
		return pipeline.VerdictData{}, err
	}
	m.Timestamp = now
	path := art.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(w.e.Workdir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return pipeline.VerdictData{}, fmt.Errorf("the gate's artifact: %w", err)
	}
	sum := sha256.Sum256(b)
	m.ArtifactHash = hex.EncodeToString(sum[:])
	parsed, err := interop.ParseMarker(interop.RenderMarker(m))
	if err != nil {
		return pipeline.VerdictData{}, fmt.Errorf("the gate's verdict marker: %w", err)
	}
	return parsed.VerdictData(w.e.ID, p.Phase)
}

// artifact is what a gate or loop examines: a file artifact's path, or
// the diff the engine writes.
func (w *walker) artifact(ctx context.Context, st *pipespec.Step, task *report.PlanTask) (prompt.Artifact, error) {
	if st.Artifact == pipespec.Diff {
		path, err := w.diff(ctx, st, task)
		return prompt.Artifact{Name: pipespec.Diff, Path: path}, err
	}
	return prompt.Artifact{Name: st.Artifact, Path: w.artifactPath(st.Artifact)}, nil
}
