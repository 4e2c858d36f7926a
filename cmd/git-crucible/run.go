package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
	"github.com/git-crucible/git-crucible/taskdag/record"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a task DAG's tasks level by level (--dry-run: check its manifest and show its levels)",
		ArgsUsage: "[FILE|DIR|NAME]",
		Description: "Reads a dispatch manifest, the dispatch seed's dispatch.yaml or the same schema in TOML\n" +
			"(dispatch.toml): FILE itself; DIR/dispatch.yaml (or .toml); dispatch/NAME/ under the work tree's\n" +
			"top; with no argument, the run under dispatch/ whose manifest changed last. A task without\n" +
			"files in the manifest takes those its plan.md lists under \"## Files to Modify\".\n\n" +
			"The manifest is checked as a whole, each problem with its line: unknown keys, dependency cycles\n" +
			"(with their path), unknown task ids, receives outside depends-on, two tasks of one level naming\n" +
			"the same file with no edge between them, a stub fast gate (true, echo ...) and no-fast-gate\n" +
			"without a reason. --dry-run then shows the levels, the tasks ready to run and any deadlock.\n\n" +
			"Otherwise the tasks run, level by level: each ready task's agent (the one playing role implementer;\n" +
			"see git crucible agents) in its own linked worktree, .crucible/slots/slot-N of the work tree (ignored by git), at most\n" +
			"--max-parallel at once, its prompt given the reports of the tasks it receives. A task passes when\n" +
			"its output.yaml says completed, lists its deviations and its evidence files exist, and it changed\n" +
			"no file outside its plan without reporting it. At the end of a level its passed tasks are\n" +
			"committed in dependency order, as commits.strategy says: per-task (the default) a commit each;\n" +
			"grouped, one commit for the tasks sharing a commit-group and one for each other task; single, one\n" +
			"commit for the level. A file two tasks changed goes to the later one's commit; a commit left with\n" +
			"no file is not made, its tasks committed with no commit-sha. Each commit's message is its tasks'\n" +
			"plan.md Objective (commits.message-source objective, the default; plan.md beside the manifest in\n" +
			"<task-id>/) or their output.yaml notes (notes), else the task's id, then the pipeline's trailers;\n" +
			"the engine writes their provenance notes.\n\n" +
			"Then one critique agent (role critique, or the manifest's critique.agent) reviews the level's tasks\n" +
			"that need it (critique.enabled, a task's own setting first); files it changes are discarded. A\n" +
			"critique that did not judge (its agent failed, timed out or was stopped, or wrote no report or one\n" +
			"that does not parse) never accepts: the run stops, the level's commits held on\n" +
			"refs/crucible/work/<pipeline> and the branch where it was, and running it again runs the critique\n" +
			"again, recorded as the failed one's retry. Tasks with blocking issues are\n" +
			"fixed one at a time by their role's agent, the level rebuilt from its boundary with the fixes (each\n" +
			"commit keeping its message), the fast gate run at each rebuilt commit (a failing one goes back to\n" +
			"fixing) and the critique run again: amendment round 3 warns, round 4 escalates. Once accepted the\n" +
			"branch moves to the level's commits (compare-and-swap; the work tree follows as git checkout\n" +
			"would). Before the first level the branch is kept as backup-<branch>-pre-dispatch, never recreated.\n" +
			"A run that completes then deletes it (compare-and-swap, only where the run began: that commit is on\n" +
			"the branch) and removes its task worktrees; one that does not keeps both for going on (git crucible\n" +
			"status lists them; git crucible clean removes them).\n\n" +
			"A run asks no one: a manifest whose commits.approval is ask-once or ask-each has its commits\n" +
			"approved up front with --yes, and without it the run is refused before anything is recorded; auto,\n" +
			"or no approval (the seed's ask-once default is for a person at the orchestrator), needs nothing.\n\n" +
			"Every status change is an event in the branch's open pipeline (a new one is started, with the\n" +
			"manifest's goal, when there is none): git crucible status shows the run, and a run killed anywhere\n" +
			"goes on where it stopped when run again: a task already committed never runs again, and a task\n" +
			"whose dispatch completed is not dispatched again: its work is taken from its slot, or, when that is\n" +
			"gone, its new dispatch is recorded as the retry of the completed one, with the reason; a level's\n" +
			"critique that completed is not dispatched again either, its report taken. A run the\n" +
			"chain has completed says so and records nothing. A YAML manifest is rewritten after each event as\n" +
			"a view of the chain (status, backup-branch, level-boundaries, each task's status and commit-sha;\n" +
			"comments and order kept), atomically; never through a symbolic link, nor over a file changed since\n" +
			"the run read it (a warning says so). The chain is the truth: what the file says of the run is\n" +
			"never read back. A TOML manifest is not rewritten: no TOML library keeps its comments and layout.\n" +
			"--json prints the result on stdout: pipeline, status, done, head, backup, and each task's id,\n" +
			"level, status and commit.\n\n" +
			"A manifest of more tasks than git config crucible.maxTasks (default 50; --max-tasks N for this\n" +
			"run, 0 for no cap) is refused before anything starts, and --dry-run says so: a DAG's fan-out is\n" +
			"its cost.\n\n" + maxCostHelp + "\n" +
			"The tasks it kept from starting stay pending, and running it again with a higher cap goes on.\n\n" +
			"--matrix runs and records nothing: it prints the next level's tasks for a CI's matrix of jobs,\n" +
			"as the chain of the branch's open pipeline says the run stands: the ready tasks (pending, every\n" +
			"dependency completed) and the dispatched ones (a job at work or one that died) of the lowest\n" +
			"level that has one. --format github prints {\"task\":[...]} on one line, for strategy.matrix\n" +
			"with fromJSON; gitlab a child pipeline, a job extending .crucible-task with parallel:matrix over\n" +
			"TASK (or one job saying there is none); json (the default, or --json) the pipeline, done, level,\n" +
			"levels, the tasks with their status, the failed tasks and the pending ones they block.\n\n" +
			"--task ID runs that task alone, as a CI job: it claims the task with a lease in the chain (--job\n" +
			"NAME, --lease DURATION, default 1h), runs its agent at its level's base, commits its work (the\n" +
			"message its level commit will have) at refs/crucible/tasks/<pipeline>/<ID> and records the result.\n" +
			"A job that finds the task's result, or another job's lease running, does nothing; a lease run out\n" +
			"is taken over. --collect takes the level's task commits onto the branch as a run commits its\n" +
			"tasks' work (checked first: parent, message, paths, evidence), runs the level's critique and\n" +
			"amendment rounds, dispatches no task, and says whether the next level is ready (it begins the\n" +
			"run when none has begun). --push REMOTE fetches from REMOTE first and pushes each record there\n" +
			"(the chain, notes, task ref or branch; atomic, never forced), appending again after a fetch when\n" +
			"another job pushed first. See docs/ci/ for GitHub Actions and GitLab CI workflows.\n\n" +
			"EXIT STATUS: 0 the manifest is sound (--dry-run) or every task completed; 1 it has problems (or more\n" +
			"tasks than the cap), a task failed, a critique did not judge or the run was refused; 2 escalated: a\n" +
			"level's critique still found blocking issues after three amendment rounds, or the cost cap was\n" +
			"reached; 128 not a git repository, no manifest, or no agent; 129 usage error.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "check the manifest and show its levels; run nothing"},
			&cli.IntFlag{Name: "max-parallel", Usage: "run at most `N` agents at once (default: the manifest's max-parallel)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "approve the run's commits up front (commits.approval ask-once or ask-each)"},
			&cli.IntFlag{Name: "max-tasks", Usage: "refuse a manifest of more than `N` tasks (0: no cap; default: git config " + taskdag.MaxTasksKey + ", else 50)"},
			maxCostFlag,
			&cli.BoolFlag{Name: "matrix", Usage: "print the next level's tasks as a CI matrix; run and record nothing"},
			&cli.StringFlag{Name: "format", Usage: "--matrix's output: `FORMAT` github (strategy.matrix JSON), gitlab (a child pipeline) or json", Value: "json"},
			&cli.StringFlag{Name: "task", Usage: "run task `ID` alone, as a CI job: its work on its task ref, its result recorded"},
			&cli.BoolFlag{Name: "collect", Usage: "take the level's tasks that CI jobs ran onto the branch, as a run commits them"},
			&cli.StringFlag{Name: "push", Usage: "with --task or --collect: fetch from `REMOTE` first and push every record there"},
			&cli.StringFlag{Name: "job", Usage: "with --task: the job's `NAME` in its lease (default: made up)"},
			&cli.DurationFlag{Name: "lease", Usage: "with --task: how long its lease on the task lasts (default 1h)"},
			jsonFlag,
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErrorf("want at most one argument, the manifest: a file, a run directory or a run's name")
	}
	if c.IsSet("max-parallel") && c.Int("max-parallel") < 1 {
		return usageErrorf("--max-parallel %d: want at least 1", c.Int("max-parallel"))
	}
	if c.IsSet("max-tasks") && c.Int("max-tasks") < 0 {
		return usageErrorf("--max-tasks %d: want 0 (no cap) or more", c.Int("max-tasks"))
	}
	if err := checkMaxCost(c); err != nil {
		return err
	}
	modes := 0
	for _, f := range []string{"matrix", "task", "collect", "dry-run"} {
		if c.IsSet(f) {
			modes++
		}
	}
	if modes > 1 {
		return usageErrorf("--matrix, --task, --collect and --dry-run go one at a time")
	}
	if c.IsSet("push") && !c.IsSet("task") && !c.Bool("collect") {
		return usageErrorf("--push is for --task and --collect")
	}
	for _, f := range []string{"job", "lease"} {
		if c.IsSet(f) && !c.IsSet("task") {
			return usageErrorf("--%s is for --task", f)
		}
	}
	if c.IsSet("lease") && c.Duration("lease") <= 0 {
		return usageErrorf("--lease %v: want a duration above 0 (30m, 2h)", c.Duration("lease"))
	}
	if c.IsSet("job") {
		if err := pipeline.CheckName("job", c.String("job")); err != nil {
			return usageErrorf("--job: %v", err)
		}
	}
	if c.IsSet("task") && c.IsSet("max-parallel") {
		return usageErrorf("--task runs one task: --max-parallel is not for it")
	}
	if c.IsSet("format") && !c.Bool("matrix") {
		return usageErrorf("--format is --matrix's")
	}
	if c.Bool("matrix") {
		if !slices.Contains(matrixFormats, c.String("format")) {
			return usageErrorf("--format %s: want one of %s", c.String("format"), strings.Join(matrixFormats, ", "))
		}
		for _, f := range []string{"dry-run", "yes", "max-parallel", "max-cost"} {
			if c.IsSet(f) {
				return usageErrorf("--matrix runs nothing: --%s is not for it", f)
			}
		}
	}
	return withRepo(c, func(s *session) error {
		top := s.svc.Repo.WorkTree
		if top == "" {
			return &refused{Err: errors.New("run needs a work tree")}
		}
		path, err := manifest.Resolve(top, c.Args().First())
		if err != nil {
			return err
		}
		if path, err = filepath.Abs(path); err != nil {
			return err
		}
		data, err := readFlagFile(path, path, manifest.MaxSize)
		if err != nil {
			return err
		}
		m, err := manifest.LoadData(path, data)
		// Problems name the manifest as from the top of the work tree.
		name := path
		if rel, err := filepath.Rel(top, path); err == nil && filepath.IsLocal(rel) {
			name = rel
		}
		var problems manifest.Errors
		var problem *manifest.Error
		switch {
		case errors.As(err, &problems):
			for _, p := range problems {
				p.File = name
				s.error("%v", p)
			}
			return &silentExit{Code: exitRefused}
		case errors.As(err, &problem):
			problem.File = name
			return &refused{Err: problem}
		case err != nil:
			return err
		}
		if c.IsSet("max-parallel") {
			m.MaxParallel = c.Int("max-parallel")
		}
		var flag *int64
		if c.IsSet("max-tasks") {
			n := int64(c.Int("max-tasks"))
			flag = &n
		}
		limit, from, err := taskdag.MaxTasks(c.Context, s.svc.Repo, flag)
		if err != nil {
			return err
		}
		over := taskdag.TooMany(m, name, shellQuote(name), limit, from)
		if c.Bool("dry-run") {
			printLevels(s, name, m)
			return over
		}
		if over != nil {
			return over
		}
		if c.IsSet("task") {
			return runTaskJob(c, s, m, name)
		}
		if c.Bool("collect") {
			return runCollect(c, s, m, name, manifest.NewView(path, data))
		}
		if c.Bool("matrix") {
			p, err := nextLevel(s, c, openPipeline(c, s), m)
			if err != nil {
				return err
			}
			format := c.String("format")
			if s.jsonOut() {
				format = "json"
			}
			return printMatrix(s, p, format)
		}
		return runTasks(c, s, m, name, manifest.NewView(path, data))
	})
}

// taskRunAgents are the agents and templates a run of m dispatches with,
// its agents checked ready (taskdag.Agents) before anything starts.
func taskRunAgents(c *cli.Context, s *session, m *manifest.Manifest) (*agent.Config, *prompt.Set, error) {
	agents, err := agentConfig(c, s)
	if err != nil {
		return nil, nil, err
	}
	if err := taskdag.Agents(agents, m, s.svc.Repo.WorkTree); err != nil {
		return nil, nil, err
	}
	templates, err := prompt.Load(s.svc.Repo.WorkTree)
	return agents, templates, err
}

// runTasks runs m's tasks in the branch's open pipeline (a new one when
// there is none) and says how the run ended.
func runTasks(c *cli.Context, s *session, m *manifest.Manifest, name string, view *manifest.View) error {
	repo := s.svc.Repo
	agents, templates, err := taskRunAgents(c, s, m)
	if err != nil {
		return err
	}
	limit, err := budget(c, s, func(maxCost string) string {
		goOn := "git crucible run "
		if c.Bool("yes") {
			goOn += "--yes "
		}
		return goOn + "--max-cost " + maxCost + " " + shellQuote(name)
	})
	if err != nil {
		return err
	}
	approve := func() error {
		return taskdag.Approve(m, name, c.Bool("yes"), "approve them with: git crucible run --yes "+name, "or set commits.approval: auto in the manifest")
	}
	id, err := runPipeline(c, s, m, name, approve)
	if err != nil {
		return err
	}
	e, err := engine.Open(s.svc, id, agents, repo.WorkTree)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Budget = limit
	ctx, stop := interruptible(c.Context)
	defer stop()
	if _, err := e.Recover(ctx); err != nil {
		return err
	}
	res, err := e.TaskEngine().RunTasks(ctx, record.TaskRun{Manifest: m, Path: name, MaxParallel: m.MaxParallel, Templates: templates,
		Template: "task", Role: taskdag.TaskRole, Step: "task", Test: agents.Test,
		Approve: approve, Progress: func(ev taskdag.Event) { printTaskEvent(s, ev) },
		Saw: func(m *manifest.Manifest) {
			if err := view.Write(m); err != nil {
				s.warn("%v", err)
			}
		}})
	if interrupted(ctx, c.Context) {
		return withHints(errors.New("interrupted"), "go on with: git crucible run "+name)
	}
	if err != nil {
		return err
	}
	if s.jsonOut() {
		if err := s.printJSON(runJSON(id, res, m)); err != nil {
			return err
		}
	}
	switch {
	case res.Budget != nil:
		s.error("task run stopped: %s", res.Reason)
		s.hint("%s", res.Budget.Suggestion())
		return &silentExit{Code: exitEscalated}
	case res.Critique != nil:
		s.error("task run stopped: %s", res.Reason)
		s.hint("the branch has not moved: the level's commits wait on %s", record.WorkRef(id))
		s.hint("once the critique's agent is fixed, run the critique again with: git crucible run %s", shellQuote(name))
		return &silentExit{Code: exitRefused}
	case res.Status == "escalated":
		s.error("task run escalated: %s", res.Reason)
		s.hint("the level's commits as the last round rebuilt them are on %s; the critique's issues are in git crucible log --json", record.WorkRef(id))
		s.hint("once decided (a task's critique can be turned off in the manifest), go on with: git crucible run %s", name)
		return &silentExit{Code: exitEscalated}
	case res.Status != "completed":
		s.error("task run failed: %s", res.Reason)
		s.hint("the branch as it was before the run is %s", strings.TrimPrefix(res.Backup, "refs/heads/"))
		return &silentExit{Code: exitRefused}
	case s.jsonOut():
	case res.Done:
		fmt.Fprintf(s.out(), "Task run of pipeline %s: already done, all %d tasks completed; nothing to run\n", id, len(m.Tasks))
	default:
		fmt.Fprintf(s.out(), "Task run of pipeline %s: %d tasks completed, the branch at %s\n", id, len(m.Tasks), res.Head)
		fmt.Fprintln(s.err(), reportHint(id))
	}
	return nil
}

// runResult is run --json's output.
type runResult struct {
	Pipeline string    `json:"pipeline"`
	Status   string    `json:"status"` // completed | failed | escalated
	Done     bool      `json:"done"`   // it was completed before: nothing ran, nothing was recorded
	Reason   string    `json:"reason,omitempty"`
	Head     string    `json:"head"`
	Backup   string    `json:"backup"`
	Tasks    []runTask `json:"tasks"`
}

type runTask struct {
	ID     string `json:"id"`
	Level  int    `json:"level"`
	Status string `json:"status"`
	Commit string `json:"commit"` // "" when it made none (or has not committed)
}

func runJSON(id string, res record.TaskRunResult, m *manifest.Manifest) runResult {
	out := runResult{Pipeline: id, Status: res.Status, Done: res.Done, Reason: res.Reason, Head: res.Head,
		Backup: strings.TrimPrefix(res.Backup, "refs/heads/"), Tasks: []runTask{}}
	for _, t := range m.Tasks {
		out.Tasks = append(out.Tasks, runTask{ID: t.ID, Level: m.Level(t.ID), Status: string(t.Status), Commit: t.CommitSHA})
	}
	return out
}

// runPipeline is the branch's open pipeline, or a new one for manifest m
// (the file name) once approve lets it begin.
func runPipeline(c *cli.Context, s *session, m *manifest.Manifest, name string, approve func() error) (string, error) {
	if id := openPipeline(c, s); id != "" {
		return id, nil
	}
	if err := approve(); err != nil {
		return "", err
	}
	return startPipeline(c, s, m, name)
}

// openPipeline is the branch's open pipeline, "" when there is none.
func openPipeline(c *cli.Context, s *session) string {
	if id, err := s.pipelineID(c.Context); err == nil {
		if st, _, err := s.svc.Load(c.Context, id); err == nil && !st.Finished() {
			return id
		}
	}
	return ""
}

// startPipeline starts the pipeline a run records in when the branch has
// none open, with the manifest's goal.
func startPipeline(c *cli.Context, s *session, m *manifest.Manifest, name string) (string, error) {
	goal := m.Goal
	if strings.TrimSpace(goal) == "" {
		goal = "task run " + name
	}
	st, _, err := s.svc.Start(c.Context, pipeline.StartOptions{Goal: goal, Mode: "feature"})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.err(), "Started pipeline %s on branch '%s'\n", st.ID, st.Branch)
	return st.ID, nil
}

// printTaskEvent is a run's progress line on stderr.
func printTaskEvent(s *session, ev taskdag.Event) {
	switch {
	case ev.Task == "" && ev.Round > 0:
		fmt.Fprintf(s.err(), "level %d: rebuilt (amendment round %d) %s..%s\n", ev.Level, ev.Round, abbrev(ev.Boundary), abbrev(ev.Head))
	case ev.Task == "":
		fmt.Fprintf(s.err(), "level %d: committed %s..%s\n", ev.Level, abbrev(ev.Boundary), abbrev(ev.Head))
	case ev.Status == manifest.Fixing && ev.Fix == "":
		fmt.Fprintf(s.err(), "task %s: fixing (%s, amendment round %d)\n", ev.Task, ev.Source, ev.Round)
	case ev.Status == manifest.Completed && ev.Reason != "":
		fmt.Fprintf(s.err(), "task %s: completed %s\n", ev.Task, abbrev(ev.CommitSHA))
		s.warn("task %s: %s", ev.Task, ev.Reason)
	case ev.Status == manifest.Failed:
		fmt.Fprintf(s.err(), "task %s: failed: %s\n", ev.Task, ev.Reason)
	case ev.Status == manifest.Dispatched:
		fmt.Fprintf(s.err(), "task %s: dispatched (level %d)\n", ev.Task, ev.Level)
	case ev.Status == manifest.Completed:
		fmt.Fprintf(s.err(), "task %s: completed %s\n", ev.Task, abbrev(ev.CommitSHA))
	}
}

func printLevels(s *session, path string, m *manifest.Manifest) {
	levels := m.Levels()
	fmt.Fprintf(s.out(), "%s: %d tasks in %d levels, at most %d agents at once\n", path, len(m.Tasks), len(levels), m.MaxParallel)
	for i, ids := range levels {
		var tasks []string
		for _, id := range ids {
			tasks = append(tasks, id+" ("+string(m.Task(id).Status)+")")
		}
		fmt.Fprintf(s.out(), "level %d: %s\n", i+1, strings.Join(tasks, " "))
	}
	if ready := m.Ready(); len(ready) > 0 {
		fmt.Fprintf(s.out(), "ready: %s\n", strings.Join(ready, " "))
	}
	if d := m.Deadlocked(); d != nil {
		fmt.Fprintf(s.out(), "%v\n", d)
	}
}

// abbrev is a commit id as progress lines show it; "-" for none.
func abbrev(sha string) string {
	if sha == "" {
		return "-"
	}
	return sha[:min(12, len(sha))]
}
