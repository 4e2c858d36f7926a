package gitext

import "context"

// CommitOptions say what Commit commits, and with which message.
type CommitOptions struct {
	// MessageFile holds the message, taken as it is (no cleanup); ""
	// keeps the message of the commit Amend replaces.
	MessageFile string
	// Only commits these paths (from the top) as the work tree has them,
	// and nothing else that is staged; none: what is staged.
	Only  []string
	Amend bool // replace HEAD's commit rather than add one on it
}

// Commit commits, as git commit does (its hooks run), quietly.
func (r *Repo) Commit(ctx context.Context, o CommitOptions) error {
	args := []string{"commit", "-q"}
	if o.MessageFile != "" {
		args = append(args, "--cleanup=verbatim", "-F", o.MessageFile)
	} else {
		args = append(args, "--no-edit")
	}
	var stdin []byte
	if o.Only != nil {
		args = append(args, "--only", "--pathspec-from-file=-", "--pathspec-file-nul")
		stdin = nulTerminated(o.Only)
	}
	if o.Amend {
		args = append(args, "--amend")
	}
	_, err := run(ctx, r, stdin, args...)
	return err
}

// RebaseInteractive rebases HEAD onto upstream as its todo list says (git
// rebase -i): the list GIT_SEQUENCE_EDITOR writes (Exec.Env), and nothing
// else; no autosquash, autostash or fork point, no other ref moved, an
// exec line that fails scheduled again.
func (r *Repo) RebaseInteractive(ctx context.Context, upstream string) error {
	_, err := run(ctx, r, nil, "rebase", "-i", "--no-autosquash", "--no-autostash", "--no-update-refs", "--reschedule-failed-exec",
		"--no-fork-point", "--end-of-options", upstream)
	return err
}

// RebaseContinue goes on with the rebase under way.
func (r *Repo) RebaseContinue(ctx context.Context) error {
	_, err := run(ctx, r, nil, "rebase", "--continue")
	return err
}

// RebaseAbort ends the rebase under way, HEAD and its branch put back.
func (r *Repo) RebaseAbort(ctx context.Context) error {
	_, err := run(ctx, r, nil, "rebase", "--abort")
	return err
}

// CherryPickQuit forgets the cherry-pick under way, leaving the index and
// the work tree as they are.
func (r *Repo) CherryPickQuit(ctx context.Context) error {
	_, err := run(ctx, r, nil, "cherry-pick", "--quit")
	return err
}
