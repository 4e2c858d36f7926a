package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/pipeline"
)

// DispatchSpec is one agent call of the walk.
type DispatchSpec struct {
	Point    pipeline.Point // where in the spec: phase, step, task, round
	Role     string
	Template string
	// TemplateSHA256 is the digest of the template's text (prompt.Set.Digest).
	TemplateSHA256 string
	Prompt         []byte // rendered
	RetryOf        *int   // the dispatch of this point it runs again, one Recover found interrupted
	RetryReason    string // why RetryOf's work was not taken, when it finished
	Title          string // the plan's title of its task
	// Report is the report the agent must write (prompt.ReportTask or
	// ReportFindings): one missing, bad or saying failed fails the
	// dispatch. "" requires none.
	Report string
	// ReplayOf is the dispatch a replay replaced that this one runs again,
	// ReplaySession the replay's session: crucible's replay_of and
	// replay_session.
	ReplayOf      *int
	ReplaySession string
	Mutation      string // "orig.md -> repl.md" when the template was swapped
	// Workdir is the work tree the agent edits; "" is the engine's. A
	// task of the parallel DAG runs in its own worktree.
	Workdir string
	// AgentDir is where the agent reads its prompt and writes its report,
	// the one the prompt names (NewAgentDir); Dispatch makes one in
	// Workdir when it is not set.
	AgentDir AgentDir
	// Commands are what the agent may run: the project's test command and
	// the task's fast gate (agent.Request.Commands).
	Commands []string
}

// Dispatch statuses an Outcome has besides pipeline.DispatchStatuses: a
// manual dispatch stays in flight until a person finishes it.
const StatusWaiting = "waiting"

// Outcome is how a dispatch ended, as its finish records it.
type Outcome struct {
	Seq       int
	Status    string // completed | failed | error | waiting
	Summary   string
	Report    []byte         // what the agent wrote at CRUCIBLE_OUTPUT; nil when nothing
	Output    []byte         // what the chain keeps: the report, else the agent's stdout
	Failure   string         // agent.FailureKind of a failed (or cancelled) agent
	Waiting   *agent.Waiting // a manual dispatch: what the person is to do
	Recovered string         // how Recover settled it: waited, adopted, interrupted; "" when it ran here
	// What the agent's client said, kept with the finish: see exitRecord.
	ExitCode *int
	Stderr   string
	Denials  []string
	Usage    *pipeline.Usage
}

// How Recover settles a dispatch.
const (
	Waited      = "waited"      // its agent outlived the engine; the successor waited for it
	Adopted     = "adopted"     // its agent had ended: its report or exit record was taken
	Interrupted = "interrupted" // nothing was left to take: the walk dispatches it again
)

// Dispatch records dispatch.start (write-ahead, the prompt kept), runs
// the role's agent with its run directory, and records dispatch.finish.
// An agent that fails is an Outcome (failed, with its failure kind), not
// an error; errors are the engine's own: a start not recorded (nothing
// ran), or a finish not recorded (Recover settles it on resume). When ctx
// ends, the agent's group is killed and the finish recorded as an error,
// failure "cancelled", for the walk to dispatch it again. Once the
// pipeline's recorded cost has reached e.Budget's cap, nothing is
// started or recorded: the error is a *BudgetError.
func (e *Engine) Dispatch(ctx context.Context, d DispatchSpec) (Outcome, error) {
	if d.Point.Step == "" {
		return Outcome{}, errors.New("a dispatch of the engine needs the step it runs: Recover settles only those")
	}
	a, err := e.Agents.Resolve(d.Role)
	if err != nil {
		if d.AgentDir.Dir != "" {
			err = errors.Join(err, d.AgentDir.Remove())
		}
		return Outcome{}, err
	}
	req := pipeline.DispatchRequest{Role: d.Role, Phase: d.Point.Phase, Template: d.Template, TemplateSHA256: d.TemplateSHA256, Prompt: d.Prompt,
		Step: d.Point.Step, TaskID: d.Point.Task, TaskTitle: d.Title, Round: d.Point.Round, RetryOf: d.RetryOf, RetryReason: d.RetryReason,
		ReplayOf: d.ReplayOf, ReplaySession: d.ReplaySession, Mutation: d.Mutation}
	if n, err := strconv.Atoi(d.Point.Task); err == nil && n >= 0 {
		req.Task = &n // crucible's manifest numbers its tasks
	}
	e.chain.Lock()
	var seq int
	b, err := e.overBudget(ctx)
	if b != nil {
		err = b
	} else if err == nil {
		seq, err = e.Service.StartDispatch(ctx, e.ID, req)
	}
	e.chain.Unlock()
	if err != nil {
		if d.AgentDir.Dir != "" {
			err = errors.Join(err, d.AgentDir.Remove())
		}
		return Outcome{}, err
	}
	out := e.run(ctx, seq, a, d)
	if out.Status == StatusWaiting {
		return out, nil
	}
	return out, e.finish(context.WithoutCancel(ctx), out)
}

// run runs dispatch seq's agent and leaves its exit record (or, for a
// manual agent, the waiting mark) in its run directory.
func (e *Engine) run(ctx context.Context, seq int, a agent.Agent, d DispatchSpec) Outcome {
	dir := e.RunDir(seq)
	out := Outcome{Seq: seq}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return engineError(out, err)
	}
	if err := writeFormat(dir, d.Report); err != nil {
		return engineError(out, err)
	}
	if d.AgentDir.Dir == "" {
		ad, err := e.NewAgentDir(d.Workdir)
		if err != nil {
			return engineError(out, err)
		}
		d.AgentDir = ad
	}
	if err := writeJSON(filepath.Join(dir, agentDirFile), d.AgentDir); err != nil {
		return engineError(out, err)
	}
	runner := e.Runner
	runner.Started = func(pid int) {
		o := newOwner(pid)
		o.Deadline = time.Now().Add(agentTimeout(a) + runner.GracePeriod())
		o.Kind = a.Kind
		// Not written, it leaves a successor the agent's environment to find it by.
		writeJSON(filepath.Join(dir, ownerFile), o)
	}
	req, err := e.request(seq)
	if err != nil {
		return engineError(out, err)
	}
	req.Prompt, req.Role, req.Template, req.Commands = d.Prompt, d.Role, d.Template, d.Commands
	req.Phase, req.Task, req.Round = int(d.Point.Phase), d.Point.Task, d.Point.Round
	hooksChanged, err := e.guardHooks(ctx, filepath.Join(e.Service.Repo.CrucibleDir(), "hooks-kept", e.ID, strconv.Itoa(seq)))
	if err != nil {
		return engineError(out, err)
	}
	res, err := runner.Run(ctx, a, req)
	var waiting *agent.Waiting
	if errors.As(err, &waiting) {
		out.Status, out.Waiting = StatusWaiting, waiting
		if err := os.WriteFile(filepath.Join(dir, waitingFile), nil, 0o644); err != nil {
			return engineError(out, err)
		}
		return out
	}
	out.Report, out.Output = res.Report, res.Report
	if out.Output == nil {
		out.Output = res.Output
	}
	ex := checked(exitOf(res, err), d.Report, res)
	if changed, err := hooksChanged(); err != nil {
		return engineError(out, err)
	} else if changed != "" {
		ex.Status, ex.Failure = "failed", string(agent.Tampered)
		ex.Summary = "it changed the repository's hooks or git-crucible's config, which were put back: " + changed
	}
	out.Status, out.Summary, out.Failure = ex.Status, ex.Summary, ex.Failure
	out.ExitCode, out.Stderr, out.Denials, out.Usage = ex.ExitCode, ex.Stderr, ex.Denials, ex.Usage
	if err := keep(dir, res, ex); err != nil {
		return engineError(out, err)
	}
	return out
}

// request is the protocol's request of dispatch seq, its paths and ids:
// the agent's output goes to files of its run directory, where a
// successor finds the answer of an agent that outlived its engine; its
// prompt and report are in its agent directory.
func (e *Engine) request(seq int) (agent.Request, error) {
	dir := e.RunDir(seq)
	req := agent.Request{PromptFile: filepath.Join(dir, promptFile), Output: filepath.Join(dir, reportFile),
		Workdir: e.Workdir, Pipeline: e.ID, Seq: seq, StdoutFile: filepath.Join(dir, stdoutFile),
		StderrFile: filepath.Join(dir, stderrFile), LastMessageFile: filepath.Join(dir, lastMessageFile)}
	ad, ok, err := e.agentDirOf(seq)
	if ok {
		req.PromptFile, req.Output, req.Workdir = ad.Prompt(), ad.Report(), ad.Workdir
	}
	return req, err
}

// exitOf is how an agent's run ended, from what the runner returned: a
// failure keeps the tail of the agent's stderr.
func exitOf(res agent.Result, err error) exitRecord {
	ex := exitRecord{Usage: res.Usage, Denials: res.Denials}
	if res.ExitCode >= 0 {
		code := res.ExitCode
		ex.ExitCode = &code
	}
	var f *agent.Failure
	switch {
	case errors.As(err, &f) && f.Kind == agent.Cancelled:
		ex.Status, ex.Summary, ex.Failure = "error", "interrupted: "+f.Error(), string(f.Kind)
	case errors.As(err, &f):
		ex.Status, ex.Summary, ex.Failure = "failed", f.Error(), string(f.Kind)
	case err != nil:
		ex.Status, ex.Summary = "error", err.Error()
	case res.Report != nil:
		ex.Status, ex.Summary = "completed", fmt.Sprintf("report of %d bytes", len(res.Report))
	default:
		ex.Status, ex.Summary = "completed", noReportKept
	}
	if ex.Status != "completed" {
		ex.Stderr = res.Stderr.Last(maxStderrKept)
	}
	return ex
}

// maxStderrKept is how much of a failed agent's stderr its finish keeps.
const maxStderrKept = 2 << 10

// engineError is an outcome the engine, not the agent, failed.
func engineError(out Outcome, err error) Outcome {
	out.Status, out.Summary = "error", err.Error()
	return out
}

// finish records out as its dispatch's finish and removes its run
// directory, which the chain now replaces.
func (e *Engine) finish(ctx context.Context, out Outcome) error {
	e.chain.Lock()
	defer e.chain.Unlock()
	_, err := e.Service.FinishDispatch(ctx, e.ID, out.Seq, pipeline.FinishRequest{Status: out.Status, Summary: out.Summary,
		Output: out.Output, Failure: out.Failure, Recovered: out.Recovered, ExitCode: out.ExitCode, Stderr: out.Stderr,
		Denials: out.Denials, Usage: out.Usage})
	if err != nil {
		return fmt.Errorf("dispatch %d ended (%s) but its finish was not recorded: %w", out.Seq, out.Status, err)
	}
	return e.removeRun(out.Seq)
}

// removeRun removes dispatch seq's run directory and agent directory,
// which its recorded finish replaces.
func (e *Engine) removeRun(seq int) error {
	ad, ok, err := e.agentDirOf(seq)
	if err != nil {
		return err
	}
	if ok {
		if err := ad.Remove(); err != nil {
			return err
		}
	}
	return os.RemoveAll(e.RunDir(seq))
}

func agentTimeout(a agent.Agent) time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return agent.DefaultTimeout
}
