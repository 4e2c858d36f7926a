package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
	"github.com/git-crucible/git-crucible/verifycommits"
)

// fixRole and fixTemplate are who repairs a commit that fails its gate,
// and the prompt it gets: the build engine's own for a failing fast gate.
const (
	fixRole       = "fixer"
	fixTemplate   = "fixer"
	verifyFixStep = "verify-commits" // the step a pipeline's manifest records its dispatches at
	fixOwner      = "verify-commits" // whose agent directories a fixer run alone gets
)

// Fixer is verify-commits --fix's agent: it dispatches the fixer role at
// broken commits. With a pipeline active on the branch, each dispatch goes
// through its engine, so its manifest records it as build's own (and a
// killed one is settled by build --resume); else the agent runs alone, its
// files in a directory removed after it.
type Fixer struct {
	repo      *gitext.Repo
	agents    *agent.Config
	templates *prompt.Set
	dir       string // where prompts, reports and diffs go
	engine    *Engine
	state     *pipeline.State
}

// NewFixer resolves the fixer and its prompt before anything runs, and
// opens the engine of the pipeline active on the branch, if any: Close
// releases it.
func NewFixer(ctx context.Context, repo *gitext.Repo, store *verifycommits.Store) (*Fixer, error) {
	agents, err := agent.Load(ctx, repo)
	if err != nil {
		return nil, err
	}
	if agents.Refused != nil {
		return nil, agents.Refused
	}
	if _, err := agents.Ready(fixRole, repo.WorkTree); err != nil {
		return nil, err
	}
	templates, err := prompt.Load(repo.WorkTree)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(store.Dir(), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(store.Dir(), "fix-agent-")
	if err != nil {
		return nil, err
	}
	f := &Fixer{repo: repo, agents: agents, templates: templates, dir: dir}
	svc := pipeline.Open(repo)
	id, err := svc.Resolve(ctx, "")
	var none *pipeline.NoActiveError
	if errors.As(err, &none) {
		svc.Close()
		return f, nil
	}
	if err == nil {
		f.state, _, err = svc.Load(ctx, id)
	}
	if err == nil {
		f.engine, err = Open(svc, id, agents, repo.WorkTree)
	}
	if err != nil {
		svc.Close()
		f.Close()
		return nil, err
	}
	return f, nil
}

// Close releases the engine and removes the agent's files.
func (f *Fixer) Close() {
	if f.engine != nil {
		f.engine.Close()
		f.engine.Service.Close()
	}
	_ = os.RemoveAll(f.dir)
}

// RemoveFixerDirs removes the agent directories a killed --fix run's
// fixer left in the work tree (one run at a time per work tree: none is
// in use), and the parents it leaves empty.
func RemoveFixerDirs(repo *gitext.Repo) {
	dir := filepath.Join(repo.WorkTree, filepath.FromSlash(agent.RunsDir), fixOwner)
	if os.RemoveAll(dir) != nil {
		return
	}
	for dir = filepath.Dir(dir); dir != repo.WorkTree; dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return // not empty: the user's files too
		}
	}
}

// Fix is a verifycommits.Fixer: one dispatch of the fixer at b. An agent that
// fails is a round that did not fix, which the gate then says; only the
// engine's own failures are errors.
func (f *Fixer) Fix(ctx context.Context, b verifycommits.Broken) error {
	diff := filepath.Join(f.dir, fmt.Sprintf("%s-%d.diff", b.Commit.Commit, b.Round))
	show, err := f.repo.Show(ctx, "commit %H%n%n%B", b.Commit.Commit)
	if err != nil {
		return err
	}
	if err := os.WriteFile(diff, show, 0o644); err != nil {
		return err
	}
	d := prompt.Data{Goal: "every commit passes its fast gate at its own place in the stack", Mode: "feature",
		Phase: 4, PhaseName: "Completion", Step: verifyFixStep, Role: fixRole, Round: b.Round, MaxRounds: b.Rounds,
		Artifact: prompt.Artifact{Name: "diff", Path: diff},
		Task:     &report.PlanTask{ID: b.Commit.Task, Title: b.Commit.Subject, FastGate: b.Command},
		Findings: GateFailure(fmt.Sprintf("commit %s (%s)", b.Commit.Commit[:12], b.Commit.Subject), b.Command, b.Exit, b.Log),
		Report:   prompt.Report{Format: prompt.ReportTask}}
	if d.Task.ID == "" {
		d.Task.ID = b.Commit.Commit[:12]
	}
	if f.agents.Test != "" {
		d.TestCommand = f.agents.Test
	}
	if f.engine != nil {
		return f.dispatch(ctx, b, d)
	}
	a, err := f.agents.Resolve(fixRole)
	if err != nil {
		return err
	}
	ad, err := NewAgentDir(f.repo.WorkTree, fixOwner)
	if err != nil {
		return err
	}
	defer ad.Remove()
	d.Report.Path = ad.Report()
	text, err := f.templates.Render(fixTemplate, d)
	if err != nil {
		return err
	}
	runner := agent.Runner{Start: b.Start}
	_, err = runner.Run(ctx, a, agent.Request{Prompt: []byte(text), PromptFile: ad.Prompt(),
		Output: ad.Report(), Workdir: f.repo.WorkTree, Role: fixRole, Template: fixTemplate, Phase: d.Phase,
		Task: b.Commit.Task, Round: b.Round, Commands: f.commands(b)})
	var failure *agent.Failure
	if errors.As(err, &failure) && failure.Kind != agent.Cancelled {
		return nil // the agent's failure: the gate judges the tree it left
	}
	return err
}

// dispatch runs the fixer through the pipeline's engine: dispatch.start
// and finish in its manifest, at the pipeline's phase.
func (f *Fixer) dispatch(ctx context.Context, b verifycommits.Broken, d prompt.Data) error {
	st, _, err := f.engine.Service.Load(ctx, f.engine.ID)
	if err != nil {
		return err
	}
	d.Goal, d.Mode, d.Pipeline = st.Goal, st.Mode, st.ID
	p := DispatchSpec{Role: fixRole, Template: fixTemplate, Title: b.Commit.Subject, Report: prompt.ReportTask}
	p.Point.Phase, p.Point.Step, p.Point.Task, p.Point.Round = st.Gates.Ledger.Current(), verifyFixStep, b.Commit.Task, b.Round
	d.Phase = int(p.Point.Phase)
	ad, err := f.engine.NewAgentDir(f.repo.WorkTree)
	if err != nil {
		return err
	}
	d.Report.Path = ad.Report()
	text, err := f.templates.Render(fixTemplate, d)
	if err != nil {
		return errors.Join(err, ad.Remove())
	}
	p.Prompt, p.AgentDir, p.Workdir, p.Commands = []byte(text), ad, f.repo.WorkTree, f.commands(b)
	out, err := f.engine.Dispatch(ctx, p)
	switch {
	case err != nil:
		return err
	case out.Status == StatusWaiting:
		return fmt.Errorf("dispatch %d: the fixer is a manual agent: verify-commits --fix cannot wait for it", out.Seq)
	case out.Status == "error":
		return fmt.Errorf("dispatch %d: %s", out.Seq, out.Summary)
	}
	return nil
}

// commands are what the fixer may run: the project's tests and the gate.
func (f *Fixer) commands(b verifycommits.Broken) []string {
	return slices.DeleteFunc([]string{f.agents.Test, b.Command}, func(c string) bool { return c == "" })
}
