package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/checkpoint"
	"github.com/git-crucible/git-crucible/pipeline"
)

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "snapshot the working tree into a shadow repository, list and show snapshots",
		Description: "A checkpoint holds the whole working tree — tracked and untracked files, honouring\n" +
			".gitignore, .git/info/exclude and core.excludesFile — in a shadow repository of its own under\n" +
			".git/crucible/shadow, one per worktree: your index, refs and objects are never touched, and\n" +
			"git gc cannot prune it. Nested repositories are left out, with a warning. Files are kept byte\n" +
			"for byte: no .gitattributes filter (git-lfs), end-of-line or encoding conversion runs for them.\n" +
			"When a pipeline is active, the checkpoint is also recorded in it. A restore is undone by its\n" +
			"safety checkpoint.",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "snapshot the working tree and print the checkpoint's id (files over crucible.checkpoint.maxFileSize, default 100m, are left out and listed)",
				ArgsUsage: "<reason>",
				Flags: commonFlags(&cli.StringFlag{Name: "source", Value: "git-crucible",
					Usage: "the `SKILL` taking it (crucible's source column)"}),
				Action: checkpointCreate,
			},
			{
				Name:      "list",
				Usage:     "list checkpoints, newest first",
				ArgsUsage: " ",
				Flags:     commonFlags(),
				Action:    checkpointList,
			},
			{
				Name:      "restore",
				Usage:     "make the work tree match a checkpoint (undoable: a safety checkpoint is taken first)",
				ArgsUsage: "<checkpoint>",
				Description: "Refuses on another branch than the checkpoint's. Takes a pre-restore-safety checkpoint,\n" +
					"shows what will change and asks (or takes --yes), then makes the work tree match exactly:\n" +
					"files created since are removed (the safety checkpoint has them), ignored files are never\n" +
					"touched, nothing is written through a symbolic link or outside the work tree. Each file is\n" +
					"written beside its place and renamed in, so a kill never leaves one empty or half written.\n" +
					"The branch moves back to the checkpoint's HEAD (reflog kept) unless --keep-head or --path;\n" +
					"when that commit was garbage-collected, the files are restored and the branch stays (exit 128).\n" +
					"--path is relative to the top of the work tree; a path outside it or in .git is a usage\n" +
					"error (129).",
				Flags: commonFlags(
					&cli.StringSliceFlag{Name: "path", Usage: "restore only `PATH`, relative to the top of the work tree (repeatable)"},
					&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask"},
					&cli.BoolFlag{Name: "keep-head", Usage: "leave the branch where it is"},
				),
				Action: checkpointRestore,
			},
			{
				Name:      "diff",
				Usage:     "show what changed from a checkpoint to another, or to the work tree",
				ArgsUsage: "<checkpoint> [<checkpoint>]",
				Flags:     commonFlags(&cli.BoolFlag{Name: "stat", Usage: "show a diffstat instead of the patch"}),
				Action:    checkpointDiff,
			},
			{
				Name:      "prune",
				Usage:     "delete old checkpoints and free their objects",
				ArgsUsage: " ",
				Flags:     commonFlags(&cli.IntFlag{Name: "keep", Value: 50, Usage: "keep the newest `N` of each pipeline"}),
				Description: "Keeps the newest --keep checkpoints of each pipeline (and of checkpoints taken outside one),\n" +
					"and every pre-restore-safety checkpoint of the last 7 days; deletes the rest and runs gc in\n" +
					"the shadow repository so that their objects are freed.",
				Action: checkpointPrune,
			},
			{
				Name:      "show",
				Usage:     "show a checkpoint (by id prefix, or the newest with a reason) and its files",
				ArgsUsage: "<checkpoint>",
				Flags:     commonFlags(),
				Action:    checkpointShow,
			},
		},
	}
}

// openShadow opens the worktree's shadow; on a terminal, its long steps
// show on stderr, on one line that the command's own output then replaces.
func openShadow(ctx context.Context, s *session) (*checkpoint.Shadow, error) {
	sh, err := checkpoint.Open(ctx, s.svc.Repo)
	if err == nil && isTerminal(s.err()) {
		sh.Progress = func(step string) { fmt.Fprintf(s.err(), "\r\x1b[Kcheckpoint: %s...", step) }
	}
	return sh, err
}

// endProgress clears the progress line, if one was drawn.
func endProgress(s *session) {
	if isTerminal(s.err()) {
		fmt.Fprint(s.err(), "\r\x1b[K")
	}
}

// findCheckpoint opens the shadow and finds a checkpoint by id prefix or reason.
func findCheckpoint(ctx context.Context, s *session, name string) (*checkpoint.Shadow, *checkpoint.Checkpoint, error) {
	sh, err := openShadow(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	cp, err := sh.Find(ctx, name)
	if err != nil {
		return nil, nil, &refused{Err: err}
	}
	return sh, cp, nil
}

func checkpointCreate(c *cli.Context) error {
	if c.NArg() != 1 || strings.TrimSpace(c.Args().First()) == "" {
		return usageErrorf("want exactly one argument, the reason (pre-wave-3, pre-code-review, ...)")
	}
	reason := oneLine(c.Args().First())
	return withRepo(c, func(s *session) error {
		// Recorded in the pipeline when one is active (or named).
		id, err := s.pipelineID(c.Context)
		var none *pipeline.NoActiveError
		if errors.As(err, &none) && s.pipeline == "" {
			id, err = "", nil
		}
		if err != nil {
			return err
		}
		sh, err := openShadow(c.Context, s)
		if err != nil {
			return err
		}
		r, err := sh.Create(c.Context, reason, c.String("source"), id)
		endProgress(s)
		if err != nil {
			return err
		}
		for _, p := range r.Skipped {
			s.warn("%s is a nested repository; its files are not in the checkpoint", p)
		}
		for _, p := range r.TooLarge {
			s.warn("%s is over crucible.checkpoint.maxFileSize; left out", p)
		}
		recorded := ""
		if id != "" && !r.Unchanged {
			if _, _, err := s.svc.Record(c.Context, id, pipeline.Draft{Type: pipeline.TypeCheckpoint, Data: pipeline.CheckpointData{
				ID: r.ID, Reason: reason, Source: r.Source, Branch: r.Branch, Head: r.Head}}); err != nil {
				return err
			}
			recorded = id
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"checkpoint": r, "pipeline": recorded})
		}
		if r.Unchanged {
			fmt.Fprintf(s.err(), "Nothing changed since checkpoint %s (%s)\n", r.ID[:12], r.Reason)
		}
		fmt.Fprintln(s.out(), r.ID[:12])
		return nil
	})
}

func checkpointList(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	return withRepo(c, func(s *session) error {
		sh, err := openShadow(c.Context, s)
		if err != nil {
			return err
		}
		list, err := sh.List(c.Context)
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(list)
		}
		for _, cp := range list {
			fmt.Fprintf(s.out(), "%s  %s  %-22s %-14s %s\n", cp.ID[:12], cp.Time, cp.Reason, cp.Source, cp.Branch)
		}
		return nil
	})
}

func checkpointShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErrorf("want exactly one argument, the checkpoint (id prefix or reason)")
	}
	return withRepo(c, func(s *session) error {
		sh, cp, err := findCheckpoint(c.Context, s, c.Args().First())
		if err != nil {
			return err
		}
		files, err := sh.Files(c.Context, cp)
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"checkpoint": cp, "files": files})
		}
		fmt.Fprintf(s.out(), "Checkpoint: %s\nReason:     %s\nSource:     %s\nBranch:     %s\nHead:       %s\nTime:       %s\nFiles:      %d\n\n",
			cp.ID, cp.Reason, cp.Source, cp.Branch, cp.Head, cp.Time, len(files))
		for _, f := range files {
			fmt.Fprintf(s.out(), "  %s\n", f)
		}
		return nil
	})
}

func checkpointRestore(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErrorf("want exactly one argument, the checkpoint (id prefix or reason)")
	}
	if !c.Bool("yes") && !isTerminal(os.Stdin) {
		return withHints(usageErrorf("restore asks before it changes the work tree, and there is no terminal to ask on"),
			"pass --yes to restore without asking")
	}
	for _, p := range c.StringSlice("path") {
		if err := checkpoint.CheckPath(p); err != nil {
			return usageErrorf("%v", err)
		}
	}
	return withRepo(c, func(s *session) error {
		sh, cp, err := findCheckpoint(c.Context, s, c.Args().First())
		if err != nil {
			return err
		}
		r, err := restoreTo(c, s, sh, cp, c.StringSlice("path"), c.Bool("yes"), c.Bool("keep-head"))
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"checkpoint": cp, "safety": r.safety.Checkpoint, "changes": r.changes, "refused": r.refused})
		}
		fmt.Fprintln(s.out(), r.said(cp))
		fmt.Fprintf(s.out(), "Undo with: %s\n", r.undo)
		return nil
	})
}

// said is the line that says what restore r of cp did.
func (r *restored) said(cp *checkpoint.Checkpoint) string {
	return fmt.Sprintf("Restored checkpoint %s (%s): %s changed", cp.ID[:12], cp.Reason, plural(len(r.changes), "path"))
}

// restored is what restoreTo did.
type restored struct {
	safety  *checkpoint.Result
	changes []checkpoint.Change
	refused []string // paths not removed
	undo    string   // the command that undoes it
}

// restoreTo makes the work tree match cp, after a safety checkpoint and
// the user's yes (asked on stderr unless yes), and moves the branch back to
// cp's HEAD unless keepHead or paths: checkpoint restore's and replay's.
func restoreTo(c *cli.Context, s *session, sh *checkpoint.Shadow, cp *checkpoint.Checkpoint, paths []string, yes, keepHead bool) (*restored, error) {
	safety, changes, err := sh.Plan(c.Context, cp, paths)
	endProgress(s)
	var branch *checkpoint.BranchError
	if errors.As(err, &branch) {
		return nil, &refused{Err: err}
	}
	if err != nil {
		return nil, err
	}
	r := &restored{safety: safety, changes: changes,
		undo: fmt.Sprintf("git crucible checkpoint restore %s --yes --keep-head", safety.ID[:12])}
	fmt.Fprintf(s.err(), "About to restore working directory to checkpoint %s (taken at %s, branch %s). This will reset uncommitted changes.\n",
		cp.Reason, cp.Time, cp.Branch)
	for _, ch := range changes {
		fmt.Fprintf(s.err(), "  %s %s\n", ch.Op, ch.Path)
	}
	moves := !keepHead && len(paths) == 0 && cp.Head != "" && cp.Head != safety.Head
	if moves {
		// A head gone (gc) lists nothing here; the branch's move says why below.
		left, _ := sh.CommitsLeaving(c.Context, safety.Head, cp.Head)
		if len(left) > 0 {
			fmt.Fprintf(s.err(), "The branch moves back to %s, leaving %s behind (the safety checkpoint keeps them; --keep-head leaves the branch):\n",
				cp.Head[:12], plural(len(left), "commit"))
			for i := range left {
				l := left[len(left)-1-i] // newest first, as git log lists them
				fmt.Fprintf(s.err(), "  %s %s\n", l.Abbrev, l.Subject)
			}
		}
	}
	if !yes {
		fmt.Fprint(s.err(), "Proceed? [yes / no] ")
		var answer string
		fmt.Fscanln(c.App.Reader, &answer)
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "yes" && a != "y" {
			return nil, &refused{Err: errors.New("restore cancelled; nothing changed")}
		}
	}
	r.refused, err = sh.Apply(c.Context, cp, changes)
	for _, p := range r.refused {
		s.warn("not removed: %s", p)
	}
	if err != nil {
		return nil, withHints(err, "the safety checkpoint undoes what was done: "+r.undo)
	}
	if keepHead || len(paths) > 0 {
		return r, nil
	}
	var gone *checkpoint.HeadGoneError
	if err := sh.ResetBranch(c.Context, safety.Head, cp.Head); errors.As(err, &gone) {
		return nil, withHints(fmt.Errorf("the work tree is restored to checkpoint %s (%s, %s changed), but the branch did not move: %w",
			cp.ID[:12], cp.Reason, plural(len(changes), "path"), gone), "the branch stays where it was; undo the restore with: "+r.undo)
	} else if err != nil { // a *checkpoint.KilledRestoreError adds its own hint
		return nil, withHints(err, "the work tree is restored; the branch did not move")
	}
	if moves {
		// Restoring the safety checkpoint moves the branch back too.
		r.undo = fmt.Sprintf("git crucible checkpoint restore %s --yes", safety.ID[:12])
	}
	return r, nil
}

func checkpointPrune(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	if c.Int("keep") < 1 {
		return usageErrorf("--keep must be at least 1")
	}
	return withRepo(c, func(s *session) error {
		sh, err := openShadow(c.Context, s)
		if err != nil {
			return err
		}
		gone, err := sh.Prune(c.Context, c.Int("keep"), 7*24*time.Hour)
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"deleted": gone})
		}
		for _, g := range gone {
			fmt.Fprintf(s.out(), "deleted %s  %s  %s\n", g.ID[:12], g.Time, g.Reason)
		}
		fmt.Fprintf(s.err(), "Pruned %d checkpoint(s)\n", len(gone))
		return nil
	})
}

func checkpointDiff(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageErrorf("want one or two checkpoints")
	}
	return withRepo(c, func(s *session) error {
		sh, a, err := findCheckpoint(c.Context, s, c.Args().Get(0))
		if err != nil {
			return err
		}
		var b *checkpoint.Checkpoint
		if c.NArg() == 2 {
			if b, err = sh.Find(c.Context, c.Args().Get(1)); err != nil {
				return &refused{Err: err}
			}
		}
		out, err := sh.Diff(c.Context, a, b, c.Bool("stat"))
		if err != nil {
			return err
		}
		if s.jsonOut() {
			return s.printJSON(map[string]any{"from": a, "to": b, "diff": string(out)})
		}
		_, err = s.out().Write(out)
		return err
	})
}
