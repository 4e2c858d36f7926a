package hooks

import (
	"bufio"
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
	"github.com/git-crucible/git-crucible/pipeline"
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
// commit that opens no editor leaves to it.
func commitMsg(ctx context.Context, args []string) error {
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
	if p.svc.Repo.Operation() != "" || enforce.EngineCommitting(p.svc.Repo.GitDir) {
		return nil // the engine writes its commit's trailers itself
	}
	trailers := enforce.CommitTrailers(p.id, int(p.gates.Ledger.Current()), enforce.AgentFromEnv(os.Getenv))
	msg, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	style, err := enforce.ReadStyle(ctx, p.svc.Repo)
	if err != nil {
		return err
	}
	out, ok, err := enforce.WriteTrailers(ctx, p.svc.Repo, msg, trailers, style)
	if err != nil || !ok || string(out) == string(msg) {
		return err
	}
	return fsutil.WriteAtomic(args[0], out, 0o644)
}

// postCommit writes the new commit's provenance note. It only warns: the
// commit is made whatever happens here.
func postCommit(ctx context.Context, out *Outcome) {
	p, err := activePipeline(ctx)
	if err == nil && p != nil {
		defer p.svc.Close()
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
	writer := ""
	if w, err := pipeline.LoadWriter(repo); err == nil && w != nil {
		writer = w.ID
	}
	rec := enforce.Provenance(p.id, int(p.gates.Ledger.Current()), enforce.AgentFromEnv(os.Getenv), p.head, writer)
	line, err := rec.Encode()
	if err != nil {
		return err
	}
	return notes.Append(ctx, repo, notes.ProvenanceRef, commit, line)
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
			_, err = notes.Copy(ctx, repo, notes.ProvenanceRef, pairs)
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
