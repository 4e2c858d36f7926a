package cliexit

import (
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Rule turns a ledger refusal into a refused error with the commands that
// fix it; id is the pipeline to name in them ("" for the active one).
func Rule(err error, id string) error {
	var blocked *ledger.Blocked
	var illegal *ledger.IllegalError
	var conflict *pipeline.ConflictError
	switch {
	case errors.As(err, &blocked):
		return outcome.WithHints(&outcome.Refused{Err: blocked}, fixHints(blocked, id)...)
	case errors.As(err, &conflict):
		phase := conflict.Conflicts[0].Phase
		return outcome.WithHints(&outcome.Refused{Err: conflict}, "see both records with: git crucible status"+pipelineArg(id),
			fmt.Sprintf(`once the gate's status is right, run: git crucible resolve --phase %d --reason "<why>"%s`, phase, pipelineArg(id)))
	case errors.As(err, &illegal):
		return &outcome.Refused{Err: illegal}
	case errors.Is(err, pipeline.ErrAbandoned):
		return outcome.WithHints(&outcome.Refused{Err: err}, `start a new pipeline with: git crucible start "<goal>"`)
	}
	return err
}

// fixHints renders a Blocked's steps as the exact commands to run.
func fixHints(b *ledger.Blocked, id string) []string {
	hints := []string{"to unblock, run:"}
	for _, step := range b.Steps {
		hints = append(hints, "  "+Command(step, id))
	}
	if b.Status != ledger.Skipped {
		hints = append(hints, fmt.Sprintf(`or skip the gate: git crucible ledger skip %d --reason "<why>"%s, then acknowledge it`, b.Gate, pipelineArg(id)))
	}
	return hints
}

func pipelineArg(id string) string {
	if id == "" {
		return ""
	}
	return " --pipeline " + id
}

// Command is the CLI line that performs a ledger action.
func Command(a ledger.Action, id string) string {
	p := pipelineArg(id)
	switch a.Kind {
	case ledger.GiveVerdict:
		return fmt.Sprintf("git crucible gate verdict %d --verdict %s%s   (after the quality gate passes)", a.Phase, a.Verdict, p)
	case ledger.CompletePhase:
		return fmt.Sprintf("git crucible ledger complete %d --tasks N/N%s", a.Phase, p)
	case ledger.Ack:
		return fmt.Sprintf(`git crucible ledger ack %d --confirm "%s"%s`, a.Phase, ledger.SkipConfirmation, p)
	}
	return fmt.Sprintf("git crucible ledger %s %d%s", a.Kind, a.Phase, p)
}
