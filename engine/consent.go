package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// Commands agents wrote — the test writer's acceptance command, a plan
// task's fast gate — are shell text a model chose, run with sh -c even when
// its agent was given no shell: each runs only once a person approved it
// (the approval pause or --yes) or the configuration accepts them all
// (TrustAgentCommands). Each consent is a decision in the chain whose
// choice is the exact command.

// DecisionAgentCommand is the type of the decision that approves a
// command an agent wrote: its choice is the command, its reason who.
const DecisionAgentCommand = "agent-command"

// TrustAgentCommandsKey is the git config that accepts every command
// agents write without asking.
const TrustAgentCommandsKey = "crucible.trustAgentCommands"

// TrustsAgentCommands reads TrustAgentCommandsKey as git does: whether
// repo's configuration accepts every command agents write.
func TrustsAgentCommands(ctx context.Context, repo *gitext.Repo) (bool, error) {
	return repo.ConfigBool(ctx, TrustAgentCommandsKey, false)
}

// AgentCommand is a command an agent wrote that the walk would run.
type AgentCommand struct {
	Command  string `json:"command"`
	From     string `json:"from"`     // what wrote it: acceptance-command, fast-gate of task N
	Approved bool   `json:"approved"` // a decision in the chain approves it
}

// agentCommands lists the commands agents wrote that the walk knows so
// far: the acceptance command and the planned tasks' fast gates, each
// once, but for the project's own test command.
func (w *walker) agentCommands(ctx context.Context) []AgentCommand {
	var out []AgentCommand
	add := func(command, from string) {
		if strings.TrimSpace(command) == "" || command == w.opts.Test ||
			slices.ContainsFunc(out, func(c AgentCommand) bool { return c.Command == command }) {
			return
		}
		out = append(out, AgentCommand{Command: command, From: from, Approved: w.approved(command)})
	}
	if v, ok := w.exports[pipespec.AcceptanceCommand].(string); ok {
		add(v, pipespec.AcceptanceCommand)
	}
	for _, l := range w.sp.Walk() {
		if l.Step.Kind != pipespec.Tasks {
			continue
		}
		if plan, err := w.plan(ctx, l.Step); err == nil { // no plan yet: nothing to list
			for _, t := range plan.Order() {
				add(t.FastGate, "fast-gate of task "+t.ID)
			}
		}
	}
	return out
}

// approved reports whether the chain holds a person's (or the config's)
// consent to run command.
func (w *walker) approved(command string) bool {
	_, ok := w.view.decisionPos[[2]string{DecisionAgentCommand, command}]
	return ok
}

// consentBy says who consents to the commands agents wrote on this walk's
// behalf, "" when nobody did.
func (w *walker) consentBy() string {
	switch {
	case w.opts.Yes:
		return "approved with --yes"
	case w.opts.TrustAgentCommands:
		return "accepted by git config " + TrustAgentCommandsKey
	}
	return ""
}

// commandDrafts are the decisions that record the consent by to the
// commands not approved yet.
func (w *walker) commandDrafts(by string, commands []string) []pipeline.Draft {
	var drafts []pipeline.Draft
	for _, c := range commands {
		if !w.approved(c) {
			drafts = append(drafts, pipeline.Draft{Type: pipeline.TypeDecision,
				Data: pipeline.DecisionData{Type: DecisionAgentCommand, Choice: c, Reason: by}})
		}
	}
	return drafts
}

// decide records drafts, decisions, in one append, and brings the walk's
// view past them.
func (w *walker) decide(ctx context.Context, drafts []pipeline.Draft) error {
	if len(drafts) == 0 {
		return nil
	}
	if _, _, err := w.e.Service.Record(ctx, w.e.ID, drafts...); err != nil {
		return err
	}
	return w.refresh(ctx)
}

// mayRun reports whether command, an agent's, may run: approved before, or
// now by --yes or the config (recorded).
func (w *walker) mayRun(ctx context.Context, command string) (bool, error) {
	if command == w.opts.Test || w.approved(command) {
		return true, nil
	}
	by := w.consentBy()
	if by == "" {
		return false, nil
	}
	return true, w.decide(ctx, w.commandDrafts(by, []string{command}))
}

// consent lets st at p run command, an agent's: nil when it may; else the
// walk stops there for a person, naming it and the others known.
func (w *walker) consent(ctx context.Context, p pipeline.Point, st *pipespec.Step, command string) (*stepEnd, error) {
	if ok, err := w.mayRun(ctx, command); ok || err != nil {
		return nil, err
	}
	end := stopped(p, pipeline.StepWaiting, WalkConsent,
		fmt.Sprintf("%s would run %s, a command an agent wrote: it runs once a person approves it", st.ID, command))
	end.stop.Commands = w.agentCommands(ctx)
	if w.stepStatus(p) == pipeline.StepWaiting {
		end.status = "" // recorded already: stop without recording it again
	}
	return &end, nil
}
