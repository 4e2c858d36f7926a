package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/refs"
	"github.com/git-crucible/git-crucible/remote"
)

const remoteHelp = "<remote> is a configured remote name; it defaults to the current branch's upstream remote,\n" +
	"else 'origin'. Everything goes through the git CLI, so ssh config and credential helpers apply,\n" +
	"and nothing here changes what a plain `git push` or `git fetch` does.\n\n" +
	"Exit status: 0 done; 1 refused (a fetched or outgoing chain failed verification, the remote moved\n" +
	"and retries ran out); 128 git failed (e.g. the remote cannot be reached); 129 usage."

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "fetch pipeline history from a remote and take it in",
		ArgsUsage: "[<remote>]",
		Description: "Fetches the remote's pipeline chains and provenance notes into refs/crucible-remote/<remote>/,\n" +
			"never straight over local refs. Each chain that moved is verified (`git crucible verify`); a\n" +
			"sound one is taken in: created, fast-forwarded, or merged with the local chain when both clones\n" +
			"wrote to it (union of events; gate outcomes the clones closed differently become conflicts for\n" +
			"`git crucible resolve`). A chain that fails verification stays in the tracking namespace only.\n" +
			"A new open pipeline becomes active on its branch when none is active there. Notes are merged\n" +
			"line by line, losing none.\n\n" + remoteHelp,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			return withSyncer(c, 1, func(s *session, x *remote.Syncer, name string) error {
				report, err := x.Fetch(c.Context, name)
				if err != nil {
					return remoteError(s, err, name)
				}
				if s.jsonOut() {
					if err := s.printJSON(report); err != nil {
						return err
					}
				} else {
					printFetch(s.out(), report)
				}
				return rejectedError(report, "")
			})
		},
	}
}

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "push pipeline history to a remote",
		ArgsUsage: "[<remote> [<branch>]]",
		Description: "Pushes the pipeline chains (those whose branch is <branch>, or all) and the provenance notes\n" +
			"in one atomic push that is never forced. When the remote has history this clone has not taken\n" +
			"in, nothing is pushed: run `git crucible sync`. Each chain is verified first (only what came after\n" +
			"the last commit found sound is replayed); when one fails, nothing is pushed and it is named.\n" +
			"This clone's active-pipeline markers stay local.\n\n" +
			remoteHelp,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			return withSyncer(c, 2, func(s *session, x *remote.Syncer, name string) error {
				report, err := x.Push(c.Context, name, remote.Selection{Branch: c.Args().Get(1)})
				if err != nil {
					return remoteError(s, err, name)
				}
				if s.jsonOut() {
					return s.printJSON(report)
				}
				printPush(s.out(), report)
				return nil
			})
		},
	}
}

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "fetch, merge and push pipeline history",
		ArgsUsage: "[<remote> [<branch>]]",
		Description: "`git crucible fetch`, then `git crucible push`; when the remote moves in between, or another\n" +
			"sync wins a race for the same ref, it starts over after a random pause that grows, for up to two minutes.\n" +
			"Two clones that both wrote to a pipeline converge by syncing in turn. A fetched chain that\n" +
			"cannot be taken in is left out of the push and named (exit 1); the others still go.\n\n" +
			remoteHelp,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			return withSyncer(c, 2, func(s *session, x *remote.Syncer, name string) error {
				report, err := x.Sync(c.Context, name, remote.Selection{Branch: c.Args().Get(1)})
				if err != nil && !errors.Is(err, remote.ErrRejected) {
					return remoteError(s, err, name)
				}
				if s.jsonOut() {
					if err := s.printJSON(report); err != nil {
						return err
					}
				} else {
					printFetch(s.out(), report.Fetch)
					if report.Push != nil {
						printPush(s.out(), report.Push)
					}
				}
				if report.Push == nil {
					return rejectedError(report.Fetch, "; nothing was pushed")
				}
				return rejectedError(report.Fetch, "")
			})
		},
	}
}

// withSyncer opens the repository and names the remote: the first
// argument, else the branch's upstream remote, else origin.
func withSyncer(c *cli.Context, maxArgs int, fn func(*session, *remote.Syncer, string) error) error {
	if err := wantArgs(c, maxArgs); err != nil {
		return err
	}
	return withRepo(c, func(s *session) error {
		name := c.Args().First()
		if name == "" {
			var err error
			if name, err = remote.DefaultName(c.Context, s.svc.Repo); err != nil {
				return err
			}
		}
		if err := remote.CheckName(name); err != nil {
			var overlap *remote.OverlapError
			if errors.As(err, &overlap) {
				return withHints(&refused{Err: err}, fmt.Sprintf("rename it, e.g.: git remote rename '%s' '%s'",
					name, strings.ReplaceAll(name, "/", "-")))
			}
			return usageErrorf("%v", err)
		}
		x := &remote.Syncer{Svc: s.svc}
		if isTerminal(s.err()) {
			x.Progress = s.err()
		}
		return fn(s, x, name)
	})
}

func remoteError(s *session, err error, name string) error {
	var chain *remote.ChainError
	switch {
	case errors.Is(err, remote.ErrRemoteMoved):
		return withHints(&refused{Err: err}, "take it in and push again with: git crucible sync "+name)
	case errors.As(err, &chain):
		for _, p := range chain.Problems {
			s.error("%s", p)
		}
		return withHints(&refused{Err: err}, "see: git crucible verify "+strings.Join(chain.IDs(), " "))
	}
	return err
}

// rejectedError makes a fetch that refused some chains exit 1.
func rejectedError(r *remote.FetchReport, more string) error {
	if ids := r.Rejected(); len(ids) > 0 {
		return withHints(&refused{Err: fmt.Errorf("fetched pipeline chain(s) could not be taken in: %s%s", strings.Join(ids, ", "), more)},
			"they stay under "+remote.TrackingPrefix(r.Remote)+"; ask the clone that wrote them to run: git crucible verify --all")
	}
	return nil
}

func printFetch(w io.Writer, r *remote.FetchReport) {
	counts := map[string]int{}
	for _, p := range r.Pipelines {
		switch {
		case len(p.Rejected) > 0:
			fmt.Fprintf(w, "rejected %s: not taken in\n", p.ID)
			for _, why := range p.Rejected {
				fmt.Fprintf(w, "  %s\n", why)
			}
		case p.Outcome == refs.UpToDate || p.Outcome == refs.Archived:
			counts[string(p.Outcome)]++
		default:
			counts[string(p.Outcome)]++
			fmt.Fprintf(w, "%-12s %s", p.Outcome, p.ID)
			if p.Activated != "" {
				fmt.Fprintf(w, " (now active on '%s')", p.Activated)
			}
			if p.Conflicts > 0 {
				fmt.Fprintf(w, " (%d conflict(s): see git crucible status --pipeline %s)", p.Conflicts, p.ID)
			}
			fmt.Fprintln(w)
			for _, f := range p.FileConflicts {
				fmt.Fprintf(w, "  kept ours for %s (both clones wrote it)\n", f)
			}
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "merged       %s\n", n)
	}
	fmt.Fprintf(w, "From %s: %d pipeline(s), %d up to date", r.Remote, len(r.Pipelines), counts[string(refs.UpToDate)])
	if n := counts[string(refs.Archived)]; n > 0 {
		fmt.Fprintf(w, ", %d archived here (not taken in)", n)
	}
	fmt.Fprintln(w)
}

func printPush(w io.Writer, r *remote.PushReport) {
	for _, ref := range r.Pushed {
		fmt.Fprintf(w, "pushed       %s\n", ref)
	}
	fmt.Fprintf(w, "To %s: %d ref(s) pushed, %d up to date\n", r.Remote, len(r.Pushed), len(r.Same))
}
