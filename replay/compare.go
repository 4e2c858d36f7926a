package replay

import (
	"context"
	"errors"

	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// CompareSessions is the Replay Diff of sessions a and b of pipeline id
// (Compare, the outputs read from its chain), with the artifact diff
// between the commits each ended with: HEAD for a run not ended.
func CompareSessions(ctx context.Context, svc *pipeline.Service, id string, events []pipeline.Event, sp *pipespec.Spec, a, b string) (*Diff, error) {
	d, err := Compare(id, events, sp, a, b, func(path string) ([]byte, error) { return svc.ReadKept(ctx, id, path) })
	var bad *OverrideError
	if errors.As(err, &bad) {
		return nil, outcome.WithHints(&outcome.Refused{Err: err}, "a session is the pipeline's id (its first run) or replay-N")
	}
	if err != nil {
		return nil, err
	}
	from, to := d.A.Session.Final, d.B.Session.Final
	if to == "" {
		to = "HEAD"
	}
	if from != "" {
		stat, err := svc.Repo.ShortStat(ctx, from, to)
		if err != nil {
			return nil, err
		}
		d.Files, d.Insertions, d.Deletions = stat.Files, stat.Insertions, stat.Deletions
		d.Range = from[:min(12, len(from))] + ".." + to[:min(12, len(to))]
	}
	return d, nil
}
