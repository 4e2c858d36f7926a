package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/notes"
)

// workFile keeps, beside the pipeline's run directories, whose the work
// tree's changes are, for a resumed engine to know it.
const workFile = "worktree.json"

// workState is whose the work tree's changes are. The user's paths
// (dirty when the pipeline's first walk began, or made dirty between its
// dispatches) are never staged; the engine's are those its dispatches
// changed, which its next commit takes. Before is the work tree as it was
// before the dispatch under way (nil when none is): what that dispatch
// changed is what differs from it when it ends.
type workState struct {
	User   map[string]string `json:"user"` // path -> its fingerprint (gitext.Dirty) when it became the user's
	Engine []string          `json:"engine,omitempty"`
	Before map[string]string `json:"before,omitempty"`
	// Note is the provenance note of the engine's commit under way, kept
	// until it is written: a walk killed in between writes it as it
	// resumes.
	Note *pendingNote `json:"note,omitempty"`
}

// pendingNote is the note line of the commit the engine makes on Parent,
// HEAD at Was before it.
type pendingNote struct {
	Was, Parent, Line string
}

// workTree is the walker's hold on the work tree it dispatches in.
type workTree struct {
	state workState
	head  string // HEAD where the engine left it
	// branch is the branch HEAD names, which the engine commits on.
	branch string
	token  string // EnvEngineCommit of the engine's own commits
	// warnings are what the walk says besides its result: an agent
	// changed a file of the user's.
	warnings []string
}

// ForeignCommitError is HEAD moved by a commit the engine did not make,
// while it worked in the work tree: it stops there, and the branch stays
// as it is.
type ForeignCommitError struct {
	Commit, Subject string
	Was             string // HEAD where the engine left it
	// Branch is the branch HEAD names when it is not the engine's.
	Branch string
}

func (e *ForeignCommitError) Error() string {
	if e.Branch != "" {
		return fmt.Sprintf("HEAD is on %s at %s (%s), not on the branch git-crucible works on: it stops here",
			e.Branch, short(e.Commit), e.Subject)
	}
	return fmt.Sprintf("HEAD moved from %s to %s (%s), a commit git-crucible did not make: it stops here, the branch as it is",
		short(e.Was), short(e.Commit), e.Subject)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// DirtyTreeError is a work tree with changes to tracked files, which a
// build refuses to start in, as git rebase does: its commits would take
// them, or its agents' edits mix with them.
type DirtyTreeError struct{ Staged bool }

func (e *DirtyTreeError) Error() string {
	if e.Staged {
		return "cannot build: your index contains uncommitted changes."
	}
	return "cannot build: you have unstaged changes."
}

// CheckClean is a *DirtyTreeError when tracked files differ from HEAD, in
// the index or the work tree; untracked files are allowed: the engine
// never commits them.
func CheckClean(ctx context.Context, repo *gitext.Repo) error {
	dirty, err := repo.Dirty(ctx, repo.WorkTree)
	if err != nil {
		return err
	}
	var refusal *DirtyTreeError
	for _, fp := range dirty {
		switch {
		case strings.HasPrefix(fp, "??"):
		case fp[0] != ' ':
			refusal = &DirtyTreeError{Staged: true}
		case refusal == nil:
			refusal = &DirtyTreeError{}
		}
	}
	if refusal == nil {
		return nil
	}
	return refusal
}

// holdWorkTree takes the work tree for the walk: its state (the user's
// paths taken now, at the pipeline's first walk), HEAD as it is, and the
// marker that turns away every commit there but the engine's own while
// it runs. release removes the marker.
func (w *walker) holdWorkTree(ctx context.Context) (release func(), err error) {
	wt := &workTree{}
	if wt.state, err = w.e.workState(ctx); err != nil {
		return nil, err
	}
	if err := w.notePending(ctx, &wt.state); err != nil {
		return nil, err
	}
	if w.opts.Restored {
		if err := w.e.takeNow(ctx, &wt.state, false); err != nil {
			return nil, err
		}
	}
	if wt.head, err = w.headNow(); err != nil {
		return nil, err
	}
	if wt.branch, err = w.e.Service.Repo.ReadSymref("HEAD"); err != nil {
		return nil, err
	}
	token, digest, err := newEngineToken()
	if err != nil {
		return nil, err
	}
	wt.token = token
	command := w.opts.Command
	if command == "" {
		command = "build"
	}
	marker := enforce.EngineMarkerPath(w.e.Service.Repo.GitDir)
	m := enforce.EngineMarker{Owner: gitext.Owner(), Command: command, Pipeline: w.e.ID, Digest: digest}
	if err := writeJSON(marker, m); err != nil {
		return nil, err
	}
	w.wt = wt
	return func() {
		// Another engine's marker, written since, stays.
		var now enforce.EngineMarker
		if ok, err := readJSON(marker, &now); err == nil && ok && now.Digest == digest {
			os.Remove(marker)
		}
	}, nil
}

func (w *walker) workFile() string { return w.e.workFile() }

func (e *Engine) workFile() string { return filepath.Join(e.runs(), workFile) }

// workState is the engine's record of the work tree; at the pipeline's
// first walk, every path dirty then is the user's.
func (e *Engine) workState(ctx context.Context) (workState, error) {
	var st workState
	ok, err := readJSON(e.workFile(), &st)
	if err != nil || ok {
		return st, err
	}
	if st.User, err = e.Service.Repo.Dirty(ctx, e.Workdir); err != nil {
		return st, err
	}
	return st, writeJSON(e.workFile(), st)
}

// take takes every path dirty now that is neither the user's nor the
// engine's as the user's, or the engine's.
func (st *workState) take(now map[string]string, users bool) {
	if st.User == nil {
		st.User = map[string]string{}
	}
	for p, fp := range now {
		_, mine := st.User[p]
		switch {
		case mine || slices.Contains(st.Engine, p):
		case users:
			st.User[p] = fp
		default:
			st.Engine = append(st.Engine, p)
		}
	}
	slices.Sort(st.Engine)
}

// takeNow is take of the work tree as it is now, kept.
func (e *Engine) takeNow(ctx context.Context, st *workState, users bool) error {
	now, err := e.Service.Repo.Dirty(ctx, e.Workdir)
	if err != nil {
		return err
	}
	st.take(now, users)
	return writeJSON(e.workFile(), st)
}

// TakeUserFiles takes what differs from HEAD in the work tree now, but
// what the engine's dispatches changed, as the user's: before a replay
// restores a checkpoint there, whose files (Restored) are the engine's.
func (e *Engine) TakeUserFiles(ctx context.Context) error {
	st, err := e.workState(ctx)
	if err != nil {
		return err
	}
	return e.takeNow(ctx, &st, true)
}

// notePending writes the note of the commit a killed walk made and did
// not note: HEAD moved from where it was, onto the commit's parent to be.
func (w *walker) notePending(ctx context.Context, st *workState) error {
	if st.Note == nil {
		return nil
	}
	head, err := w.headNow()
	if err != nil {
		return err
	}
	if head != st.Note.Was && w.parent(ctx, head) == st.Note.Parent {
		if err := notes.Append(ctx, w.e.Service.Repo, notes.ProvenanceRef, head, []byte(st.Note.Line)); err != nil {
			return err
		}
	}
	st.Note = nil
	return writeJSON(w.workFile(), st)
}

// parent is commit's first parent, "" when it has none.
func (w *walker) parent(ctx context.Context, commit string) string {
	parent, err := w.e.Service.Repo.FirstParent(ctx, commit)
	if err != nil {
		return ""
	}
	return parent
}

// headNow is HEAD's commit, "" on a branch with none yet.
func (w *walker) headNow() (string, error) {
	h, err := w.e.Service.Repo.HeadCommit()
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return h, err
}

// checkHead stops the walk when HEAD is not where the engine left it: on
// its branch, at its commit.
func (w *walker) checkHead(ctx context.Context) error {
	now, err := w.headNow()
	if err != nil {
		return err
	}
	branch, err := w.e.Service.Repo.ReadSymref("HEAD")
	if err != nil || (now == w.wt.head && branch == w.wt.branch) {
		return err
	}
	moved := &ForeignCommitError{Commit: now, Was: w.wt.head}
	if branch != w.wt.branch {
		moved.Branch = strings.TrimPrefix(branch, "refs/heads/")
		if branch == "" {
			moved.Branch = "no branch (detached)"
		}
	}
	subject, _ := w.e.Service.Repo.LogFormat(ctx, "%s", gitext.LogOptions{Max: 1}, now)
	moved.Subject = strings.TrimSpace(string(subject))
	return moved
}

// beforeDispatch is the work tree as a dispatch in it starts: HEAD where
// the engine left it, what the dispatch before changed taken as the
// engine's, what changed since as the user's, and the tree as it is kept
// for what this one changes.
func (w *walker) beforeDispatch(ctx context.Context) error {
	if err := w.checkHead(ctx); err != nil {
		return err
	}
	if err := w.settle(ctx); err != nil {
		return err
	}
	st := &w.wt.state
	now, err := w.e.Service.Repo.Dirty(ctx, w.e.Workdir)
	if err != nil {
		return err
	}
	st.take(now, true)
	st.Before = now
	return writeJSON(w.workFile(), st)
}

// settle takes what the dispatch under way changed, once it has ended, as
// the engine's: every path whose state differs from Before, but the
// user's, which an agent that changed one leaves as it is, with a warning.
func (w *walker) settle(ctx context.Context) error {
	st := &w.wt.state
	if st.Before == nil {
		return nil
	}
	now, err := w.e.Service.Repo.Dirty(ctx, w.e.Workdir)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	for p, fp := range now {
		changed[p] = st.Before[p] != fp
	}
	for p := range st.Before {
		if _, ok := now[p]; !ok {
			changed[p] = true
		}
	}
	for p, c := range changed {
		switch _, users := st.User[p]; {
		case !c:
		case users:
			w.wt.warnings = append(w.wt.warnings, fmt.Sprintf("an agent changed %s, which was yours before its dispatch: it is left out of the engine's commits", p))
		case !slices.Contains(st.Engine, p):
			st.Engine = append(st.Engine, p)
		}
	}
	slices.Sort(st.Engine)
	st.Before = nil
	return writeJSON(w.workFile(), st)
}

// engineChanges are the engine's paths that differ from HEAD or the
// index now: what its commit takes.
func (w *walker) engineChanges(ctx context.Context) ([]string, error) {
	now, err := w.e.Service.Repo.Dirty(ctx, w.e.Workdir)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(w.wt.state.Engine), func(p string) bool {
		_, dirty := now[p]
		return !dirty
	}), nil
}

// committed forgets the engine's paths, which its commit at head took,
// and its note, written.
func (w *walker) committed(head string) error {
	w.wt.head = head
	w.wt.state.Engine, w.wt.state.Note = nil, nil
	return writeJSON(w.workFile(), w.wt.state)
}

// messageFile writes msg where git commit -F reads it.
func (w *walker) messageFile(msg []byte) (string, error) {
	path := filepath.Join(w.e.runs(), "commit-msg")
	return path, fsutil.WriteAtomic(path, msg, 0o644)
}

// newEngineToken is a fresh commit token and its digest, for the marker.
// The hook binary only checks tokens: crypto/rand, and its start-up cost,
// stay out of it.
func newEngineToken() (token, digest string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b)
	return token, enforce.TokenDigest(token), nil
}
