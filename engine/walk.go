package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
)

// WalkOptions configure a walk.
type WalkOptions struct {
	// Spec is the pipeline spec to walk; the goal is the pipeline's own.
	Spec *pipespec.Spec
	// Yes approves the approval pause (build --yes), and the commands
	// agents wrote as the walk meets them; without it the walk stops
	// there, waiting.
	Yes bool
	// TrustAgentCommands runs the commands agents wrote without a person's
	// consent (git config crucible.trustAgentCommands).
	TrustAgentCommands bool
	// Design is a design document the user supplies (build --design FILE):
	// the artifact "design" is at this work-tree path and the step that
	// produces it is skipped.
	Design string
	// Templates renders the prompts; nil is the built-in set.
	Templates *prompt.Set
	// Test is the project's test command; "" takes the agents' config's.
	Test string
	// Executor walks a plan's tasks; nil is Parallel when max-parallel
	// is above 1 (or Phase 3 began in parallel), else Serial.
	Executor Executor
	// MaxParallel, when above 0, overrides the tasks step's max-parallel
	// (build --max-parallel).
	MaxParallel int
	// Mutations are the templates Templates swaps, by the name a step
	// gives, each as crucible's manifest records it ("orig.md -> repl.md"):
	// a replay's A/B experiment.
	Mutations map[string]string
	// Command is the command walking (build, replay), named to whoever
	// commits in the work tree meanwhile; "" is build.
	Command string
	// Restored says the engine has restored the work tree (a replay):
	// what differs from HEAD there, but the user's files, is the engine's.
	Restored bool
	// Baseline is the known-failing baseline a new build goes on from
	// (build --baseline-fails, BaselineError.Known): recorded in the
	// chain before the first step, once; a resume or a replay reads it
	// there. Test steps whose command fails pass when every failure
	// they name failed at the baseline.
	Baseline *pipeline.BaselineData
}

// Walk statuses.
const (
	WalkDone      = "done"      // the pipeline's four phases are closed
	WalkWaiting   = "waiting"   // for a person: the approval, a manual agent
	WalkEscalated = "escalated" // a gate or loop escalated, or a RED test is GREEN
	WalkFailed    = "failed"    // a step failed: an agent, a run
	WalkConsent   = "consent"   // a command an agent wrote waits for a person's consent
)

// WalkResult is where a walk stopped, and why.
type WalkResult struct {
	Status string
	Point  pipeline.Point // the step it stopped at; zero when done
	Reason string         // one sentence: why it stopped
	// Suggestion is, on escalation or an agent's failure, one sentence on
	// what a person can do.
	Suggestion string
	// Waiting is a manual dispatch's instructions, when it waits for one.
	Waiting *Outcome
	// Message is the approval step's message, when it waits for approval.
	Message string
	// Commands are the commands agents wrote that the walk knows, when it
	// waits for approval or for consent to run one.
	Commands []AgentCommand
	// Warnings are what the walk saw on its way: an agent changed a file
	// of the user's, which no commit took.
	Warnings []string
}

// stepEnd is how one step ended: done lets the walk go on.
type stepEnd struct {
	status string // pipeline.StepDone, StepFailed, StepEscalated, StepWaiting
	result string // what RecordStep keeps: short
	stop   WalkResult
	// baseline: a test step done against the known-failing baseline.
	baseline bool
}

func done(result string) stepEnd { return stepEnd{status: pipeline.StepDone, result: result} }

// Walk walks opts.Spec from where the pipeline's chain says it stands to
// the end, or to a stop: an approval without Yes, a manual agent, a
// failure, an escalation. Every step ends with RecordStep, and each checks
// what the chain has already, so a walk killed anywhere resumes with Walk
// without dispatching a finished step again: Walk runs Recover first.
//
// The walk holds the work tree while it runs (holdWorkTree): commits
// there are the engine's alone, and one by another that it finds stops
// it, escalated, the branch left as it is.
func (e *Engine) Walk(ctx context.Context, opts WalkOptions) (res WalkResult, err error) {
	if opts.Spec == nil {
		return WalkResult{}, errors.New("a walk needs a spec")
	}
	w := &walker{e: e, opts: opts, sp: opts.Spec}
	release, err := w.holdWorkTree(ctx)
	if err != nil {
		return WalkResult{}, err
	}
	defer release()
	defer func() {
		var foreign *ForeignCommitError
		if errors.As(err, &foreign) {
			res, err = WalkResult{Status: WalkEscalated, Point: w.at, Reason: foreign.Error(),
				Suggestion: fmt.Sprintf("see it (git show %s), keep it or take it back, then go on with --resume", short(foreign.Commit))}, nil
		}
		res.Warnings = w.wt.warnings
	}()
	if w.opts.Templates == nil {
		set, err := prompt.Embedded()
		if err != nil {
			return WalkResult{}, err
		}
		w.opts.Templates = set
	}
	if w.opts.Test == "" && e.Agents != nil {
		w.opts.Test = e.Agents.Test
	}
	if err := w.refresh(ctx); err != nil {
		return WalkResult{}, err
	}
	recovered, err := w.recover(ctx)
	if err != nil {
		return WalkResult{}, err
	}
	w.waiting = map[int]Outcome{}
	for _, r := range recovered {
		if r.Outcome.Status == StatusWaiting {
			w.waiting[r.Seq] = r.Outcome
		}
	}
	if err := w.refresh(ctx); err != nil {
		return WalkResult{}, err
	}
	if err := w.givenDesign(); err != nil {
		return WalkResult{}, err
	}
	if err := w.recordBaseline(ctx); err != nil {
		return WalkResult{}, err
	}
	if err := e.goOnPastBudget(ctx); err != nil {
		return WalkResult{}, err
	}
	for _, ph := range w.sp.Phases {
		for i := range ph.Steps {
			st := &ph.Steps[i]
			p := pipeline.Point{Phase: ph.Number, Step: st.ID}
			if w.done(p) {
				continue
			}
			if err := w.enterPhase(ctx, ph.Number); err != nil {
				return WalkResult{}, err
			}
			var end stepEnd
			var err error
			if st.Kind == pipespec.Tasks {
				end, err = w.tasks(ctx, p, st)
			} else {
				end, err = w.step(ctx, p, st, nil)
			}
			if err != nil || end.status == "" {
				return end.stop, err
			}
			if err := w.record(ctx, p, end); err != nil {
				return WalkResult{}, err
			}
			if end.status != pipeline.StepDone {
				return end.stop, nil
			}
		}
		// The phase's work in a commit of its own, before the next begins.
		if err := w.commitPhase(ctx, ph); err != nil {
			return WalkResult{}, err
		}
	}
	return WalkResult{Status: WalkDone}, nil
}

// recover is the engine's Recover of the dispatches in flight, found in
// the walk's view of the chain rather than by reading the whole chain
// again; by the whole chain when the view has not every one the state
// says is in flight (one the engine did not start).
func (w *walker) recover(ctx context.Context) ([]Recovered, error) {
	unfinished := w.view.unfinished()
	if len(unfinished) != len(w.state.Dispatch.InFlight) {
		return w.e.Recover(ctx)
	}
	return w.e.recover(ctx, unfinished)
}

// record records the end of the step at p, and reloads the chain.
func (w *walker) record(ctx context.Context, p pipeline.Point, end stepEnd) error {
	if err := w.e.recordStep(ctx, p, end.status, end.result, end.baseline); err != nil {
		return err
	}
	return w.refresh(ctx)
}

// recordBaseline records opts.Baseline, the known-failing baseline the
// build goes on from, unless the chain has one: a walk killed after
// recording it goes on with that one.
func (w *walker) recordBaseline(ctx context.Context) error {
	if w.opts.Baseline == nil || w.view.baseline != nil {
		return nil
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, pipeline.Draft{Type: pipeline.TypeBaseline, Data: *w.opts.Baseline}); err != nil {
		return fmt.Errorf("the known-failing baseline: %w", err)
	}
	return w.refresh(ctx)
}

// stopped is a step that stops the walk at p.
func stopped(p pipeline.Point, status, walk, reason string) stepEnd {
	return stepEnd{status: status, result: reason, stop: WalkResult{Status: walk, Point: p, Reason: reason}}
}

// enterPhase begins phase n in the ledger when it has not begun, after
// the handoff out of the phase before it.
func (w *walker) enterPhase(ctx context.Context, n ledger.Phase) error {
	if w.state.Gates.Ledger.Entry(n).Status != ledger.NotStarted {
		return nil
	}
	if n > ledger.Design && !w.view.handedOff[n-1] {
		if _, _, err := w.e.Service.WriteHandoff(ctx, w.e.ID, w.handoff(n-1), interopHandoff); err != nil {
			return fmt.Errorf("handoff out of Phase %d: %w", n-1, err)
		}
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin),
		Data: pipeline.LedgerData{Phase: n}}); err != nil {
		return fmt.Errorf("begin Phase %d: %w", n, err)
	}
	return w.refresh(ctx)
}

// designGiven starts the result of the design's producer skipped for
// --design: the path follows.
const designGiven = "skipped: the design is "

// givenDesign takes the design an earlier walk was given (--design), which
// its producer's step result keeps, so that a resume without the flag
// goes on with it; a resume given another one is refused.
func (w *walker) givenDesign() error {
	l, ok := w.sp.Find(producerID(w.sp))
	if !ok {
		return nil
	}
	given, ok := strings.CutPrefix(w.view.result[pipeline.Point{Phase: l.Phase, Step: l.Step.ID}], designGiven)
	switch {
	case !ok:
	case w.opts.Design == "":
		w.opts.Design = given
	case w.opts.Design != given:
		return fmt.Errorf("the pipeline's design is %s: it was given with --design when it began", given)
	}
	return nil
}

// producerID is the id of the step producing the design, "" when none does.
func producerID(sp *pipespec.Spec) string {
	if p := sp.Producer("design"); p != nil {
		return p.ID
	}
	return ""
}
