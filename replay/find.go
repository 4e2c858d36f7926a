package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/refs"
)

// staleAfter is how old a pipeline's start may be before a replay warns.
const staleAfter = 7 * 24 * time.Hour

// manyReplays is the resume count from which a replay advises smaller tasks.
const manyReplays = 3

// Request is what Find looks for: the resume point of pipeline Pipeline,
// or of Source (a crucible manifest's, FromManifest, not imported), under
// Spec and Options.
type Request struct {
	Pipeline string
	Source   *Source
	Spec     *pipespec.Spec
	Options
	// Digest is the sha256 of the template text the replay renders a
	// template from, and Mutated the templates a --mutate swaps: a
	// template that changed otherwise since the run replaced is warned of.
	// Nil Digest checks none.
	Digest  func(template string) string
	Mutated map[string]string
}

// Found is where a replay resumes and what it warns of on the way.
type Found struct {
	Source   *Source
	State    *pipeline.State // the chain's state; nil for a manifest's Source
	Resume   *Resume
	Warnings []Warning
}

// Warning is a warning for the user, and how to act on it ("" for no hint).
type Warning struct{ Text, Hint string }

// Find reads the source of req and finds where to resume it: the dry
// run's and the replay's first steps. A pipeline that is only a task run
// is refused: it has no phases. An error once the resume point is found
// comes with f, holding the warnings found before it.
func Find(ctx context.Context, svc *pipeline.Service, req Request) (*Found, error) {
	f := &Found{Source: req.Source}
	if f.Source == nil {
		st, _, err := svc.Load(ctx, req.Pipeline)
		if err != nil {
			return nil, err
		}
		if TaskRunOnly(st) {
			hint := "a task run goes on where it stopped when run again: git crucible run"
			if m := st.View.DAG.Manifest; m != "" {
				hint += " " + m
			}
			return nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("pipeline %s is a task run: it has no phases to replay", req.Pipeline)}, hint)
		}
		events, err := svc.ChainEvents(ctx, req.Pipeline)
		if err != nil {
			return nil, err
		}
		if f.Source, err = FromEvents(st, events, req.Spec); err != nil {
			return nil, err
		}
		f.State = st
	}
	src := f.Source
	ev, err := Gather(ctx, svc.Repo, src)
	if err != nil {
		return nil, err
	}
	r, err := Detect(src, req.Spec, ev, req.Options)
	var bad *OverrideError
	if errors.As(err, &bad) {
		return nil, outcome.WithHints(&outcome.Refused{Err: err}, "see its dispatches: git crucible dispatch list --pipeline "+src.Pipeline)
	}
	if err != nil {
		return nil, err
	}
	f.Resume = r
	for _, n := range r.Notes {
		f.Warnings = append(f.Warnings, Warning{Text: n})
	}
	// git's notion of now, which a user (and a test) may pin.
	now, err := gitext.Now()
	if err != nil {
		return f, err // with the notes found: they are said before the error
	}
	if started, err := time.Parse(time.RFC3339, src.Started); err == nil && now.Sub(started) > staleAfter {
		w := Warning{Text: fmt.Sprintf("pipeline %s started %s, more than 7 days ago: its state may be stale", src.Pipeline, src.Started)}
		if strings.HasPrefix(src.Path, refs.PipelinePrefix) {
			w.Hint = "to put it aside instead: git crucible replay --archive " + src.Pipeline
		}
		f.Warnings = append(f.Warnings, w)
	}
	if src.Replays >= manyReplays {
		f.Warnings = append(f.Warnings, Warning{Text: fmt.Sprintf(
			"pipeline %s was resumed %d times: split its work into smaller tasks, or find what keeps interrupting it", src.Pipeline, src.Replays)})
	}
	if req.Digest != nil {
		for _, ch := range ChangedTemplates(r.Redo, req.Digest, req.Mutated) {
			now := "it is gone"
			if ch.Now != "" {
				now = "now " + ch.Now[:12]
			}
			f.Warnings = append(f.Warnings, Warning{Text: fmt.Sprintf("template %s changed since the run replayed rendered it (dispatch %d: sha256 %s, %s)",
				ch.Template, ch.Seq, ch.Was[:12], now)})
		}
	}
	return f, nil
}
