package hooks

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/notes"
)

// preCommit refuses a commit while an engine dispatches in the work tree,
// unless it is the engine's own, and while the active pipeline's current
// phase may not go on.
func preCommit(ctx context.Context) error {
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return err
	}
	p, err := checkCommit(ctx, repo)
	if p != nil {
		p.svc.Close()
	}
	return err
}

// checkCommit is pre-commit's check in repo; it returns the active
// pipeline it allowed the commit in (nil when there is none), which the
// caller closes.
func checkCommit(ctx context.Context, repo *gitext.Repo) (*inPipeline, error) {
	if err := engineAlone(repo); err != nil {
		return nil, err
	}
	p, err := pipelineOf(ctx, repo)
	if err != nil || p == nil {
		return nil, err
	}
	if _, refusal := p.gates.Check(p.id, 0); refusal != nil {
		p.svc.Close()
		return nil, refusal
	}
	return p, nil
}

// engineAlone refuses a commit in a work tree an engine works in, unless
// the engine makes it: the engine commits its agents' work there itself,
// and another's commit would sweep that work up, or be rebased under it.
func engineAlone(repo *gitext.Repo) error {
	m, err := enforce.ReadEngineMarker(repo.GitDir)
	if err != nil || m == nil || m.Admits(os.Getenv(enforce.EnvEngineCommit)) {
		return err
	}
	return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s is working in this work tree on pipeline %s: it makes the commits here while it runs", m.Name(), m.Pipeline)},
		"commit when it has stopped, or stop it (Ctrl-C) and go on later with --resume")
}

// commitMsg adds the Crucible-* trailers to a commit made inside a
// pipeline, and leaves commits that replay others (rebase, cherry-pick,
// revert, merge) alone: they keep the trailers they had. With
// PreCommitFlag it makes pre-commit's check first, which the shim of a
// commit that opens no editor leaves to it. It leaves the commit's
// provenance note for the post-commit hook file to queue (notes.SetNext),
// and writes the queued notes once there are flushAt of them.
func commitMsg(ctx context.Context, args []string, out *Outcome) error {
	check := len(args) > 0 && args[0] == PreCommitFlag
	if check {
		args = args[1:]
	}
	if len(args) != 1 {
		return outcome.Usagef("commit-msg takes the message file")
	}
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return err
	}
	var p *inPipeline
	if check {
		p, err = checkCommit(ctx, repo)
	} else {
		p, err = pipelineOf(ctx, repo)
	}
	if err != nil || p == nil {
		return err
	}
	defer p.svc.Close()
	notes.ClearNext(repo) // a line is left below, for this commit only
	if p.svc.Repo.Operation() != "" || enforce.EngineCommitting(p.svc.Repo.GitDir) {
		return nil // the engine writes its commit's trailers itself
	}
	trailers := enforce.CommitTrailers(p.id, int(p.gates.Ledger.Current()), enforce.AgentFromEnv(os.Getenv))
	msg, err := fsutil.ReadNoPoll(args[0])
	if err != nil {
		return err
	}
	style, err := enforce.ReadStyle(ctx, p.svc.Repo)
	if err != nil {
		return err
	}
	withTrailers, ok, err := enforce.WriteTrailers(ctx, p.svc.Repo, msg, trailers, style)
	if err != nil || !ok {
		return err
	}
	if err := rewriteMessage(args[0], msg, withTrailers); err != nil {
		return err
	}
	queueNote(ctx, p, out)
	return nil
}

// rewriteMessage puts to into the message file that held from. Trailers
// usually go at the end: then they are appended, the message itself never
// rewritten (and no file renamed over it, which costs a commit more).
func rewriteMessage(path string, from, to []byte) error {
	tail, appended := bytes.CutPrefix(to, from)
	switch {
	case len(tail) == 0 && appended:
		return nil
	case appended && fsutil.AppendInPlace(path, tail) == nil:
		return nil
	}
	return fsutil.WriteAtomic(path, to, 0o644)
}

// flushAt is how many queued notes commit-msg lets wait: enough that a
// commit seldom writes them, few enough that plain git soon shows them.
const flushAt = 32

// queueNote leaves the commit's note for the post-commit hook file, which
// queues it in the main work tree only (it reads HEAD from .git); in a
// linked one the post-commit hook writes it.
func queueNote(ctx context.Context, p *inPipeline, out *Outcome) {
	repo := p.svc.Repo
	if repo.GitDir != repo.CommonDir {
		return
	}
	head, err := repo.HeadCommit()
	var line []byte
	if err == nil {
		line, err = provenanceLine(p)
	}
	if err == nil {
		err = notes.SetNext(repo, line, head)
	}
	if err == nil && notes.Queued(repo) >= flushAt {
		refsHere(repo)
		_, err = notes.Flush(ctx, repo)
	}
	if err != nil {
		out.say("warning: git-crucible: provenance notes: %v", err)
	}
}

// postCommit writes the new commit's provenance note, and the queued ones,
// when the post-commit hook file has not queued it. It only warns: the
// commit is made whatever happens here.
func postCommit(ctx context.Context, out *Outcome) {
	p, err := activePipeline(ctx)
	if err == nil && p != nil {
		defer p.svc.Close()
		notes.ClearNext(p.svc.Repo)
		if p.svc.Repo.Operation() != "" || enforce.EngineCommitting(p.svc.Repo.GitDir) {
			return // replayed commits keep their notes through post-rewrite; an engine writes its own
		}
		err = writeProvenance(ctx, p)
	}
	if err != nil {
		out.say("warning: git-crucible: no provenance note for this commit: %v", err)
		out.say("hint: 'git crucible verify --range HEAD~1..HEAD' will report it")
	}
}

func writeProvenance(ctx context.Context, p *inPipeline) error {
	repo := p.svc.Repo
	refsHere(repo)
	commit, err := repo.HeadCommit()
	if err != nil {
		return err
	}
	line, err := provenanceLine(p)
	if err != nil {
		return err
	}
	_, err = notes.Flush(ctx, repo, notes.Lines{Object: commit, Lines: [][]byte{line}})
	return err
}

// provenanceLine is the note line of a commit made now in p.
func provenanceLine(p *inPipeline) ([]byte, error) {
	return enforce.ProvenanceLine(p.svc.Repo, p.id, int(p.gates.Ledger.Current()), enforce.AgentFromEnv(os.Getenv), p.head)
}

// postRewrite carries provenance notes from rewritten commits to their
// replacements (amend, rebase, squash, fixup). git's notes.rewriteRef does
// the same when configured; the union is idempotent, so both may run.
func postRewrite(ctx context.Context, stdin io.Reader, out *Outcome) {
	var pairs []notes.Rewrite
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 {
			pairs = append(pairs, notes.Rewrite{Old: f[0], New: f[1]})
		}
	}
	err := sc.Err()
	if err == nil && len(pairs) > 0 {
		var repo *gitext.Repo
		if repo, err = gitext.Discover(ctx); err == nil {
			refsHere(repo)
			// An amend's post-commit queued the new commit's note: it is
			// written first, then the old one's lines join it.
			if _, err = notes.Flush(ctx, repo); err == nil {
				_, err = notes.Copy(ctx, repo, notes.ProvenanceRef, pairs)
			}
		}
	}
	if err != nil {
		out.say("warning: git-crucible: provenance notes were not carried over: %v", err)
	}
}

// refsHere lets the notes ref move in process (gitext.Repo.RefsHere), the
// hook no longer ended by ^C, a hang-up or SIGTERM: it finishes its note, a
// few milliseconds, rather than die holding the ref's lock. (git's own
// update-ref is in a process group of its own for that.)
func refsHere(repo *gitext.Repo) {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	repo.RefsHere = true
}
