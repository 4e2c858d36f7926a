package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/leftover"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
	"github.com/git-crucible/git-crucible/replay"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the pipeline: phase, health, gates, recent events, tasks, compression state",
		ArgsUsage: " ",
		Description: "Health follows crucible's one-way GREEN -> YELLOW -> RED machine within a phase, reset when a\n" +
			"later phase begins: YELLOW on a gate's round 5+, a review loop's round 3+ or a retry; RED on\n" +
			"stagnation, an escalation or a failed phase. A quality gate that a later phase began without is\n" +
			"marked MISSING, as 'metrics' and --markdown say. A task run (git crucible run) adds its section: the\n" +
			"level, the tasks by status, the running tasks and their worktrees, the backup branch (\"task_run\"\n" +
			"in --json); when no engine runs it, what it left (\"left\"): its task worktrees, each with its\n" +
			"commit and whether it holds changes that are not on the branch, and its backup branch, with the\n" +
			"command that removes them, git crucible clean. A run that completes leaves nothing.\n" +
			"--watch redraws whenever the pipeline changes.\n\n" +
			"Once agents' clients report what their dispatches used, status says what the pipeline cost and\n" +
			"how much of that is known (Cost: $0.42 (claude, 12 of 14 dispatches; 2 estimated by size)), the\n" +
			"tokens reported and those estimated by size (characters / 4) for the other dispatches, and the cost\n" +
			"by phase, by role and by task; a client that gives tokens but no price (codex) is named as such,\n" +
			"never priced. --json always has \"cost\", as 'metrics --json' has it.",
		Flags: commonFlags(
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "redraw when the pipeline changes (Ctrl-C ends it)"},
			&cli.BoolFlag{Name: "markdown", Usage: "print crucible's pipeline-status.md"},
		),
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 0); err != nil {
				return err
			}
			return withRepo(c, func(s *session) error {
				s.markdown = c.Bool("markdown")
				if c.Bool("watch") {
					return watchStatus(c.Context, s)
				}
				return printStatus(c.Context, s, s.out())
			})
		},
	}
}

func printStatus(ctx context.Context, s *session, w io.Writer) error {
	st, err := s.load(ctx)
	if err != nil {
		return err
	}
	blocked := st.Gates.Check()
	now, err := pipeline.Now()
	if err != nil {
		return err
	}
	// What a replay would do, from the state alone: the checked plan
	// reads the whole chain, which status must not.
	outlook := replay.OutlookOf(st)
	if outlook != nil && engine.Running(s.svc, st.ID) != 0 {
		outlook = nil
	}
	cost, err := s.svc.Cost(ctx, st.ID)
	if err != nil {
		return err
	}
	if s.jsonOut() {
		out := map[string]any{"state": st, "allowed": blocked == nil, "blocked": blockedJSON(blocked),
			"status": interop.StatusOf(st, now), "cost": cost}
		if outlook != nil {
			out["resume"] = outlook
		}
		if d := st.View.DAG; d != nil {
			t, err := taskRunFor(ctx, s, st.ID, d)
			if err != nil {
				return err
			}
			out["task_run"] = t
		}
		return writeJSON(w, out, "  ")
	}
	if s.markdown {
		_, err := w.Write(interop.StatusOf(st, now).Render())
		return err
	}
	v := &st.View
	writeHeader(w, s, st)
	fmt.Fprintf(w, "Phase:    %s — %s\n", phaseLabel(st.Phase), st.Gates.Ledger.Entry(st.Phase).Status)
	fmt.Fprintf(w, "Health:   %s", orGreen(v.Health.Level))
	if v.Health.Reason != "" && v.Health.Level != pipeline.Green {
		fmt.Fprintf(w, " — %s\nAction:   %s", v.Health.Reason, v.Health.Action)
	}
	fmt.Fprintf(w, "\nElapsed:  %s", interop.Duration(pipeline.Elapsed(st, now)))
	if st.ImportedOnly() {
		fmt.Fprint(w, " (the imported run's recorded span, as metrics' wall clock)")
	}
	fmt.Fprintln(w)
	if b := v.Baseline; b != nil {
		fmt.Fprintf(w, "Tests:    known failing at the baseline: %s of %s", pipeline.Failing(b.Failing), b.Command)
		if len(b.Steps) > 0 {
			fmt.Fprintf(w, "; passed against it: %s", strings.Join(b.Steps, ", "))
		}
		fmt.Fprintln(w)
	}
	if cost.Reported > 0 {
		fmt.Fprintf(w, "Cost:     %s\nTokens:   %s\n", cost.Summary(), cost.Tokens())
	}
	switch {
	case outlook != nil && outlook.Run != "":
		fmt.Fprintf(w, "Resume:   no run is going on; it goes on with: git crucible run %s\n", outlook.Run)
	case outlook != nil:
		fmt.Fprintf(w, "Resume:   no build is running; a replay resumes at the Phase %d boundary%s (checked: git crucible replay --dry-run)\n",
			outlook.Phase, settling(outlook.InFlight))
	}
	fmt.Fprintf(w, "\nGates:\n")
	missing := map[ledger.Phase]bool{} // gates passed by, as metrics says
	for _, g := range pipeline.GateStates(st) {
		missing[g.Phase] = g.State == pipeline.GateMissing
	}
	for _, p := range ledger.Phases {
		e := st.Gates.Ledger.Entry(p)
		note := e.Reason
		switch {
		case missing[p]:
			note = strings.TrimSpace("quality gate MISSING " + note)
		case e.Status == ledger.Skipped && e.Acknowledged:
			note = "acknowledged: " + note
		case e.Status == ledger.Skipped:
			note = "NOT acknowledged: " + note
		case e.Tasks != "":
			note = e.Tasks
		case e.Artifact != "":
			note = e.Artifact
		}
		if n := v.Metrics.Verdicts[fmt.Sprint(int(p))]; n > 0 {
			note += fmt.Sprintf(" (verdicts: %d", n)
			if r := v.Metrics.GateRounds[fmt.Sprint(int(p))]; r > 0 {
				note += ", last after " + plural(r, "round")
			}
			note = strings.TrimSpace(note + ")")
		}
		fmt.Fprintf(w, "  %d %-10s %-11s %s\n", p, p.Name(), e.Status, note)
	}
	if blocked != nil {
		fmt.Fprintf(w, "\n%s\n", blocked.Error())
	}
	if len(st.Conflicts) > 0 {
		fmt.Fprintf(w, "\nConflicts from merging clones (resolve with: git crucible resolve --phase N --reason \"<why>\"):\n")
		for _, c := range st.Conflicts {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	if v.DAG != nil {
		t, err := taskRunFor(ctx, s, st.ID, v.DAG)
		if err != nil {
			return err
		}
		writeTaskRun(w, t)
	}
	if len(v.Recent) > 0 {
		fmt.Fprintf(w, "\nRecent events:\n")
		for _, r := range v.Recent {
			fmt.Fprintf(w, "  [%s] %s\n", interop.Clock(r.Time), r.Text)
		}
	}
	writeTasks(w, v.Tasks, now)
	if cost.Reported > 0 {
		fmt.Fprintln(w)
		writeCostTable(w, &cost)
	}
	j := v.Journal
	if len(j.Decisions)+len(j.Constraints)+len(j.NextSteps) > 0 {
		fmt.Fprintf(w, "\nCompression state:\n")
		for _, d := range j.Decisions {
			fmt.Fprintf(w, "  - [%s] %s: %s", d.ID(), d.Type, d.Choice)
			if d.Reason != "" {
				fmt.Fprintf(w, " — %s", d.Reason)
			}
			fmt.Fprintln(w)
		}
		for _, c := range j.Constraints {
			fmt.Fprintf(w, "  constraint: %s\n", c)
		}
		for i, n := range j.NextSteps {
			fmt.Fprintf(w, "  next %d: %s\n", i+1, n)
		}
	}
	return nil
}

// watchStatus redraws the status whenever the pipeline's ref moves, in
// place when stdout is a terminal, until the command is interrupted.
func watchStatus(ctx context.Context, s *session) error {
	id, err := s.pipelineID(ctx)
	if err != nil {
		return err
	}
	s.pipeline = id // follow this pipeline even if the branch moves on
	tty := isTerminal(s.out())
	last := ""
	for {
		tip, err := s.svc.Store.Tip(id)
		if errors.Is(err, refs.ErrNoPipeline) {
			tip, err = "", nil // gone (archived): printStatus's error says so, with its hints
		}
		if err != nil {
			return err
		}
		if tip != last {
			var buf bytes.Buffer
			if err := printStatus(ctx, s, &buf); err != nil {
				return err
			}
			if tty {
				io.WriteString(s.out(), "\x1b[H\x1b[2J")
			} else if last != "" {
				io.WriteString(s.out(), "\n")
			}
			s.out().Write(buf.Bytes())
			last = tip
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull) // a character device too, but nobody to ask
	return err != nil || !os.SameFile(fi, null)
}

// settling says which dispatches left in flight a replay settles.
func settling(seqs []int) string {
	switch len(seqs) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(", settling dispatch %d as interrupted", seqs[0])
	}
	return fmt.Sprintf(", settling dispatches %s as interrupted", strings.Trim(fmt.Sprint(seqs), "[]"))
}

func orGreen(level string) string {
	if level == "" {
		return pipeline.Green
	}
	return level
}

// taskRun is status's picture of a task run: the chain's view with the
// count of tasks in each status (those it never named are pending) and
// the worktrees as from the work tree's top when they are under it.
type taskRun struct {
	Status  string                 `json:"status"`
	Level   int                    `json:"level,omitempty"`
	Tasks   int                    `json:"tasks"`
	Counts  map[string]int         `json:"counts"`
	Running []pipeline.RunningTask `json:"running"`
	Backup  string                 `json:"backup,omitempty"`
	// Gone: the backup branch is not there (a run that completed
	// deleted it, or git crucible clean did).
	Gone bool `json:"backup_gone,omitempty"`
	// Left is what the run left, when no engine runs it: its slots and
	// its backup branch.
	Left *runLeft `json:"left,omitempty"`
}

// runLeft is what a task run left behind, and the command that cleans it.
type runLeft struct {
	Slots   []leftSlot   `json:"slots"`
	Backups []leftBackup `json:"backups"`
	Clean   string       `json:"clean"`
}

type leftSlot struct {
	Path   string `json:"path"` // from the work tree's top
	Commit string `json:"commit,omitempty"`
	Dirty  bool   `json:"dirty"` // it has uncommitted changes
}

type leftBackup struct {
	Branch string `json:"branch"`
	Commit string `json:"commit"`
}

// taskRunFor is taskRunOf, with what the run left when no engine runs
// pipeline id.
func taskRunFor(ctx context.Context, s *session, id string, d *pipeline.DAGView) (taskRun, error) {
	t := taskRunOf(s, d)
	repo := s.svc.Repo
	if t.Backup != "" {
		gone, err := leftover.BackupGone(repo, t.Backup)
		if err != nil {
			return t, err
		}
		t.Gone = gone
	}
	if engine.Running(s.svc, id) != 0 {
		return t, nil
	}
	found, err := leftover.Find(ctx, repo, leftover.Options{Dirty: true})
	if err != nil {
		return t, err
	}
	l := &runLeft{Slots: []leftSlot{}, Backups: []leftBackup{}, Clean: "git crucible clean"}
	for _, sl := range found.Slots {
		l.Slots = append(l.Slots, leftSlot{Path: relTop(repo.WorkTree, sl.Path), Commit: sl.Commit, Dirty: sl.Dirty})
	}
	for _, b := range found.Backups {
		if b.Branch == t.Backup {
			l.Backups = append(l.Backups, leftBackup{Branch: b.Branch, Commit: b.Commit})
		}
	}
	if len(l.Slots)+len(l.Backups) > 0 {
		t.Left = l
	}
	return t, nil
}

// relTop is path from the work tree's top when it is under it.
func relTop(top, path string) string {
	if rel, err := filepath.Rel(top, path); top != "" && err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return path
}

func taskRunOf(s *session, d *pipeline.DAGView) taskRun {
	counts := d.Counts()
	tasks := max(d.Tasks, len(d.Statuses))
	if n := tasks - len(d.Statuses); n > 0 {
		counts["pending"] += n
	}
	running := make([]pipeline.RunningTask, 0, len(d.Running))
	for _, r := range d.Running {
		if top := s.svc.Repo.WorkTree; top != "" && r.Worktree != "" {
			if rel, err := filepath.Rel(top, r.Worktree); err == nil && filepath.IsLocal(rel) {
				r.Worktree = rel
			}
		}
		running = append(running, r)
	}
	// By task, not by when each was dispatched: tasks of a level start at once.
	slices.SortFunc(running, func(a, b pipeline.RunningTask) int { return strings.Compare(a.Task, b.Task) })
	return taskRun{Status: d.Status, Level: d.Level, Tasks: tasks, Counts: counts, Running: running,
		Backup: strings.TrimPrefix(d.Backup, "refs/heads/")}
}

// writeTaskRun is status's "Task run" section.
func writeTaskRun(w io.Writer, t taskRun) {
	fmt.Fprintf(w, "\nTask run: %s", t.Status)
	if t.Level > 0 {
		fmt.Fprintf(w, ", level %d", t.Level)
	}
	var counts []string
	for _, st := range pipeline.DAGTaskStatuses {
		if n := t.Counts[st]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, st))
		}
	}
	fmt.Fprintf(w, "\n  Tasks:   %d: %s\n", t.Tasks, strings.Join(counts, ", "))
	for i, r := range t.Running {
		label := "  Running: "
		if i > 0 {
			label = "           "
		}
		fmt.Fprintf(w, "%s%-18s %s\n", label, r.Task, r.Worktree)
	}
	switch {
	case t.Backup == "":
	case t.Gone && t.Status == "completed":
		fmt.Fprintf(w, "  Backup:  %s, deleted when the run completed\n", t.Backup)
	case t.Gone:
		fmt.Fprintf(w, "  Backup:  %s, deleted (going on makes it again)\n", t.Backup)
	default:
		fmt.Fprintf(w, "  Backup:  %s\n", t.Backup)
	}
	if t.Left == nil {
		return
	}
	label := "  Left:    "
	for _, sl := range t.Left.Slots {
		dirty := ""
		if sl.Dirty {
			dirty = ", with changes not on the branch"
		}
		fmt.Fprintf(w, "%s%s at %s%s\n", label, sl.Path, abbrev(sl.Commit), dirty)
		label = "           "
	}
	for _, b := range t.Left.Backups {
		fmt.Fprintf(w, "%sbranch %s at %s\n", label, b.Branch, abbrev(b.Commit))
		label = "           "
	}
	fmt.Fprintf(w, "  Clean:   %s (--dry-run lists what it removes; going on uses them)\n", t.Left.Clean)
}

// maxLabel is the widest a task's title is shown in status's task list.
const maxLabel = 40

// clip is s cut to n runes, an ellipsis marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// writeTasks is status's task list: a row per task, its newest dispatch.
func writeTasks(w io.Writer, tasks []pipeline.TaskProgress, now string) {
	if len(tasks) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTasks:\n")
	// The label column is as wide as the longest title, up to a limit
	// past which titles are cut: the columns after it stay aligned.
	width := 18
	for _, t := range tasks {
		width = max(width, min(utf8.RuneCountInString(t.Label()), maxLabel))
	}
	for _, t := range tasks {
		end := t.Finished
		if end == "" {
			end = now
		}
		fmt.Fprintf(w, "  %3d %-*s %-8s %-11s %s\n", t.Task, width, clip(t.Label(), maxLabel), t.Tier, t.Status, interop.Duration(pipeline.Seconds(t.Started, end)))
	}
}
