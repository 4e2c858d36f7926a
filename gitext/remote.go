package gitext

import "context"

// Fetch fetches refspecs from remote (a name or URL) in one atomic ref
// update: every ref moves, or none does; no tags, no FETCH_HEAD; refs
// the remote no longer has are pruned from the refspecs' destinations. A
// ref's lock is waited for as UpdateRefs waits for it: a git process
// beside it (a gc packing refs, say) would otherwise fail the fetch after
// git's default 100ms. Git reports progress when Exec.Progress takes it.
func (r *Repo) Fetch(ctx context.Context, remote string, refspecs ...string) error {
	args := []string{"-c", WaitForLocks(), "fetch", "--atomic", "--no-tags", "--no-write-fetch-head", "--prune", "--quiet"}
	if r.reportsProgress() {
		args[len(args)-1] = "--progress"
	}
	_, err := run(ctx, r, nil, append(append(args, "--end-of-options", remote), refspecs...)...)
	return err
}

// Push pushes refspecs to remote in one atomic update and returns what git
// push --porcelain says of each ref, also when it fails. Git reports
// progress when Exec.Progress takes it.
func (r *Repo) Push(ctx context.Context, remote string, refspecs ...string) ([]byte, error) {
	args := []string{"push", "--atomic", "--porcelain"}
	if r.reportsProgress() {
		args = append(args, "--progress")
	}
	return run(ctx, r, nil, append(append(args, "--end-of-options", remote), refspecs...)...)
}

// reportsProgress says whether Exec.Progress takes git's progress.
func (r *Repo) reportsProgress() bool { return r.via != nil && r.via.Progress != nil }
