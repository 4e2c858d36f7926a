package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/checkpoint"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/refs"
	"github.com/git-crucible/git-crucible/replay"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "resume a crashed pipeline from its last verified phase boundary, or run it again from one",
		ArgsUsage: "[<pipeline> | <scratch-dir> | <manifest.jsonl>]",
		Description: "Reads the pipeline (--pipeline or the argument, else the branch's active one; or a crucible\n" +
			"scratch or dispatch directory, or its manifest.jsonl) and finds where to resume: the first phase\n" +
			"not complete (every dispatch in it completed, or retried to completion, and every spec step of\n" +
			"it done), fallen back boundary by boundary past a phase whose completed work is missing (an\n" +
			"implementer's commit on the branch, a red team's or reviewer's output) and past a pruned\n" +
			"checkpoint. --from-phase N resumes at phase N's start instead (a warning when that redoes\n" +
			"verified work); --from-seq N at the start of dispatch N's phase. It warns on a pipeline started\n" +
			"more than 7 days ago, and advises smaller tasks after 3 resumes. A pipeline that is only a task\n" +
			"run (git crucible run) has no phases to replay and is refused: run it again to go on.\n" +
			"--dry-run prints the Replay Plan (crucible's format) and changes nothing. Otherwise replay\n" +
			"refuses on another branch than the pipeline's, asks (or takes --yes, which also approves the\n" +
			"design when the replay walks past the approval), restores the boundary's checkpoint after a\n" +
			"safety checkpoint (--current-tree: none, the tree as it is; a crucible directory needs it, and\n" +
			"is imported), records the replay with its Compression State Block (printed, and kept in the\n" +
			"chain as replay/<session>.md), reopens the ledger from that phase, and walks the pipeline from\n" +
			"there as 'git crucible build' does: new dispatches append to the same manifest with replay_of\n" +
			"and replay_session. --mutate swaps a template for this replay (each dispatch records it as its\n" +
			"mutation), --template-ref reads .crucible/templates from a revision, and --diff prints the\n" +
			"Replay Diff against the run replaced (see 'git crucible replay diff'). Each dispatch records its\n" +
			"template's sha256: a template the replayed phases would render from other text than the run\n" +
			"replaced did (a --mutate swap aside) is warned of. A replay killed on the\n" +
			"way goes on with 'git crucible build --resume', or is replayed again.\n" +
			"--archive puts a pipeline aside (a stale one, say) instead of replaying it: its ref is renamed to\n" +
			"refs/crucible/archive/<id> in one transaction, never deleted, and it is no longer active on its\n" +
			"branch. 'git crucible list --archived' shows it; fetch and sync do not bring it back from a clone\n" +
			"that still has it, and push does not send it.\n\n" + maxCostHelp + "\n" +
			"A replay stopped at its cap goes on with 'git crucible build --resume --max-cost N'.",
		Flags: commonFlags(
			&cli.IntFlag{Name: "from-phase", Usage: "resume at the start of phase `N` (1-4) instead of the detected one"},
			&cli.IntFlag{Name: "from-seq", Usage: "resume at the start of the phase of dispatch `N`"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the Replay Plan; change nothing"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "restore without asking; approve the design if the walk reaches the approval"},
			&cli.BoolFlag{Name: "current-tree", Usage: "resume on the work tree as it is, restoring no checkpoint (when none is left)"},
			&cli.StringSliceFlag{Name: "mutate", Usage: "dispatch template `ORIG` with the text of file REPL instead, as ORIG=REPL (repeatable)"},
			&cli.StringFlag{Name: "template-ref", Usage: "read the templates of .crucible/templates at git revision `REV`"},
			&cli.BoolFlag{Name: "diff", Usage: "after the replay, print its Replay Diff against the run it replaced"},
			&cli.BoolFlag{Name: "archive", Usage: "put the pipeline aside instead: rename its ref to refs/crucible/archive/<id>"},
			maxCostFlag,
		),
		Action: replayAction,
		Subcommands: []*cli.Command{{
			Name:      "diff",
			Usage:     "compare two runs of a pipeline: the Replay Diff",
			ArgsUsage: "<session> <session>",
			Description: "Compares two sessions of the pipeline (its id for the original run, replay-N for a replay)\n" +
				"over the phases both ran: dispatches, quality gate rounds, wall time and acceptance tests, each\n" +
				"dispatch beside the one it replays (their outputs compared line by line), and the code each\n" +
				"ended with (git diff --shortstat). --json prints crucible's replay-diff signal.",
			Flags: commonFlags(),
			Action: func(c *cli.Context) error {
				if c.NArg() != 2 {
					return usageErrorf("want two sessions: git crucible replay diff <session> <session>")
				}
				return withPipeline(c, func(s *session, id string) error {
					return replayDiff(c, s, id, c.Args().Get(0), c.Args().Get(1))
				})
			},
		}},
	}
}

// replayDiff prints the Replay Diff of sessions a and b of pipeline id.
func replayDiff(c *cli.Context, s *session, id, a, b string) error {
	events, err := s.svc.ChainEvents(c.Context, id)
	if err != nil {
		return err
	}
	d, err := compareSessions(c.Context, s, id, events, a, b)
	if err != nil {
		return err
	}
	if s.jsonOut() {
		return writeJSON(s.out(), d.Signal(), "")
	}
	_, err = s.out().Write(d.Markdown())
	return err
}

// compareSessions is the Replay Diff of sessions a and b of pipeline id,
// under the spec this work tree trusts.
func compareSessions(ctx context.Context, s *session, id string, events []pipeline.Event, a, b string) (*replay.Diff, error) {
	sp, err := buildSpec(s, "")
	if err != nil {
		return nil, err
	}
	return replay.CompareSessions(ctx, s.svc, id, events, sp, a, b)
}

func replayAction(c *cli.Context) error {
	if err := wantArgs(c, 1); err != nil {
		return err
	}
	if c.Bool("archive") {
		for _, f := range []string{"from-phase", "from-seq", "dry-run", "yes", "current-tree", "mutate", "template-ref", "diff", "max-cost"} {
			if c.IsSet(f) {
				return usageErrorf("--archive and --%s cannot be used together", f)
			}
		}
		return withRepo(c, func(s *session) error { return replayArchive(c, s) })
	}
	opts := replay.Options{FromPhase: ledger.Phase(c.Int("from-phase")), FromSeq: c.Int("from-seq"), CurrentTree: c.Bool("current-tree")}
	switch {
	case c.IsSet("from-phase") && c.IsSet("from-seq"):
		return usageErrorf("--from-phase and --from-seq cannot be used together")
	case c.IsSet("from-phase") && !opts.FromPhase.Valid():
		return usageErrorf("--from-phase %d: phases are 1 to 4", c.Int("from-phase"))
	case c.IsSet("from-seq") && opts.FromSeq < 1:
		return usageErrorf("--from-seq %d: dispatch seqs start at 1", c.Int("from-seq"))
	case c.NArg() == 1 && c.String("pipeline") != "":
		return usageErrorf("name the pipeline once: --pipeline or the argument")
	case !c.Bool("dry-run") && !c.Bool("yes") && !c.Bool("current-tree") && !isTerminal(os.Stdin):
		return withHints(usageErrorf("replay asks before it restores the work tree, and there is no terminal to ask on"),
			"pass --yes to replay without asking, or --dry-run to see what it would do")
	}
	if err := checkMaxCost(c); err != nil {
		return err
	}
	return withRepo(c, func(s *session) error {
		sp, err := buildSpec(s, "")
		if err != nil {
			return err
		}
		t, err := replayTemplates(c, s)
		if err != nil {
			return err
		}
		if c.Bool("dry-run") {
			return replayDryRun(c, s, sp, opts, t)
		}
		return replayRun(c, s, sp, opts, t)
	})
}

// templates are a replay's prompt templates: the built-in ones, those of
// --template-ref's revision, then --mutate's swaps.
type templates struct {
	set       *prompt.Set
	ref       string            // --template-ref's commit
	mutations map[string]string // template name -> "orig.md -> repl.md"
	swapped   map[string][]byte // template name -> the text swapped in
}

// list is the mutations, sorted.
func (t *templates) list() []string {
	out := []string{}
	for _, m := range t.mutations {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// replayTemplates reads --template-ref and --mutate, refusing a mutation
// that names no template or a replacement that cannot be read.
func replayTemplates(c *cli.Context, s *session) (*templates, error) {
	t := &templates{mutations: map[string]string{}, swapped: map[string][]byte{}}
	overrides := map[string]prompt.Override{}
	if rev := c.String("template-ref"); rev != "" {
		var err error
		t.ref, overrides, err = replay.TemplatesAtRevision(c.Context, s.svc.Repo, rev)
		var bad *replay.RevisionError
		if errors.As(err, &bad) {
			return nil, withHints(usageErrorf("%v", err), "name a revision: a commit, a branch or a tag")
		}
		if err != nil {
			return nil, err
		}
	}
	// --template-ref's revision replaces the work tree's templates.
	workTree := s.svc.Repo.WorkTree
	if t.ref != "" {
		workTree = ""
	}
	base, err := prompt.LoadWith(workTree, overrides)
	if err != nil {
		return nil, err
	}
	for _, m := range c.StringSlice("mutate") {
		orig, repl, ok := strings.Cut(m, "=")
		name := strings.TrimSuffix(orig, ".md")
		switch {
		case !ok || name == "" || repl == "":
			return nil, usageErrorf("--mutate %s: want ORIG=REPL, a template and a replacement file", m)
		case !base.Has(name):
			return nil, withHints(usageErrorf("--mutate %s: no template %q", m, name), "templates: "+strings.Join(base.Names(), ", "))
		}
		text, err := readFlagFile("--mutate "+m, repl, prompt.MaxTemplateBytes)
		var usage *usageError
		if errors.As(err, &usage) {
			return nil, err
		} else if err != nil {
			return nil, withHints(&refused{Err: fmt.Errorf("--mutate %s: %w", m, err)}, "REPL is the file holding the template to dispatch instead")
		}
		overrides[name] = prompt.Override{Source: repl, Text: string(text)}
		t.mutations[name] = name + ".md -> " + filepath.Base(repl)
		t.swapped[name] = text
	}
	if t.set, err = prompt.LoadWith(workTree, overrides); err != nil {
		return nil, &refused{Err: err}
	}
	return t, nil
}

// replayArchive renames the pipeline's ref into the archive, once no
// engine works on it.
func replayArchive(c *cli.Context, s *session) error {
	id, manifest, err := replaySource(c, s)
	if err != nil {
		return err
	}
	if manifest != "" {
		return usageErrorf("--archive puts a pipeline aside, not a crucible manifest")
	}
	st, _, err := s.svc.Load(c.Context, id)
	if err != nil {
		return err
	}
	// Holding the engine lock: a build appending beside the rename would
	// fail its next write.
	e, err := engine.Open(s.svc, id, nil, "")
	if err != nil {
		return err
	}
	defer e.Close()
	tip, err := s.svc.Store.Archive(c.Context, id, st.Branch)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out(), "Archived pipeline %s (%s): %s -> %s\n", id, tip[:12], refs.PipelineRef(id), refs.ArchiveRef(id))
	return nil
}

// replaySource resolves the argument: a pipeline, or a crucible manifest
// (its path, "" for a pipeline).
func replaySource(c *cli.Context, s *session) (id, manifest string, err error) {
	arg := c.Args().First()
	if arg != "" {
		if _, statErr := os.Stat(arg); statErr == nil {
			manifest, err = replay.Locate(arg)
			if err != nil {
				return "", "", withHints(err, "replay reads a pipeline id, a crucible scratch or dispatch directory, or a manifest.jsonl")
			}
			return "", manifest, nil
		}
		if refs.ValidateID(arg) != nil {
			return "", "", withHints(fmt.Errorf("'%s' is neither a pipeline nor a file", arg), "see: git crucible list")
		}
		s.pipeline = arg
	}
	id, err = s.pipelineID(c.Context)
	return id, "", err
}

// sourceError gives a manifest replay cannot read its hint.
func sourceError(err error) error {
	var bad *replay.MalformedError
	if errors.As(err, &bad) {
		return withHints(&refused{Err: err}, "replay does not resume from a manifest it cannot read whole: a lost line may be a dispatch in flight",
			"fix or remove that line, then run replay again")
	}
	if errors.Is(err, interop.ErrNoManifest) {
		return &refused{Err: err}
	}
	return err
}

// findResume reads the source (pipeline id, else the crucible manifest,
// not imported) and finds where to resume, warning of what it found on
// the way: the dry run's and the replay's first steps.
func findResume(c *cli.Context, s *session, sp *pipespec.Spec, id, manifest string, opts replay.Options, t *templates) (*replay.Found, error) {
	req := replay.Request{Pipeline: id, Spec: sp, Options: opts, Digest: t.set.Digest, Mutated: t.mutations}
	if manifest != "" {
		src, err := replay.FromManifest(manifest)
		if err != nil {
			return nil, sourceError(flagFileError(manifest, err))
		}
		req.Source = src
	}
	f, err := replay.Find(c.Context, s.svc, req)
	if f != nil {
		for _, w := range f.Warnings {
			s.warn("%s", w.Text)
			if w.Hint != "" {
				s.hint("%s", w.Hint)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

func replayDryRun(c *cli.Context, s *session, sp *pipespec.Spec, opts replay.Options, t *templates) error {
	id, manifest, err := replaySource(c, s)
	if err != nil {
		return err
	}
	f, err := findResume(c, s, sp, id, manifest, opts, t)
	if err != nil {
		return err
	}
	plan := &replay.Plan{Source: f.Source, Resume: f.Resume, Mutations: t.list()}
	if s.jsonOut() {
		return s.printJSON(plan)
	}
	_, err = s.out().Write(plan.Markdown())
	return err
}

func replayRun(c *cli.Context, s *session, sp *pipespec.Spec, opts replay.Options, t *templates) error {
	if s.svc.Repo.WorkTree == "" {
		return &refused{Err: errors.New("replay needs a work tree for its agents")}
	}
	id, manifest, err := replaySource(c, s)
	if err != nil {
		return err
	}
	agents, err := loadAgents(c, s, sp)
	if err != nil {
		return err
	}
	limit, err := budget(c, s, nil)
	if err != nil {
		return err
	}
	if manifest != "" {
		// Read whole first: an import skips the lines it cannot read.
		if _, err := replay.FromManifest(manifest); err != nil {
			return sourceError(flagFileError(manifest, err))
		}
		if !c.Bool("current-tree") {
			return withHints(&refused{Err: errors.New("a crucible run's checkpoints are in crucible's own shadow repository: replay has none to restore")},
				"replay it on the work tree as it is: git crucible replay --current-tree "+shellQuote(c.Args().First()))
		}
		r, err := interop.Import(c.Context, s.svc, filepath.Dir(manifest), s.pipeline)
		if err != nil {
			return err
		}
		id = r.Pipeline
		fmt.Fprintf(s.err(), "Imported %s as pipeline %s\n", manifest, id)
	}
	f, err := findResume(c, s, sp, id, "", opts, t)
	if err != nil {
		return err
	}
	src, r := f.Source, f.Resume
	if r.Phase == 0 {
		fmt.Fprintf(s.out(), "Pipeline %s: every phase is complete and verified; nothing to resume\n", id)
		s.hint("run it again from a phase with: git crucible replay --from-phase <N>")
		return nil
	}
	current := c.Bool("current-tree")
	e, recovered, err := engine.OpenReplay(c.Context, s.svc, id, agents, f, current)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Budget = limit
	// Said before the restore asks its question.
	for _, r := range recovered {
		fmt.Fprintf(s.err(), "Settled dispatch %d of the crashed run: %s\n", r.Seq, r.Outcome.Status)
	}
	begun, err := e.BeginReplay(c.Context, engine.Replay{Source: src, State: f.State, Resume: r, Spec: sp,
		Mutations: t.list(), TemplateRef: t.ref, Swapped: t.swapped, CurrentTree: current,
		Restore: func(context.Context) (string, error) { return restoreBoundary(c, s, r) }})
	if err != nil {
		return err
	}
	if len(begun.Settled) > 0 {
		fmt.Fprintf(s.err(), "Settled %d dispatches left in flight as interrupted: %v\n", len(begun.Settled), begun.Settled)
	}
	session, state := begun.Session, begun.State
	fmt.Fprintf(s.err(), "Replaying pipeline %s from the Phase %d boundary (%s) as %s\n", id, r.Phase, r.Boundary.Reason, session)
	if _, err := s.out().Write(state); err != nil {
		return err
	}
	err = walk(c, s, e, engine.WalkOptions{Spec: sp, Yes: c.Bool("yes"), Templates: t.set, Mutations: t.mutations,
		Command: "replay", Restored: !current})
	if err != nil || !c.Bool("diff") {
		return err
	}
	before := id
	if src.Replays > 0 {
		before = fmt.Sprintf("replay-%d", src.Replays)
	}
	return replayDiff(c, s, id, before, session)
}

// restoreBoundary restores the resume point's checkpoint and returns its id.
func restoreBoundary(c *cli.Context, s *session, r *replay.Resume) (string, error) {
	sh, err := checkpoint.Open(c.Context, s.svc.Repo)
	if err != nil {
		return "", err
	}
	cp, err := sh.Find(c.Context, r.Boundary.Checkpoint)
	if err != nil {
		return "", err
	}
	res, err := restoreTo(c, s, sh, cp, nil, c.Bool("yes"), false)
	if err != nil {
		return "", err
	}
	// Commits after the boundary leave the branch and changes are reset:
	// the safety checkpoint brings them back.
	fmt.Fprintln(s.err(), res.said(cp))
	fmt.Fprintf(s.err(), "Undo with: %s\n", res.undo)
	return cp.ID, nil
}
