package gitext

import "context"

// InterpretTrailers adds trailers ("Key: value") at the end of msg with
// git's own trailer code, replacing a line with the same key, as `git
// commit --trailer` does: for repositories whose configuration (trailer
// separators, configured keys) makes git read trailer blocks its own way.
func (r *Repo) InterpretTrailers(ctx context.Context, msg []byte, trailers []string) ([]byte, error) {
	args := []string{"interpret-trailers", "--no-divider", "--where", "end", "--if-exists", "replace", "--if-missing", "add"}
	for _, t := range trailers {
		args = append(args, "--trailer", t)
	}
	return run(ctx, r, msg, args...)
}
