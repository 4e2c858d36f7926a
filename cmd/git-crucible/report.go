package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
	"github.com/git-crucible/git-crucible/replay"
	"github.com/git-crucible/git-crucible/runpage"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/verifycommits/results"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write a pipeline's report: one self-contained HTML page",
		ArgsUsage: "[<pipeline>]",
		Description: "Writes one HTML file that needs nothing else (no network, no script, no font: it opens from\n" +
			"disk and from a CI artifact) for a pipeline, a replay or a task run: the timeline of every\n" +
			"dispatch on lanes by role (and by slot for dispatches that ran at once), coloured by status,\n" +
			"with retries, interruptions and resumes, and the phase boundaries, approval pauses, escalations\n" +
			"and replays marked; each gate's and review loop's rounds (Fatal, Significant and Minor counts,\n" +
			"the score per round as a chart, the verdict, every finding's title), the ledger's transitions,\n" +
			"skips and acknowledgements; the cost by phase, role and task (estimates marked as such), the\n" +
			"wall time per phase and the work a replay preserved; the task graph, each commit with its\n" +
			"trailers and verify-commits' fast-gate result; each replay with --mutate against the run\n" +
			"before it; the decision journal and the handoffs. Text from agents is escaped and each string\n" +
			"bounded (4 KiB, a marker saying what was cut).\n\n" +
			"The pipeline is the argument, --pipeline, or the branch's active one. The file goes to\n" +
			"<git-common-dir>/crucible/reports/<id>.html unless -o names one, and its path is printed.\n" +
			"--open opens it with xdg-open (or open) when there is one. --json prints the model the page is\n" +
			"made from instead of writing it.",
		Flags: commonFlags(
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the page to `FILE`"},
			&cli.BoolFlag{Name: "open", Usage: "open the page with xdg-open or open"},
		),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 1); err != nil {
				return err
			}
			if arg := c.Args().First(); arg != "" {
				if c.String("pipeline") != "" && c.String("pipeline") != arg {
					return usageErrorf("the pipeline is named twice: %s and --pipeline %s", arg, c.String("pipeline"))
				}
				if err := refs.ValidateID(arg); err != nil {
					return usageErrorf("%v", err)
				}
			}
			return withRepo(c, func(s *session) error {
				if arg := c.Args().First(); arg != "" {
					s.pipeline = arg
				}
				id, err := s.pipelineID(c.Context)
				if err != nil {
					return err
				}
				m, err := reportModel(c.Context, s, id)
				if err != nil {
					return err
				}
				if s.jsonOut() {
					return s.printJSON(m)
				}
				page, err := runpage.Render(m)
				if err != nil {
					return err
				}
				path := c.String("output")
				if path == "" {
					path = filepath.Join(s.svc.Repo.CrucibleDir(), "reports", id+".html")
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := fsutil.WriteAtomic(path, page, 0o644); err != nil {
					return err
				}
				if abs, err := filepath.Abs(path); err == nil {
					path = abs
				}
				fmt.Fprintf(s.out(), "Report of pipeline %s: %s\n", id, path)
				if c.Bool("open") {
					openPage(s, path)
				}
				return nil
			})
		},
	}
}

// openPage opens path with the desktop's opener, when there is one: it
// hands the page to the browser and returns.
func openPage(s *session, path string) {
	for _, name := range []string{"xdg-open", "open"} {
		if prog, err := exec.LookPath(name); err == nil {
			if out, err := exec.Command(prog, path).CombinedOutput(); err != nil {
				s.warn("%s %s: %v %s", name, path, err, strings.TrimSpace(string(out)))
			}
			return
		}
	}
	s.warn("no xdg-open or open on PATH: open %s in a browser", path)
}

// reportHint is the line build, replay and run end with.
func reportHint(id string) string { return "Report: git crucible report " + id }

// reportModel reads what the report of pipeline id is made from.
func reportModel(ctx context.Context, s *session, id string) (*runpage.Model, error) {
	st, _, err := s.svc.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	events, err := s.svc.ChainEvents(ctx, id)
	if err != nil {
		return nil, err
	}
	cost, err := s.svc.Cost(ctx, id)
	if err != nil {
		return nil, err
	}
	now, err := pipeline.Now()
	if err != nil {
		return nil, err
	}
	read := func(path string) ([]byte, error) { return s.svc.ReadKept(ctx, id, path) }
	in := runpage.Input{ID: id, State: st, Events: events, Cost: cost, Now: now, Read: read,
		Generated: time.Now().UTC().Format(time.RFC3339)}
	if in.Commits, err = s.svc.Commits(ctx, st); err != nil {
		// The page goes on without them: its chain is what it is about.
		s.warn("the commits of pipeline %s on %s could not be read: %s", id, st.Branch, oneLine(err.Error()))
	}
	var trees []string
	for _, c := range in.Commits {
		trees = append(trees, c.Tree)
	}
	if len(trees) > 0 {
		known, err := results.Newest(results.IndexDir(s.svc.Repo.CrucibleDir()), trees)
		if err != nil {
			return nil, err
		}
		in.FastGates = map[string]runpage.FastGate{}
		for tree, r := range known {
			in.FastGates[tree] = runpage.FastGate{Status: string(r.Status), Exit: r.Exit, Time: r.Time.Format(time.RFC3339), DurationMS: r.Duration.Milliseconds()}
		}
	}
	in.Deps = dagDeps(s, st)
	if in.Diffs, err = replayDiffs(ctx, s, id, events); err != nil {
		return nil, err
	}
	return runpage.Build(in)
}

// dagDeps are the task run's edges, from its manifest in the work tree
// (nil when it cannot be read: the page shows levels without edges).
func dagDeps(s *session, st *pipeline.State) map[string][]string {
	d := st.View.DAG
	if d == nil || d.Manifest == "" || s.svc.Repo.WorkTree == "" {
		return nil
	}
	m, err := manifest.Load(filepath.Join(s.svc.Repo.WorkTree, d.Manifest))
	if err != nil {
		return nil
	}
	deps := map[string][]string{}
	for _, t := range m.Tasks {
		deps[t.ID] = t.DependsOn
	}
	return deps
}

// replayDiffs are the Replay Diffs of each replay that swapped templates,
// against the run before it.
func replayDiffs(ctx context.Context, s *session, id string, events []pipeline.Event) ([]*replay.Diff, error) {
	sessions, err := replay.Sessions(id, events)
	if err != nil {
		return nil, err
	}
	var out []*replay.Diff
	for i := 1; i < len(sessions); i++ {
		if len(sessions[i].Mutations) == 0 {
			continue
		}
		d, err := compareSessions(ctx, s, id, events, sessions[i-1].Name, sessions[i].Name)
		var bad *refused
		if errors.As(err, &bad) {
			// A spec this work tree does not trust: the page goes without.
			s.warn("no comparison of %s with %s: %s", sessions[i].Name, sessions[i-1].Name, oneLine(err.Error()))
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
