package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipespec"
)

// phaseSubjectPaths is how many paths a phase commit's subject names; its
// body lists them all when there are more.
const phaseSubjectPaths = 3

// commitPhase commits, as phase ph ends, what the engine's dispatches
// changed and no commit took yet (the design, the acceptance tests, the
// plan) in a commit of its own, with the phase's trailers and provenance
// note: a task's commit then holds its task's work alone, and the tasks'
// worktrees of a parallel Phase 3 start from a branch that has the
// phases before. It runs before the next phase begins, so the ledger's
// current phase, which commitWork's trailers name, is ph.
//
// A walk killed after the phase's last step and before its commit makes
// it as it resumes: the engine's paths are kept in the work state until a
// commit takes them. Once it is made nothing is pending, and commitWork
// makes no commit: never twice. Once a later phase has begun, ph's commit
// was made before it, and what is pending then is the later phase's.
func (w *walker) commitPhase(ctx context.Context, ph pipespec.Phase) error {
	l := w.state.Gates.Ledger
	if l.Current() != ph.Number || l.Entry(ph.Number).Status == ledger.NotStarted {
		return nil
	}
	return w.commitPending(ctx, func(paths []string) string { return phaseMessage(w.e.ID, ph, paths) }, enforce.Agent{}, false)
}

// phaseMessage is the message of phase ph's commit of paths.
func phaseMessage(id string, ph pipespec.Phase, paths []string) string {
	named := paths
	if len(paths) > phaseSubjectPaths {
		named = paths[:phaseSubjectPaths]
	}
	subject := fmt.Sprintf("Phase %d (%s) of pipeline %s: %s", ph.Number, ph.Name, id, strings.Join(named, ", "))
	if more := len(paths) - len(named); more > 0 {
		subject += fmt.Sprintf(" and %d more", more)
	}
	body := fmt.Sprintf("What the dispatches of Phase %d changed, committed as the phase ends.", ph.Number)
	if len(named) < len(paths) {
		body += "\n\n" + strings.Join(paths, "\n")
	}
	return subject + "\n\n" + body
}
