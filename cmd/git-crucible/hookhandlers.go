package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/remote"
)

// The dispatcher names the agent making a commit through these variables;
// commit-msg turns them into trailers and post-commit into provenance.
const (
	envTask = "CRUCIBLE_TASK"
	envSeq  = "CRUCIBLE_SEQ"
	envRole = "CRUCIBLE_ROLE"
)

// inPipeline is the pipeline a commit hook works for: the one active on
// the current branch, unless it is abandoned.
type inPipeline struct {
	s     *session
	id    string
	head  string // the pipeline ref's commit
	gates pipeline.Gates
}

// hookPipeline opens the repository and finds the active pipeline; nil
// when there is none, which costs two file reads and no process.
func hookPipeline(ctx context.Context, stdout, stderr io.Writer) (*inPipeline, error) {
	s, err := openSession(ctx, stdout, stderr, "", false)
	if err != nil {
		return nil, err
	}
	p, err := activeGates(ctx, s)
	if err != nil || p == nil {
		s.close()
	}
	return p, err
}

func activeGates(ctx context.Context, s *session) (*inPipeline, error) {
	id, err := s.svc.Resolve(ctx, "")
	var none *pipeline.NoActiveError
	if errors.As(err, &none) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h, err := s.svc.Store.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	g, err := pipeline.GatesOf(h.State)
	if err != nil || g.Status == pipeline.StatusAbandoned {
		return nil, err
	}
	return &inPipeline{s: s, id: id, head: h.Commit, gates: g}, nil
}

// preCommitHook refuses a commit while the active pipeline's current phase
// may not go on, with the commands that unblock it.
func preCommitHook(ctx context.Context, stdout, stderr io.Writer) error {
	p, err := hookPipeline(ctx, stdout, stderr)
	if err != nil || p == nil {
		return err
	}
	defer p.s.close()
	if _, refusal := p.gates.Check(p.id, 0); refusal != nil {
		return ruleError(refusal, "")
	}
	return nil
}

// dispatcherNumber reads CRUCIBLE_TASK or CRUCIBLE_SEQ: a positive decimal
// number, else 0 (not given). The trailers and the note read it alike.
func dispatcherNumber(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n <= 0 || strconv.Itoa(n) != os.Getenv(name) {
		return 0
	}
	return n
}

// commitMsgHook adds the Crucible-* trailers to a commit made inside a
// pipeline, and leaves commits that replay others (rebase, cherry-pick,
// revert, merge) alone: they keep the trailers they had.
func commitMsgHook(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 {
		return usageErrorf("commit-msg takes the message file")
	}
	p, err := hookPipeline(ctx, stdout, stderr)
	if err != nil || p == nil {
		return err
	}
	defer p.s.close()
	if p.s.svc.Repo.Operation() != "" {
		return nil
	}
	trailers := []enforce.Trailer{{Key: enforce.TrailerPipeline, Value: p.id},
		{Key: enforce.TrailerPhase, Value: strconv.Itoa(int(p.gates.Ledger.Current()))}}
	if n := dispatcherNumber(envTask); n > 0 {
		trailers = append(trailers, enforce.Trailer{Key: enforce.TrailerTask, Value: strconv.Itoa(n)})
	}
	if n := dispatcherNumber(envSeq); n > 0 {
		trailers = append(trailers, enforce.Trailer{Key: enforce.TrailerSeq, Value: strconv.Itoa(n)})
	}
	msg, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	style, err := messageStyle(ctx, p.s.svc.Repo)
	if err != nil {
		return err
	}
	out, ok := enforce.AddTrailers(msg, trailers, style)
	if !ok || string(out) == string(msg) {
		return nil
	}
	return fsutil.WriteAtomic(args[0], out, 0o644)
}

// messageStyle reads what decides how git will clean the message up.
func messageStyle(ctx context.Context, repo *gitext.Repo) (enforce.Style, error) {
	var st enforce.Style
	if !repo.ConfigMayMention("commentchar", "commentstring", "template") {
		return st, nil // git's defaults, known without starting git config
	}
	entries, err := repo.ConfigEntries(ctx, `^(core\.commentchar|core\.commentstring|commit\.template)$`)
	if err != nil {
		return st, err
	}
	for _, e := range entries {
		switch strings.ToLower(e.Key) {
		case "core.commentchar", "core.commentstring": // git 2.45 allows a string; its first byte starts it
			st.CommentChars = e.Value[:min(1, len(e.Value))]
			if e.Value == "auto" {
				st.CommentChars = enforce.AutoCommentChars
			}
		case "commit.template":
			path := e.Value
			if rest, ok := strings.CutPrefix(path, "~/"); ok {
				path = filepath.Join(os.Getenv("HOME"), rest)
			}
			if b, err := os.ReadFile(path); err == nil {
				st.Template = string(b)
			}
		}
	}
	return st, nil
}

// postCommitHook writes the new commit's provenance note. It only warns:
// the commit is made whatever happens here.
func postCommitHook(ctx context.Context, stdout, stderr io.Writer) {
	p, err := hookPipeline(ctx, stdout, stderr)
	if err == nil && p != nil {
		defer p.s.close()
		if p.s.svc.Repo.Operation() != "" {
			return // replayed commits keep their notes through post-rewrite
		}
		err = writeProvenance(ctx, p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: git-crucible: no provenance note for this commit: %v\n", err)
		fmt.Fprintf(stderr, "hint: 'git crucible verify --range HEAD~1..HEAD' will report it\n")
	}
}

func writeProvenance(ctx context.Context, p *inPipeline) error {
	repo := p.s.svc.Repo
	commit, err := repo.HeadCommit()
	if err != nil {
		return err
	}
	rec := notes.Provenance{Pipeline: p.id, Phase: int(p.gates.Ledger.Current()), Task: dispatcherNumber(envTask),
		Seq: dispatcherNumber(envSeq), Role: strings.TrimSpace(os.Getenv(envRole)), LedgerHead: p.head}
	if w, err := pipeline.LoadWriter(repo); err == nil && w != nil {
		rec.Writer = w.ID
	}
	line, err := rec.Encode()
	if err != nil {
		return err
	}
	return notes.Append(ctx, repo, notes.ProvenanceRef, commit, line)
}

// postRewriteHook carries provenance notes from rewritten commits to their
// replacements (amend, rebase, squash, fixup). git's notes.rewriteRef does
// the same when configured; the union is idempotent, so both may run.
func postRewriteHook(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) {
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
			_, err = notes.Copy(ctx, repo, notes.ProvenanceRef, pairs)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: git-crucible: provenance notes were not carried over: %v\n", err)
	}
}

func zeroID(oid string) bool { return strings.Trim(oid, "0") == "" }

// pushPolicy is the crucible.* configuration the push hooks follow.
type pushPolicy struct {
	policy    string // gated, complete or off
	protected []string
	history   bool
}

func readPushPolicy(ctx context.Context, repo *gitext.Repo) (pushPolicy, error) {
	p := pushPolicy{policy: "gated", protected: []string{"main", "master"}}
	entries, err := repo.ConfigEntries(ctx, `^crucible\.(pushpolicy|protectedbranches|pushhistory)$`)
	if err != nil {
		return p, err
	}
	for _, e := range entries {
		switch strings.ToLower(e.Key) {
		case "crucible.pushpolicy":
			p.policy = e.Value
		case "crucible.protectedbranches":
			p.protected = strings.FieldsFunc(e.Value, func(r rune) bool { return r == ',' || r == ' ' })
		case "crucible.pushhistory":
			p.history = e.Value == "true" || e.Value == "yes" || e.Value == "on" || e.Value == "1"
		}
	}
	if !slices.Contains([]string{"gated", "complete", "off"}, p.policy) {
		return p, withHints(fmt.Errorf("crucible.pushPolicy is '%s'", p.policy), "set it to gated, complete or off")
	}
	return p, nil
}

func (p pushPolicy) rulesFor(remoteRef string) enforce.Rules {
	branch := strings.TrimPrefix(remoteRef, "refs/heads/")
	return enforce.Rules{Blocked: true, Complete: p.policy == "complete" || slices.Contains(p.protected, branch)}
}

// prePushHook checks every branch being pushed: the commits the remote
// does not have yet must have been made with their gates passed, in sound
// pipelines that are not blocked now (and complete, for protected
// branches). With crucible.pushHistory it then syncs the pipelines along.
func prePushHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	s, policy, updates, err := openPushHook(ctx, stdin, stdout, stderr, false)
	if err != nil || s == nil {
		return err
	}
	defer s.close()
	if len(args) < 1 {
		return usageErrorf("pre-push takes the remote's name and URL")
	}
	auditor := enforce.NewAuditor(s.svc)
	var pushed []string // pipelines the pushed commits were made in
	for _, r := range updates {
		if zeroID(r.Local) || !strings.HasPrefix(r.RemoteRef, "refs/heads/") {
			continue // deletions, tags, our own refs
		}
		rules := policy.rulesFor(r.RemoteRef)
		revs := pushRevs(ctx, s, r, args[0], rules.Complete)
		report, err := auditor.Audit(ctx, revs, rules)
		if err != nil {
			return err
		}
		if report.Errors() > 0 {
			printFindings(stderr, report.Findings)
			return withHints(&refused{err: fmt.Errorf("git-crucible refuses to push %s: %d problem(s) above", r.RemoteRef, report.Errors())},
				"see the full report with: git crucible verify --range "+rangeOf(r)+" --rules push",
				"pushing anyway (git push --no-verify) stays visible to git crucible verify")
		}
		pushed = append(pushed, report.Pipelines...)
	}
	if !policy.history || len(pushed) == 0 {
		return nil
	}
	// git names the remote in $1 and its URL in $2; pushing to a URL, $1 is
	// the URL too, and there is no name to track its history under.
	if err := remote.CheckName(args[0]); err != nil || len(args) > 1 && args[0] == args[1] {
		fmt.Fprintf(stderr, "warning: git-crucible: pipeline history was not pushed: %s is not a configured remote's name\n", args[0])
		fmt.Fprintf(stderr, "hint: push it to a named remote with: git crucible sync <remote>\n")
		return nil
	}
	x := &remote.Syncer{Svc: s.svc}
	if _, err := x.Sync(ctx, args[0], remote.Selection{IDs: slices.Compact(slices.Sorted(slices.Values(pushed)))}); err != nil {
		return withHints(&refused{err: fmt.Errorf("the pipeline history of this push did not reach %s: %w", args[0], err)},
			"push it with: git crucible sync "+args[0])
	}
	return nil
}

// pushRevs names the commits a push brings: those the remote lacks, or,
// for a protected branch, those the branch lacks (commits already on the
// remote's other branches still need their pipelines complete to land).
func pushRevs(ctx context.Context, s *session, r enforce.PushRef, remoteName string, perBranch bool) []string {
	known := false
	if !zeroID(r.Remote) {
		_, err := s.svc.Repo.Git(ctx, "cat-file", "-e", r.Remote+"^{commit}")
		known = err == nil
	}
	switch {
	case perBranch && known:
		return []string{r.Local, "^" + r.Remote}
	case perBranch:
		return []string{r.Local} // a new protected branch: all it holds
	case known:
		return []string{r.Local, "--not", "--remotes=" + remoteName, r.Remote}
	}
	return []string{r.Local, "--not", "--remotes=" + remoteName}
}

func rangeOf(r enforce.PushRef) string {
	if zeroID(r.Remote) {
		return r.Local
	}
	return r.Remote + ".." + r.Local
}

// preReceiveHook is the server's check of pushes to protected branches:
// every new commit made in a pipeline needs that pipeline present (pushed
// before the branch: crucible.pushHistory or git crucible push), sound,
// unblocked and complete.
func preReceiveHook(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	s, policy, updates, err := openPushHook(ctx, stdin, stdout, stderr, true)
	if err != nil || s == nil {
		return err
	}
	defer s.close()
	auditor := enforce.NewAuditor(s.svc)
	refusals := 0
	for _, r := range updates {
		rules := policy.rulesFor(r.RemoteRef)
		if zeroID(r.Local) || !strings.HasPrefix(r.RemoteRef, "refs/heads/") || !rules.Complete {
			continue
		}
		report, err := auditor.Audit(ctx, receiveRevs(s, r, policy), rules)
		if err != nil {
			return err
		}
		if report.Errors() > 0 {
			fmt.Fprintf(stderr, "error: git-crucible refuses %s:\n", r.RemoteRef)
			printFindings(stderr, report.Findings)
			refusals++
		}
	}
	if refusals > 0 {
		return &refused{err: fmt.Errorf("%d protected branch update(s) refused", refusals)}
	}
	return nil
}

// receiveRevs names the commits a protected branch gains: new ^old, or for
// a new branch everything not already on another protected branch. Commits
// that are on other branches of the server still count: landing on a
// protected branch is what needs their pipelines complete.
func receiveRevs(s *session, r enforce.PushRef, policy pushPolicy) []string {
	revs := []string{r.Local}
	if !zeroID(r.Remote) {
		return append(revs, "^"+r.Remote)
	}
	for _, name := range policy.protected {
		if ref := "refs/heads/" + name; ref != r.RemoteRef {
			if oid, err := s.svc.Repo.ReadRef(ref); err == nil && oid != "" {
				revs = append(revs, "^"+oid)
			}
		}
	}
	return revs
}

// openPushHook is what pre-push and pre-receive start with: git's input
// read whole (git wants that, whatever the hook decides), the repository and
// the push policy. The session is nil when the policy is off.
func openPushHook(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, receive bool) (*session, pushPolicy, []enforce.PushRef, error) {
	input, err := io.ReadAll(stdin)
	if err != nil {
		return nil, pushPolicy{}, nil, err
	}
	s, err := openSession(ctx, stdout, stderr, "", false)
	if err != nil {
		return nil, pushPolicy{}, nil, err
	}
	policy, err := readPushPolicy(ctx, s.svc.Repo)
	if err != nil || policy.policy == "off" {
		s.close()
		return nil, policy, nil, err
	}
	return s, policy, enforce.ParsePushInput(string(input), receive), nil
}

func printFindings(w io.Writer, findings []enforce.Finding) {
	for _, f := range findings {
		where := "pipeline " + f.Pipeline
		if f.Commit != "" {
			where = f.Commit[:min(12, len(f.Commit))] + " " + f.Subject
		}
		fmt.Fprintf(w, "  %s: %s: %s\n", f.Level, where, f.Message)
	}
}
