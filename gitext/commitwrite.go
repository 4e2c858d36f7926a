package gitext

import (
	"context"
	"strings"
)

// CommitWriter writes commits as git commit-tree writes them (CommitTree),
// in process: the author and committer are asked of git once (git var),
// on the first commit, so that commits made together share them. Where
// the configuration might sign commits or give them another encoding,
// which commit-tree would do, each commit is git commit-tree's.
type CommitWriter struct {
	repo              *Repo
	author, committer string
	byGit             bool
}

// NewCommitWriter is a CommitWriter of r.
func (r *Repo) NewCommitWriter() *CommitWriter {
	return &CommitWriter{repo: r, byGit: r.ConfigMayMention("gpgsign", "commitencoding")}
}

// Write writes a commit of tree with parents and message as it is, and
// returns it.
func (w *CommitWriter) Write(ctx context.Context, tree string, parents []string, message string) (string, error) {
	if w.byGit {
		return w.repo.CommitTree(ctx, tree, parents, message)
	}
	if w.author == "" {
		author, err := w.repo.ident(ctx, "GIT_AUTHOR_IDENT")
		if err != nil {
			return "", err
		}
		if w.committer, err = w.repo.ident(ctx, "GIT_COMMITTER_IDENT"); err != nil {
			return "", err
		}
		w.author = author
	}
	c := Commit{Tree: tree, Parents: parents, Author: w.author, Committer: w.committer, Message: message}
	return w.repo.WriteObject("commit", c.Encode())
}

// ident is git var's answer for name: "Name <email> time zone".
func (r *Repo) ident(ctx context.Context, name string) (string, error) {
	out, err := run(ctx, r, nil, "var", name)
	return strings.TrimRight(string(out), "\n"), err
}

// Committer is who git would name as the committer of a commit made now
// (git var GIT_COMMITTER_IDENT): user.name and user.email, or the
// GIT_COMMITTER_* variables that override them.
func (r *Repo) Committer(ctx context.Context) (name, email string, err error) {
	ident, err := r.ident(ctx, "GIT_COMMITTER_IDENT")
	if err != nil {
		return "", "", err
	}
	name, rest, _ := strings.Cut(ident, " <")
	email, _, _ = strings.Cut(rest, ">")
	return strings.TrimSpace(name), email, nil
}
