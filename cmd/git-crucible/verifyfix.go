package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/verifycommits"
)

// backupName is the short name of a fix's backup branch.
func backupName(fr *verifycommits.FixReport) string {
	if fr == nil {
		return "backup-<branch>-pre-dispatch"
	}
	return strings.TrimPrefix(fr.Backup, "refs/heads/")
}

// printFix says what the fix did, before the verification's report.
func printFix(w io.Writer, fr *verifycommits.FixReport) {
	short := backupName(fr)
	if fr.BackupKept {
		fmt.Fprintf(w, "backup branch %s exists: kept as it was\n", short)
	} else if len(fr.Fixed) > 0 || fr.Escalated != nil {
		fmt.Fprintf(w, "backup branch %s made at the old tip\n", short)
	}
	for _, x := range fr.Fixed {
		fmt.Fprintf(w, "fixed %s -> %s %s (%s)\n", x.Old[:12], x.New[:12], x.Subject, plural(x.Rounds, "round"))
	}
}

// verifyFix is verify-commits --fix: the fix, then the verification of
// the stack it left; exit 2 when a commit could not be fixed.
func verifyFix(c *cli.Context, ctx context.Context, repo *gitext.Repo, store *verifycommits.Store, o verifycommits.Options) error {
	fixer, err := engine.NewFixer(ctx, repo, store)
	if err != nil {
		return err
	}
	defer fixer.Close()
	fr, err := store.Fix(ctx, o, fixer.Fix)
	if fr != nil {
		printRecovered(c, repo, fr.Recovered)
		printFix(c.App.Writer, fr)
	}
	if interrupted(ctx, c.Context) {
		return withHints(errors.New("interrupted: the commit being fixed is put back; fixes made before it are kept"),
			"the stack as it was before any fix is on "+backupName(fr))
	}
	if err != nil {
		return err
	}
	if b := fr.Escalated; b != nil {
		cliexit.Error(c.App.ErrWriter, "commit %s%s still fails the gate (exit %d) after %s by the fixer: %s",
			b.Commit.Commit[:12], attribution(b.Commit), b.Exit, plural(b.Round, "round"), b.Commit.Subject)
		cliexit.Hint(c.App.ErrWriter, "the branch is back where it was; the fixer's last attempt's output is in %s", b.Log)
		cliexit.Hint(c.App.ErrWriter, "fix it by hand, then run git crucible verify-commits again")
		return &silentExit{Code: exitEscalated}
	}
	return reportVerify(c, fr.Report)
}
