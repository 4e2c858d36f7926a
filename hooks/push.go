package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/remote"
	"github.com/git-crucible/git-crucible/verifycommits/results"
)

// prePush checks every branch being pushed: the commits the remote does
// not have yet must have been made with their gates passed, in sound
// pipelines that are not blocked now (and complete, for protected
// branches). With crucible.pushHistory it then syncs the pipelines along.
func prePush(ctx context.Context, args []string, stdin io.Reader, out *Outcome) error {
	svc, policy, updates, err := openPush(ctx, stdin, false)
	if err != nil || svc == nil {
		return err
	}
	defer svc.Close()
	if len(args) < 1 {
		return outcome.Usagef("pre-push takes the remote's name and URL")
	}
	// The audit reads the pushed commits' notes, and the sync pushes them.
	if _, err := notes.Flush(ctx, svc.Repo); err != nil {
		out.say("warning: git-crucible: queued provenance notes: %v", err)
	}
	auditor := enforce.NewAuditor(svc)
	var pushed []string // pipelines the pushed commits were made in
	for _, r := range updates {
		if !r.Audited() {
			continue // deletions, tags, our own refs
		}
		rules := policy.RulesFor(r.RemoteRef)
		known := false
		if !r.New() {
			_, err := svc.Repo.ResolveCommit(ctx, r.Remote)
			known = err == nil
		}
		report, err := auditor.Audit(ctx, enforce.PushRevs(r, args[0], rules.Complete, known), rules)
		if err != nil {
			return err
		}
		if report.Errors() > 0 {
			out.findings(report.Findings)
			return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("git-crucible refuses to push %s: %d problem(s) above", r.RemoteRef, report.Errors())},
				"see the full report with: git crucible verify --range "+r.Range()+" --rules push",
				"pushing anyway (git push --no-verify) stays visible to git crucible verify")
		}
		if rules.Verified {
			if err := checkVerified(ctx, svc.Repo, enforce.PushRevs(r, args[0], rules.Complete, known), r, out); err != nil {
				return err
			}
		}
		pushed = append(pushed, report.Pipelines...)
	}
	if !policy.History || len(pushed) == 0 {
		return nil
	}
	// git names the remote in $1 and its URL in $2; pushing to a URL, $1 is
	// the URL too, and there is no name to track its history under.
	if err := remote.CheckName(args[0]); err != nil || len(args) > 1 && args[0] == args[1] {
		out.say("warning: git-crucible: pipeline history was not pushed: %s is not a configured remote's name", args[0])
		out.say("hint: push it to a named remote with: git crucible sync <remote>")
		return nil
	}
	x := &remote.Syncer{Svc: svc}
	if _, err := x.Sync(ctx, args[0], remote.Selection{IDs: slices.Compact(slices.Sorted(slices.Values(pushed)))}); err != nil {
		return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("the pipeline history of this push did not reach %s: %w", args[0], err)},
			"push it with: git crucible sync "+args[0])
	}
	return nil
}

// preReceive is the server's check of pushes to protected branches: every
// new commit made in a pipeline needs that pipeline present (pushed before
// the branch: crucible.pushHistory or git crucible push), sound, unblocked
// and complete.
func preReceive(ctx context.Context, stdin io.Reader, out *Outcome) error {
	svc, policy, updates, err := openPush(ctx, stdin, true)
	if err != nil || svc == nil {
		return err
	}
	defer svc.Close()
	auditor := enforce.NewAuditor(svc)
	refusals := 0
	for _, r := range updates {
		rules := policy.RulesFor(r.RemoteRef)
		if !r.Audited() || !rules.Complete {
			continue
		}
		var others []string // the other protected branches' tips
		for _, name := range policy.Protected {
			if ref := "refs/heads/" + name; ref != r.RemoteRef {
				if oid, err := svc.Repo.ReadRef(ref); err == nil && oid != "" {
					others = append(others, oid)
				}
			}
		}
		report, err := auditor.Audit(ctx, enforce.ReceiveRevs(r, others), rules)
		if err != nil {
			return err
		}
		if report.Errors() > 0 {
			out.say("error: git-crucible refuses %s:", r.RemoteRef)
			out.findings(report.Findings)
			refusals++
		}
	}
	if refusals > 0 {
		return &outcome.Refused{Err: fmt.Errorf("%d protected branch update(s) refused", refusals)}
	}
	return nil
}

// openPush is what pre-push and pre-receive start with: git's input read
// whole (git wants that, whatever the hook decides), the repository and
// the push policy. The service is nil when the policy is off.
func openPush(ctx context.Context, stdin io.Reader, receive bool) (*pipeline.Service, enforce.PushPolicy, []enforce.PushRef, error) {
	input, err := io.ReadAll(stdin)
	if err != nil {
		return nil, enforce.PushPolicy{}, nil, err
	}
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return nil, enforce.PushPolicy{}, nil, err
	}
	policy, err := enforce.ReadPushPolicy(ctx, repo)
	var bad *enforce.PolicyError
	if errors.As(err, &bad) {
		err = outcome.WithHints(err, "set it to gated, verified, complete or off")
	}
	if err != nil || policy.Off() {
		return nil, policy, nil, err
	}
	return pipeline.Open(repo), policy, enforce.ParsePushInput(string(input), receive), nil
}

// findings adds an audit's findings, one line each.
func (r *Outcome) findings(findings []enforce.Finding) {
	for _, f := range findings {
		r.say("  %s", f)
	}
}

// checkVerified refuses a push of r with a commit whose tree is not
// known-good in the gate cache: the newest result of the local index
// (verify-commits') must be a pass. Nothing runs: a tree not tested is
// refused, for verify-commits to test.
func checkVerified(ctx context.Context, repo *gitext.Repo, revs gitext.RevSet, r enforce.PushRef, out *Outcome) error {
	commits, err := repo.RevList(ctx, revs, gitext.NewestFirst)
	if err != nil {
		return err
	}
	trees := make([]string, len(commits))
	for i, c := range commits {
		trees[i] = c.Tree
	}
	known, err := results.Newest(results.IndexDir(repo.CrucibleDir()), trees)
	if err != nil {
		return err
	}
	bad := 0
	for _, c := range commits {
		switch res, ok := known[c.Tree]; {
		case !ok:
			out.say("  %s %s: not tested by the fast gate", c.ID[:12], c.Subject)
		case res.Status != results.Pass:
			out.say("  %s %s: the fast gate's last run says %s (exit %d)", c.ID[:12], c.Subject, res.Status, res.Exit)
		default:
			continue
		}
		bad++
	}
	if bad == 0 {
		return nil
	}
	return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("git-crucible refuses to push %s: %d commit(s) above not known-good (crucible.pushPolicy=verified)", r.RemoteRef, bad)},
		"test them with: git crucible verify-commits "+verifyRange(r),
		"pushing anyway (git push --no-verify) stays visible to git crucible verify")
}

// verifyRange is the verify-commits range of a push's commits, the branch
// checked out: since the remote's tip, or a base to name.
func verifyRange(r enforce.PushRef) string {
	if r.New() {
		return "<base>..HEAD"
	}
	return r.Remote[:12] + "..HEAD"
}
