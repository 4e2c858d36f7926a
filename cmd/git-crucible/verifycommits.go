package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/verifycommits"
)

func verifyCommitsCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify-commits",
		Usage:     "run a fast gate at every commit of a range, cached by tree",
		ArgsUsage: "[<range>]",
		Description: "Runs the gate at each commit of <range> (BASE..HEAD, BASE.. or BASE; default: the commits since\n" +
			"the branch's upstream, else since the baseline of the pipeline active on the branch), so that a\n" +
			"commit that only builds because of a later one is caught and named. The commits are those 'git\n" +
			"rev-list BASE..HEAD' lists, parents first: merges too (a merge's tree is gated like any other),\n" +
			"and the commits a merged topic brings from before BASE. BASE must be an ancestor of HEAD.\n\n" +
			"The pass that decides is a real 'git rebase -i' over the range, the user's rebase settings pinned\n" +
			"off: every commit is picked (a merge: merge -C) onto its own parents, and after each one the cache\n" +
			"cannot answer an exec line runs the gate at the top of the work tree (as 'git rebase --exec' does:\n" +
			"sh, the work tree clean). Every commit keeps its parents, so the rebase only fast-forwards and the\n" +
			"branch is left exactly as it was, also when a commit fails: the rebase stops there and is aborted.\n" +
			"--keep-going tests every commit. --dry-run says which commits the gate would run at and which the\n" +
			"cache answers.\n\n" +
			"The gate: --exec CMD; --gate NAME (git config crucible.gate.<name>, or [gates] in\n" +
			".crucible/gates.toml); else the fast gate of git config crucible.fastGate or of fast-gate in\n" +
			".crucible/gates.toml. no-fast-gate (git config crucible.noFastGate '<reason>', or\n" +
			"no-fast-gate = true with a reason in the file) runs the project's full test command instead\n" +
			"(crucible.test). Stubs (true, :, echo ..., an empty command) are refused, and so is no gate at\n" +
			"all. The tracked .crucible/gates.toml is read only after 'git crucible trust .crucible/gates.toml'.\n\n" +
			"Results are cached by (tree, gate command, toolchain fingerprint: the output of the command\n" +
			"crucible.gateToolchain or toolchain in the file names, e.g. 'go version') as notes on\n" +
			"refs/notes/crucible/gates and in a local index under the git dir: a known-good tree never runs\n" +
			"again, nor does a known-bad one unless --retest; --force runs everything again. A reworded or\n" +
			"reordered commit keeps its tree, and so its result; with every tree known, no rebase runs. The\n" +
			"gate exits 125 to skip a commit it cannot test, as for git bisect run. The output of the last\n" +
			"run on each tree is kept under <git-common-dir>/crucible/gates/logs/. -j N first runs the gate at\n" +
			"the uncached commits in N detached worktrees under <git-common-dir>/crucible/gates/slots/ (the\n" +
			"same paths every run, so build caches stay warm), each taking a contiguous stretch of the range\n" +
			"in order, as a serial run would, and none past the first failure unless --keep-going; the rebase\n" +
			"then only replays hits.\n\n" +
			"A failure names the commit and the task and dispatch seq that made it (Crucible-Task and\n" +
			"Crucible-Seq trailers, or the provenance note).\n\n" +
			"--fix repairs the failing commits in place, the earliest first. The branch's tip is kept first on\n" +
			"backup-<branch>-pre-dispatch (never recreated: one that exists is kept, and said so); then a\n" +
			"rebase stops at edit on the failing commit, the agent of the role fixer (see git crucible agents)\n" +
			"gets the fixer prompt with the gate's failure and output, its change is amended into the commit\n" +
			"(message and trailers kept, provenance notes carried over), the gate runs again, and the rebase\n" +
			"goes on: up to 3 rounds a commit, then it escalates and the branch is put back where it was. With\n" +
			"a pipeline active on the branch each fix is a dispatch of its engine, in its manifest. A range\n" +
			"that holds a merge is refused by --fix, which rewrites a line of commits.\n\n" +
			"A run killed mid-way leaves its rebase under way: --abort puts HEAD and the branch back as they\n" +
			"were and keeps the results it had; --continue does the same, then runs it again from the cache;\n" +
			"a plain run does the same, then runs as asked. Each first ends what the killed run left running\n" +
			"(its rebase and gate, in a process group the run records before git starts) and waits for it to\n" +
			"end: the gate is stopped and the rebase stops at its next step, as an abort or an amend is left\n" +
			"to finish; git itself is never signalled, which could leave its lock files or half its rebase's\n" +
			"state. A --fix whose rebase finished keeps its fix. What it cannot vouch for it leaves as it is\n" +
			"and says what to run. So does a rebase git could not abort (a file in the way), once the file is\n" +
			"moved. Ctrl-C and SIGTERM stop the gate with the rebase. While a build runs on the branch,\n" +
			"verify-commits is refused: the build checks each task's commit itself.\n\n" +
			"EXIT STATUS: 0 every commit passed or was skipped; 1 a commit failed, or the gate, the range or\n" +
			"the work tree was refused; 2 --fix escalated: a commit still failed after its rounds; 128 not a\n" +
			"git repository, no gate, or git failed; 129 usage error.",
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "gate", Usage: "run the gate named `NAME` in config"},
			&cli.StringFlag{Name: "exec", Usage: "run `CMD` (with sh -c) as the gate"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "prefill the cache in `N` worktrees at once"},
			&cli.BoolFlag{Name: "keep-going", Usage: "test every commit instead of stopping at the first failure"},
			&cli.BoolFlag{Name: "retest", Usage: "run the gate again where it failed or skipped before"},
			&cli.BoolFlag{Name: "force", Usage: "run the gate at every commit, whatever is cached"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what is cached and what would run; run nothing"},
			&cli.BoolFlag{Name: "fix", Usage: "repair each failing commit in place with the fixer agent"},
			&cli.BoolFlag{Name: "abort", Usage: "put back a run that was killed mid-way, keeping what it tested"},
			&cli.BoolFlag{Name: "continue", Usage: "put back a run that was killed mid-way and run it again from the cache"},
		},
		Action: verifyCommitsAction,
	}
}

func verifyCommitsAction(c *cli.Context) error {
	if err := wantArgs(c, 1); err != nil {
		return err
	}
	if c.IsSet("gate") && c.IsSet("exec") {
		return usageErrorf("--gate and --exec cannot be used together")
	}
	if c.Bool("retest") && c.Bool("force") {
		return usageErrorf("--retest and --force cannot be used together")
	}
	if c.Int("jobs") < 1 {
		return usageErrorf("-j wants a number of jobs, 1 or more")
	}
	recovering := c.Bool("abort") || c.Bool("continue")
	if c.Bool("abort") && c.Bool("continue") {
		return usageErrorf("--abort and --continue cannot be used together")
	}
	if c.Bool("fix") && (c.Bool("keep-going") || c.Bool("dry-run")) {
		return usageErrorf("--fix stops at each failing commit: it cannot be used with --keep-going or --dry-run")
	}
	if recovering && (c.NArg() > 0 || c.IsSet("gate") || c.IsSet("exec") || c.Bool("retest") || c.Bool("force") || c.Bool("keep-going") || c.Bool("dry-run") || c.Bool("fix")) {
		return usageErrorf("--abort and --continue take no range and no gate: they go on with the interrupted run's")
	}
	ctx := c.Context
	repo, err := gitext.Discover(ctx)
	if err != nil {
		return err
	}
	if repo.WorkTree == "" {
		return fmt.Errorf("'git crucible verify-commits' needs a work tree")
	}
	flushNotes(ctx, repo, c.App.ErrWriter) // --fix rebases, carrying notes over
	if err := verifycommits.RefuseDuringBuild(ctx, repo); err != nil {
		return err
	}
	store := verifycommits.Open(repo)
	var o verifycommits.Options
	if recovering {
		in, err := store.Recover(ctx)
		if err != nil {
			return err
		}
		if c.Bool("abort") {
			engine.RemoveFixerDirs(repo)
			fmt.Fprintf(c.App.Writer, "Aborted the interrupted run: %s\n", recovered(in))
			return nil
		}
		printRecovered(c, repo, in)
		o = in.Options
	} else if o, err = verifyOptions(c, repo); err != nil {
		return err
	}
	o.Jobs = c.Int("jobs")
	// Ctrl-C and SIGTERM stop the gate and abort the rebase, which puts
	// the branch back; what was tested is kept.
	ctx, stop := interruptible(ctx)
	defer stop()
	if c.Bool("fix") {
		return verifyFix(c, ctx, repo, store, o)
	}
	rep, err := store.Verify(ctx, o)
	if rep != nil {
		printRecovered(c, repo, rep.Recovered)
	}
	if interrupted(ctx, c.Context) {
		return errors.New("interrupted: the branch is as it was; the results so far are kept")
	}
	if err != nil {
		return err
	}
	return reportVerify(c, rep)
}

// recovered says where a killed run's recovery left HEAD.
func recovered(in *verifycommits.Interrupted) string {
	where := in.Head[:12]
	if in.Branch != "" {
		where = strings.TrimPrefix(in.Branch, "refs/heads/") + " at " + where
	}
	return fmt.Sprintf("HEAD is back on %s; %d results it had are kept", where, in.Kept)
}

// printRecovered says on stderr that a killed run was put back, if one
// was, and removes what its fixer left.
func printRecovered(c *cli.Context, repo *gitext.Repo, in *verifycommits.Interrupted) {
	if in != nil {
		engine.RemoveFixerDirs(repo)
		fmt.Fprintf(c.App.ErrWriter, "Recovered the interrupted run: %s\n", recovered(in))
	}
}

// reportVerify prints a verification and exits 1 when a commit failed.
func reportVerify(c *cli.Context, rep *verifycommits.Report) error {
	w := c.App.Writer
	if c.Bool("json") {
		if err := writeJSON(w, rep, "  "); err != nil {
			return err
		}
	} else {
		printVerifyCommits(w, rep)
	}
	if failed := rep.Failed(); len(failed) > 0 {
		for _, f := range failed {
			cliexit.Error(c.App.ErrWriter, "commit %s%s fails the gate (exit %d): %s", f.Commit[:12], attribution(f), f.Exit, f.Subject)
			if f.Log != "" {
				cliexit.Hint(c.App.ErrWriter, "its output is in %s", f.Log)
			}
		}
		return &silentExit{Code: exitRefused}
	}
	return nil
}

// verifyOptions is the run the command line asks for.
func verifyOptions(c *cli.Context, repo *gitext.Repo) (verifycommits.Options, error) {
	ctx := c.Context
	base, err := verifycommits.Base(ctx, repo, c.Args().First())
	if err != nil {
		return verifycommits.Options{}, err
	}
	gate, err := verifycommits.Resolve(ctx, repo, verifycommits.Request{Exec: c.String("exec"), Name: c.String("gate"),
		Verify: func() (string, error) {
			cfg, err := agent.Load(ctx, repo)
			if err != nil {
				return "", err
			}
			return cfg.Test, nil
		}})
	if err != nil {
		return verifycommits.Options{}, err
	}
	fingerprint, err := fastgate.Fingerprint(ctx, repo.WorkTree, gate.Toolchain)
	if err != nil {
		return verifycommits.Options{}, err
	}
	mode := verifycommits.UseCache
	switch {
	case c.Bool("retest"):
		mode = verifycommits.Retest
	case c.Bool("force"):
		mode = verifycommits.Force
	}
	return verifycommits.Options{Base: base, Gate: gate, Spec: fastgate.Identity(gate.Command, fingerprint),
		Mode: mode, KeepGoing: c.Bool("keep-going"), DryRun: c.Bool("dry-run")}, nil
}

// attribution names the task and seq that made a commit, when known.
func attribution(c verifycommits.Commit) string {
	var parts []string
	if c.Task != "" {
		parts = append(parts, "task "+c.Task)
	}
	if c.Seq != "" {
		parts = append(parts, "seq "+c.Seq)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func printVerifyCommits(w io.Writer, rep *verifycommits.Report) {
	fmt.Fprintf(w, "gate %s: %s\n", rep.Gate, rep.Command)
	for _, c := range rep.Commits {
		status, note := string(c.Status), ""
		switch {
		case c.Run:
			status, note = "run", " (not cached)"
		case c.Status == "":
			status, note = "-", " (not reached)"
		case c.Cached:
			note = " (cached)"
		}
		fmt.Fprintf(w, "%-4s %s %s%s%s\n", status, c.Commit[:12], c.Subject, attribution(c), note)
	}
	if rep.DryRun {
		fmt.Fprintf(w, "%s: would run the gate at %s, %d answered from the cache\n", plural(len(rep.Commits), "commit"), plural(rep.WouldRun, "commit"), rep.Cached)
		return
	}
	fmt.Fprintf(w, "%s: %s, %d cached\n", plural(len(rep.Commits), "commit"), plural(rep.Ran, "gate run"), rep.Cached)
}

// plural is "1 commit", "2 commits".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
