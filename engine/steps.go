package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/checkpoint"
	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
)

// step runs the step st at p (task is the plan task inside a tasks step,
// nil elsewhere).
func (w *walker) step(ctx context.Context, p pipeline.Point, st *pipespec.Step, task *report.PlanTask) (stepEnd, error) {
	w.at = p
	switch st.Kind {
	case pipespec.Checkpoint:
		return w.checkpoint(ctx, st, task)
	case pipespec.Dispatch:
		return w.dispatchStep(ctx, p, st, task)
	case pipespec.Gate, pipespec.ReviewLoop:
		return w.rounds(ctx, p, st, task)
	case pipespec.Run:
		return w.run(ctx, p, st, task)
	case pipespec.Approve:
		return w.approve(ctx, p, st)
	}
	return stepEnd{}, fmt.Errorf("step %s: kind %q cannot run here", st.ID, st.Kind)
}

// checkpoint takes the step's working-tree checkpoint. Its result is the
// HEAD it was taken at: a task's diff starts there.
func (w *walker) checkpoint(ctx context.Context, st *pipespec.Step, task *report.PlanTask) (stepEnd, error) {
	id := ""
	if task != nil {
		id = task.ID
	}
	sh, err := checkpoint.Open(ctx, w.e.Service.Repo)
	if err != nil {
		return stepEnd{}, err
	}
	reason := st.CheckpointName(id)
	r, err := sh.Create(ctx, reason, "git crucible build", w.e.ID)
	if err != nil {
		return stepEnd{}, fmt.Errorf("checkpoint %s: %w", reason, err)
	}
	if !r.Unchanged {
		if _, _, err := w.e.Service.Record(ctx, w.e.ID, pipeline.Draft{Type: pipeline.TypeCheckpoint, Data: pipeline.CheckpointData{
			ID: r.ID, Reason: reason, Source: r.Source, Branch: r.Branch, Head: r.Head}}); err != nil {
			return stepEnd{}, err
		}
	}
	return done(headPrefix + r.Head), nil
}

// dispatchStep runs a dispatch step: skipped when its outputs existed
// before any dispatch of it (or --design supplies them), else its agent's
// report must say completed.
func (w *walker) dispatchStep(ctx context.Context, p pipeline.Point, st *pipespec.Step, task *report.PlanTask) (stepEnd, error) {
	if w.opts.Design != "" && w.sp.Producer("design") == st {
		return done(designGiven + w.opts.Design), nil
	}
	// Once the step dispatched, its outputs may be what a dispatch that
	// failed or was cut short left: that one runs again (or its finished
	// work is adopted), its files never taken for its output.
	if st.SkipIfExists && len(st.Outputs) > 0 && len(w.view.at(p)) == 0 && w.outputsExist(st) {
		return done("skipped: its outputs exist"), nil
	}
	d, err := w.data(ctx, p, st, task)
	if err != nil {
		return stepEnd{}, err
	}
	d.Outputs, d.Exports = st.Outputs, st.Exports
	d.Report.Format = prompt.ReportTask
	out, end, err := w.dispatch(ctx, p, st.Role, st.Template, d)
	if err != nil || end != nil {
		return deref(end), err
	}
	if task != nil {
		if err := w.commitTask(ctx, task, out.Seq, st.Role); err != nil {
			return stepEnd{}, err
		}
	}
	if _, end := w.parsedTask(p, out); end != nil {
		return *end, nil
	}
	return done(fmt.Sprintf("dispatch %d completed", out.Seq)), nil
}

func deref(e *stepEnd) stepEnd {
	if e == nil {
		return stepEnd{}
	}
	return *e
}

// outputsExist reports whether every output file of st is in the work tree.
func (w *walker) outputsExist(st *pipespec.Step) bool {
	for _, path := range st.Outputs {
		if _, err := os.Stat(filepath.Join(w.e.Workdir, path)); err != nil {
			return false
		}
	}
	return true
}

// parsedTask reads a task agent's report: one that is missing, does not
// parse or says failed fails the step.
func (w *walker) parsedTask(p pipeline.Point, out Outcome) (report.Task, *stepEnd) {
	t, err := report.ParseTask(out.Report)
	switch {
	case out.Report == nil:
		err = errors.New("it wrote no report")
	case err == nil && t.Status == report.Failed:
		err = fmt.Errorf("it reports failure: %s", t.Error)
	}
	if err != nil {
		end := stopped(p, pipeline.StepFailed, WalkFailed, fmt.Sprintf("dispatch %d (%s): %v", out.Seq, p.Step, err))
		return t, &end
	}
	return t, nil
}

// data is the prompt data every dispatch of st at p shares.
func (w *walker) data(ctx context.Context, p pipeline.Point, st *pipespec.Step, task *report.PlanTask) (prompt.Data, error) {
	in, err := w.inputs(ctx, st, task)
	if err != nil {
		return prompt.Data{}, err
	}
	ph := w.sp.Phase(p.Phase)
	return prompt.Data{Goal: w.state.Goal, Mode: w.state.Mode, Pipeline: w.e.ID, Phase: int(p.Phase), PhaseName: ph.Name,
		Step: st.ID, Round: p.Round, Inputs: in, Task: task, TestCommand: w.opts.Test}, nil
}

// dispatch runs role at p (its round set for gates and loops), or adopts
// what the chain has there already: a finished dispatch is never run
// again; an interrupted or cancelled one is run again as its retry. It
// returns the outcome of a completed dispatch, or how the step ends when
// the agent failed or waits.
func (w *walker) dispatch(ctx context.Context, p pipeline.Point, role, template string, d prompt.Data) (Outcome, *stepEnd, error) {
	var last *pipeline.Record
	for _, r := range w.view.at(p) {
		if r.Point.Round == p.Round && r.Role == role {
			last = &r
		}
	}
	var retry *int
	var out Outcome
	switch {
	case last != nil && !last.Finished():
		// Recover left it waiting: a manual agent not finished yet.
		end := stopped(p, pipeline.StepWaiting, WalkWaiting, fmt.Sprintf("dispatch %d (%s) waits for a person", last.Seq, role))
		o, ok := w.waiting[last.Seq]
		if !ok {
			o = Outcome{Seq: last.Seq, Status: StatusWaiting}
		}
		end.stop.Waiting = &o
		if w.stepStatus(p) == pipeline.StepWaiting {
			end.status = "" // recorded already: stop without recording it again
		}
		return out, &end, nil
	case last != nil && (last.Recovered == Interrupted || last.Failure == string(agent.Cancelled) || w.failedAt(p, *last)):
		retry = &last.Seq
	case last != nil:
		adopted, err := w.adopt(ctx, *last)
		if err != nil {
			return out, nil, err
		}
		out = adopted
	}
	if last == nil || retry != nil {
		if err := w.beforeDispatch(ctx); err != nil {
			return out, nil, err
		}
		ad, err := w.e.NewAgentDir("")
		if err != nil {
			return out, nil, err
		}
		d.Role, d.Report.Path = role, ad.Report()
		text, err := w.opts.Templates.Render(template, d)
		if err != nil {
			return out, nil, errors.Join(err, ad.Remove())
		}
		ds := DispatchSpec{Point: p, Role: role, Template: template, TemplateSHA256: w.opts.Templates.Digest(template),
			Prompt: []byte(text), RetryOf: retry, Report: d.Report.Format, AgentDir: ad, Commands: prompt.Commands(w.opts.Test, d.Task),
			ReplayOf: w.view.replayOf(p, role), ReplaySession: w.view.replay, Mutation: w.opts.Mutations[template]}
		if d.Task != nil {
			ds.Title = d.Task.Title
		}
		out, err = w.e.Dispatch(ctx, ds)
		if rerr := w.refresh(ctx); err == nil {
			err = rerr
		}
		if out.Status != StatusWaiting { // a person works on for one that waits
			err = errors.Join(err, w.settle(ctx))
		}
		var budget *BudgetError
		if errors.As(err, &budget) {
			end, err := w.budgetStop(ctx, p, budget)
			return out, &end, err
		}
		if err != nil {
			return out, nil, err
		}
	}
	if out.Status != StatusWaiting { // adopted, it ended while no engine ran
		if err := w.settle(ctx); err != nil {
			return out, nil, err
		}
	}
	switch out.Status {
	case "completed":
		return out, nil, nil
	case StatusWaiting:
		end := stopped(p, pipeline.StepWaiting, WalkWaiting, fmt.Sprintf("dispatch %d (%s) waits for a person", out.Seq, role))
		end.stop.Waiting = &out
		return out, &end, nil
	}
	end := stopped(p, pipeline.StepFailed, WalkFailed, fmt.Sprintf("dispatch %d (%s) %s: %s", out.Seq, role, out.Status, out.Summary))
	end.stop.Suggestion = agent.Hint(agent.FailureKind(out.Failure), out.Summary)
	return out, &end, nil
}

// failedAt reports whether r is the dispatch the failed step at p stopped
// at (its agent failed, or its report did not do): a resume runs it again,
// for adopting it would fail the step again.
func (w *walker) failedAt(p pipeline.Point, r pipeline.Record) bool {
	if w.stepStatus(p) != pipeline.StepFailed {
		return false
	}
	recs := w.view.at(p)
	return recs[len(recs)-1].Seq == r.Seq
}

// adopt is the outcome of a finished dispatch, its output read from the chain.
func (w *walker) adopt(ctx context.Context, r pipeline.Record) (Outcome, error) {
	out := Outcome{Seq: r.Seq, Status: r.Status, Summary: r.Summary, Failure: r.Failure, Recovered: r.Recovered}
	if r.Output == "" {
		return out, nil
	}
	b, err := w.e.Service.ReadKept(ctx, w.e.ID, r.Output)
	if err != nil {
		return out, err
	}
	out.Output = b
	if wroteReport(r) {
		out.Report = b
	}
	return out, nil
}

// run runs a run step's command with sh -c in the work tree. Its output
// is kept in the pipeline's run directory (runs/<id>/run/<step>.log). A run
// step is code: the command slice runs only a built-in or trusted spec.
// A task's failing fast gate goes back to its implementer (taskCheck).
func (w *walker) run(ctx context.Context, p pipeline.Point, st *pipespec.Step, task *report.PlanTask) (stepEnd, error) {
	command := st.Command
	switch command {
	case pipespec.CommandTest:
		command = w.opts.Test
	case pipespec.CommandAcceptance:
		command = w.opts.Test
		if v, ok := w.exports[pipespec.AcceptanceCommand].(string); ok && strings.TrimSpace(v) != "" {
			command = v
		}
	case pipespec.CommandFastGate:
		command = ""
		if task != nil {
			command = task.FastGate
		}
		if command == "" {
			return done("skipped: no fast gate"), nil
		}
	}
	if strings.TrimSpace(command) == "" {
		return stopped(p, pipeline.StepFailed, WalkFailed,
			fmt.Sprintf("%s: no test command: set [project] test beside the agents, or git config crucible.test", st.ID)), nil
	}
	// The acceptance command and a fast gate are agents' (a spec's own
	// command is the trusted spec's).
	if st.Command == pipespec.CommandAcceptance || st.Command == pipespec.CommandFastGate {
		if end, err := w.consent(ctx, p, st, command); end != nil || err != nil {
			return deref(end), err
		}
	}
	if st.Command == pipespec.CommandFastGate && st.Expect == pipespec.ExpectPass {
		return w.taskCheck(ctx, p, st, task, command)
	}
	code, log, err := w.runCommand(ctx, st, task, command)
	if err != nil {
		return stepEnd{}, err
	}
	result := fmt.Sprintf("exit %d: %s", code, command)
	known := w.view.baseline
	if st.Command != pipespec.CommandTest && st.Command != pipespec.CommandAcceptance {
		known = nil // only the test steps compare with the baseline
	}
	redOnlyKnown := false
	if known != nil && st.Expect == pipespec.ExpectFail && code != 0 {
		failing, err := readFailures(log)
		if err != nil {
			return stepEnd{}, err
		}
		redOnlyKnown = len(failing) > 0 && len(notIn(failing, known.Failing)) == 0
	}
	switch want := st.Expect; {
	case want == pipespec.ExpectFail && (code == 0 || redOnlyKnown):
		why := "passes"
		if redOnlyKnown {
			why = "fails only as at the known-failing baseline"
		}
		end := stopped(p, pipeline.StepEscalated, WalkEscalated, fmt.Sprintf("%s: %s %s; it must fail before the change (RED)", st.ID, command, why))
		end.stop.Suggestion = "Make the acceptance tests test the goal, so that they fail before it is built."
		return end, w.escalate(ctx, p, end.stop)
	case want == pipespec.ExpectFail, code == 0:
		return done(result), nil
	case known != nil:
		return w.againstBaseline(p, st, command, code, log, known)
	}
	return stopped(p, pipeline.StepFailed, WalkFailed, ranFailed(st, command, code, log)), nil
}

// againstBaseline is how a test step whose command failed (exit code,
// its output in log) ends when the build began on a known-failing
// baseline: done when every failure it names failed at the baseline;
// failed, naming them, when some did not; failed when it names none, for
// then nothing can be compared.
func (w *walker) againstBaseline(p pipeline.Point, st *pipespec.Step, command string, code int, log string, known *pipeline.BaselineData) (stepEnd, error) {
	failing, err := readFailures(log)
	if err != nil {
		return stepEnd{}, err
	}
	if len(failing) == 0 {
		return stopped(p, pipeline.StepFailed, WalkFailed, fmt.Sprintf(
			"%s: %s failed (exit %d) naming no failure to compare with the known-failing baseline (no %s line); its output is in %s",
			st.ID, command, code, FailureLines, log)), nil
	}
	if fresh := notIn(failing, known.Failing); len(fresh) > 0 {
		return stopped(p, pipeline.StepFailed, WalkFailed, fmt.Sprintf(
			"%s: %s failed (exit %d), and not only as at the known-failing baseline: %s not failing before the build: %s; its output is in %s",
			st.ID, command, code, pipeline.Failing(len(fresh)), NameFailures(fresh, maxNamed), log)), nil
	}
	end := done(fmt.Sprintf("exit %d: %s; fails as at the baseline (%s)", code, command, pipeline.Failing(len(failing))))
	end.baseline = true
	w.wt.warnings = append(w.wt.warnings, fmt.Sprintf("Phase %d, step %s passed against the known-failing baseline: %s fails only as before the build (%s: %s)",
		p.Phase, st.ID, command, pipeline.Failing(len(failing)), NameFailures(failing, maxNamed)))
	return end, nil
}

// maxNamed is how many failures a message names.
const maxNamed = 5

// FailureLines are the lines Failures recognises, for messages.
const FailureLines = "'--- FAIL:', 'FAIL', 'FAILED', '✕' or 'not ok'"

// NameFailures is failures as one line, the first n of them named.
func NameFailures(failures []string, n int) string {
	if len(failures) <= n {
		return strings.Join(failures, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(failures[:n], "; "), len(failures)-n)
}

// readFailures are the failures named in the output kept at log.
func readFailures(log string) ([]string, error) {
	out, err := os.ReadFile(log)
	if err != nil {
		return nil, err
	}
	return Failures(out), nil
}

// notIn are the failures that are not in known.
func notIn(failures, known []string) []string {
	set := make(map[string]bool, len(known))
	for _, k := range known {
		set[k] = true
	}
	var out []string
	for _, f := range failures {
		if !set[f] {
			out = append(out, f)
		}
	}
	return out
}

func ranFailed(st *pipespec.Step, command string, code int, log string) string {
	return fmt.Sprintf("%s: %s failed (exit %d); its output is in %s", st.ID, command, code, log)
}

// runCommand runs command for st (in task) with sh -c in the work tree
// and keeps its output in the pipeline's run directory: its exit code and
// the log's path.
func (w *walker) runCommand(ctx context.Context, st *pipespec.Step, task *report.PlanTask, command string) (int, string, error) {
	code, out, err := runShell(ctx, w.e.Workdir, command)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", st.ID, err)
	}
	if ctx.Err() != nil {
		return 0, "", ctx.Err()
	}
	name := st.ID
	if task != nil {
		name += "-" + task.ID
	}
	log := filepath.Join(w.e.runs(), "run", name+".log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return 0, "", err
	}
	if err := os.WriteFile(log, out, 0o644); err != nil {
		return 0, "", err
	}
	return code, log, nil
}

// runShell runs command with sh in dir as every engine runs a gate
// (fastgate.Run: its own process group, no variable pinning git to
// another repository): its exit status and its output, stdout and stderr
// as they came; an error when it could not run, or ctx ended.
func runShell(ctx context.Context, dir, command string) (int, []byte, error) {
	return fastgate.Run(ctx, dir, command)
}

// approve records the approval with Yes, and the consent to the commands
// agents wrote so far; without it the walk waits, listing them.
func (w *walker) approve(ctx context.Context, p pipeline.Point, st *pipespec.Step) (stepEnd, error) {
	commands := w.agentCommands(ctx)
	if !w.opts.Yes {
		end := stopped(p, pipeline.StepWaiting, WalkWaiting, "waiting for approval")
		end.stop.Message, end.stop.Commands = st.Message, commands
		if w.stepStatus(p) == pipeline.StepWaiting {
			end.status = "" // recorded already: stop without recording it again
		}
		return end, nil
	}
	// One append: the approval and the exact commands it approves.
	var drafts []pipeline.Draft
	d := pipeline.DecisionData{Type: "approval", Choice: fmt.Sprintf("Phase %d approved: %s", p.Phase, st.ID), Reason: "build --yes"}
	if !w.view.journalledSince(p, d.Type, d.Choice) { // else approved before the engine was killed
		drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeDecision, Data: d})
	}
	var exact []string
	for _, c := range commands {
		exact = append(exact, c.Command)
	}
	if err := w.decide(ctx, append(drafts, w.commandDrafts("approved at "+st.ID, exact)...)); err != nil {
		return stepEnd{}, err
	}
	return done("approved"), nil
}
