package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Outcome is what a hook has to say besides its error: lines for stderr
// (warnings, findings), printed before the error.
type Outcome struct {
	Stderr []string
}

func (r *Outcome) say(format string, args ...any) {
	r.Stderr = append(r.Stderr, fmt.Sprintf(format, args...))
}

// Run is git-crucible's part of the git hook name, given git's arguments
// and input: what the installed hooks run. A nil error lets git go on;
// pre-commit (or commit-msg making its check) refuses with a
// *ledger.Blocked or *pipeline.ConflictError (the caller names the
// commands that unblock it), the push hooks with an
// *outcome.Refused; arguments git never gives are an *outcome.UsageError.
func Run(ctx context.Context, name string, args []string, stdin io.Reader) (Outcome, error) {
	var out Outcome
	var err error
	switch name {
	case "pre-commit":
		err = preCommit(ctx)
	case "commit-msg":
		err = commitMsg(ctx, args, &out)
	case "post-commit":
		postCommit(ctx, &out) // a commit that is made cannot be refused
	case "post-rewrite":
		postRewrite(ctx, stdin, &out)
	case "pre-push":
		err = prePush(ctx, args, stdin, &out)
	case "pre-receive":
		err = preReceive(ctx, stdin, &out)
	default:
		err = outcome.Usagef("unknown hook '%s' (one of %s)", name, strings.Join(All(), ", "))
	}
	return out, err
}

// inPipeline is the pipeline a commit hook works for: the one active on
// the current branch, unless it is abandoned.
type inPipeline struct {
	svc   *pipeline.Service
	id    string
	head  string // the pipeline ref's commit
	gates pipeline.Gates
}

// activePipeline opens the repository and finds the active pipeline; nil
// when there is none, which costs two file reads and no process. The
// caller closes p.svc.
func activePipeline(ctx context.Context) (*inPipeline, error) {
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return nil, err
	}
	return pipelineOf(ctx, repo)
}

// pipelineOf is activePipeline in repo.
func pipelineOf(ctx context.Context, repo *gitext.Repo) (*inPipeline, error) {
	svc := pipeline.Open(repo)
	p, err := activeGates(ctx, svc)
	if err != nil || p == nil {
		svc.Close()
	}
	return p, err
}

func activeGates(ctx context.Context, svc *pipeline.Service) (*inPipeline, error) {
	id, err := svc.Resolve(ctx, "")
	var none *pipeline.NoActiveError
	if errors.As(err, &none) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h, err := svc.Store.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	g, err := pipeline.GatesOf(h.State)
	if err != nil || g.Status == pipeline.StatusAbandoned {
		return nil, err
	}
	return &inPipeline{svc: svc, id: id, head: h.Commit, gates: *g}, nil
}
