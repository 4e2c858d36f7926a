package notes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// The provenance queue. A commit's note is queued by the post-commit hook
// file, in sh, without starting a process, and written by the next
// git-crucible process that flushes the queue (Flush): starting one for
// every commit, and writing three objects for every note, cost more than
// git's own commit. commit-msg, having checked the commit, leaves the line
// the note is to hold in queuePath/next, with the commit that was HEAD then;
// post-commit moves it to queuePath/<new commit> (see hooks.Shim), so a
// commit that no commit-msg checked (--no-verify) finds no line and starts
// the post-commit hook, which writes its note itself.
const (
	queueDir  = "crucible/notes-queue"
	nextEntry = "next"
	// queueLimit bounds what a queue file may hold: a line of provenance
	// and a commit id are well under it.
	queueLimit = 16 << 10
)

// queuePath is where provenance notes wait to be written, in the git dir
// the post-commit hook file finds (the common one: the hook files queue
// only outside linked worktrees).
func queuePath(repo *gitext.Repo) string { return filepath.Join(repo.CommonDir, queueDir) }

// SetNext leaves line as the note of the commit about to be made on head
// (its HEAD, "" before the first commit), for the post-commit hook file to
// queue. It is written in place: commit-msg writes it before git makes the
// commit, and nothing reads it until git has; a half-written line is no
// record, which Flush drops.
func SetNext(repo *gitext.Repo, line []byte, head string) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("a note line may not hold a newline: %q", line)
	}
	data := slices.Concat(line, []byte("\n"+head+"\n"))
	path := nextPath(repo)
	err := fsutil.WriteInPlace(path, data, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = fsutil.WriteInPlace(path, data, 0o644)
		}
	}
	return err
}

// ClearNext takes back a line SetNext left, so that a commit no commit-msg
// checked starts the post-commit hook rather than take the note of one
// that was. Best effort: Flush drops a line queued on the wrong commit.
// It costs one stat when there is none (the hook file empties it).
func ClearNext(repo *gitext.Repo) {
	if fi, err := os.Lstat(nextPath(repo)); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		fsutil.WriteInPlace(nextPath(repo), nil, 0o644)
	}
}

// nextPath is SetNext's file, in the work tree's own git dir: a commit in
// one work tree must not take the line left in another.
func nextPath(repo *gitext.Repo) string { return filepath.Join(repo.GitDir, queueDir, nextEntry) }

// Queued counts the commits whose notes wait in the queue.
func Queued(repo *gitext.Repo) int {
	names, _ := queueNames(repo)
	return len(names)
}

// Flush writes the queued provenance notes and the lines of extra in one
// notes commit, then removes the queue's files; it returns how many
// queued notes it wrote. A queued line is written only on the commit it
// was checked for: one whose first parent is the HEAD commit-msg saw, or
// that HEAD's first parent (an amend). Any other, or one that is no
// provenance record, is dropped: its commit was made unchecked. A file in
// the queue that is not named by an object id, or not a regular file, is
// not the hook's and is left alone. Killed at any point, a Flush loses
// nothing: the files go only after the notes commit is in place, and
// appending a line a note has is a no-op.
func Flush(ctx context.Context, repo *gitext.Repo, extra ...Lines) (int, error) {
	names, err := queueNames(repo)
	if err != nil {
		return 0, err
	}
	batch := extra
	var done []string
	for _, name := range names {
		path := filepath.Join(queuePath(repo), name)
		data, err := fsutil.ReadRegular(path, queueLimit, errors.New("not a queued note"))
		if err != nil {
			continue
		}
		if line, ok := checkedLine(ctx, repo, name, data); ok {
			batch = append(batch, Lines{Object: name, Lines: [][]byte{line}})
		}
		done = append(done, path)
	}
	if len(batch) > 0 {
		if err := AppendEach(ctx, repo, ProvenanceRef, batch); err != nil {
			return 0, err
		}
	}
	for _, path := range done {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	return len(batch) - len(extra), nil
}

// queueNames lists the queue's entries named by an object id.
func queueNames(repo *gitext.Repo) ([]string, error) {
	entries, err := os.ReadDir(queuePath(repo))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var names []string
	for _, e := range entries {
		if repo.ValidOID(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, err
}

// checkedLine is the note line of a queue file for commit, when it holds a
// provenance record checked for commit: see Flush.
func checkedLine(ctx context.Context, repo *gitext.Repo, commit string, data []byte) ([]byte, bool) {
	line, head, ok := parseQueued(data)
	if !ok {
		return nil, false
	}
	parent, err := firstParent(ctx, repo, commit)
	if err != nil {
		return nil, false
	}
	if h := head; parent != h {
		// An amend replaces HEAD: the new commit has HEAD's parent.
		if !repo.ValidOID(h) {
			return nil, false
		}
		if up, err := firstParent(ctx, repo, h); err != nil || up != parent {
			return nil, false
		}
	}
	return line, true
}

// firstParent is commit's first parent, "" for a root commit; a missing
// commit is an error.
func firstParent(ctx context.Context, repo *gitext.Repo, commit string) (string, error) {
	parent, err := repo.FirstParent(ctx, commit)
	if errors.Is(err, gitext.ErrMissing) {
		// No parent, or no commit: git tells them apart.
		var parents []string
		if parents, err = repo.Parents(ctx, commit); err == nil && len(parents) > 0 {
			parent = parents[0]
		}
	}
	return parent, err
}

// parseQueued reads a queue file: one provenance record, then the commit
// it was checked on, each on its line.
func parseQueued(data []byte) (line []byte, head string, ok bool) {
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	h, _, ok2 := bytes.Cut(rest, []byte("\n"))
	if recs, errs := ParseProvenance(line); !ok || !ok2 || len(recs) != 1 || len(errs) != 0 {
		return nil, "", false
	}
	return line, string(h), true
}
