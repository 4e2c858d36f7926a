package gitext

import "context"

// Clean removes the untracked files and directories of the work tree,
// ignored ones kept (git clean -fd).
func (r *Repo) Clean(ctx context.Context) error {
	_, err := run(ctx, r, nil, "clean", "-fdq")
	return err
}

// ResetHard puts the index and the work tree back at HEAD (git reset
// --hard), untracked files left.
func (r *Repo) ResetHard(ctx context.Context) error {
	_, err := run(ctx, r, nil, "reset", "-q", "--hard")
	return err
}

// CheckoutDetached puts the work tree at commit, HEAD detached there,
// forcing away changes to tracked files.
func (r *Repo) CheckoutDetached(ctx context.Context, commit string) error {
	// git 2.39's checkout takes no --end-of-options.
	if err := plainRev(commit); err != nil {
		return err
	}
	_, err := run(ctx, r, nil, "checkout", "-q", "--detach", "--force", commit, "--")
	return err
}

// Restore puts paths (from the top) in the index and the work tree as
// commit has them, removed where it has none, and nothing else.
func (r *Repo) Restore(ctx context.Context, commit string, paths []string) error {
	_, err := run(ctx, r, nil, append([]string{"restore", "--source=" + commit, "--staged", "--worktree", "--"}, literal(paths)...)...)
	return err
}

// WorktreeAdd adds a worktree at dir, HEAD detached at commit, in place
// of any git still lists there: one whose directory went away, or that a
// killed git worktree add left locked ("initializing").
func (r *Repo) WorktreeAdd(ctx context.Context, dir, commit string) error {
	_, err := run(ctx, r, nil, "worktree", "add", "-q", "--force", "--force", "--detach", "--end-of-options", dir, commit)
	return err
}

// WorktreeRemove removes the worktree at dir, what is in it too:
// uncommitted changes, and a lock (git worktree remove, forced twice).
func (r *Repo) WorktreeRemove(ctx context.Context, dir string) error {
	_, err := run(ctx, r, nil, "worktree", "remove", "--force", "--force", "--end-of-options", dir)
	return err
}

// WorktreePrune forgets the worktrees whose directories are gone.
func (r *Repo) WorktreePrune(ctx context.Context) error {
	_, err := run(ctx, r, nil, "worktree", "prune")
	return err
}
