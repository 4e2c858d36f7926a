package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/cmd/internal/cliexit"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
	"github.com/git-crucible/git-crucible/replay"
)

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "run the four-phase pipeline with the configured agents, gates and handoffs",
		ArgsUsage: `"<goal>"`,
		Description: "Starts a pipeline on the current branch and walks its spec (--spec FILE, else\n" +
			pipespec.OverridePath + " once trusted with 'git crucible trust', else the built-in one: see\n" +
			"'git crucible spec'): each step's agent is dispatched, gates run their rounds, the ledger,\n" +
			"handoffs, checkpoints and the journal are recorded. It stops at the approval pause unless\n" +
			"--yes, at a manual agent, at a failure, or at an escalation (exit status 2, health RED).\n" +
			"A task's fixes are amended into its one commit; a task whose fast gate still fails after its\n" +
			"fix escalates, its commit taken off the branch (compare-and-swap; the work tree follows for that\n" +
			"commit's files only) and kept at refs/crucible/failed/<pipeline>/<task>, which the error names.\n" +
			"A branch whose pipeline is not finished needs --resume (go on where it stopped, without\n" +
			"running a finished dispatch again) or --fresh (abandon it and start anew).\n\n" +
			"Commands agents wrote (the test writer's acceptance command, the plan's fast gates) are\n" +
			"listed at the approval pause and run only once approved: with --yes, recorded in the chain\n" +
			"command by command, or by git config " + engine.TrustAgentCommandsKey + " true. Without consent\n" +
			"the walk stops before one runs (exit status 2).\n\n" +
			"--json prints where the walk stopped as one JSON object on stdout, the text's error and hints\n" +
			"staying on stderr, the exit status the same: pipeline, status (done: the four phases are\n" +
			"closed; waiting: at the approval pause, with its message, or for a manual agent's dispatch,\n" +
			"with manual: seq, prompt, output and the finish command; consent; escalated; failed), phase,\n" +
			"step and task where it stopped, reason, suggestion, agent_commands (command, from,\n" +
			"approved), hints (how to go on, without \"hint: \") and warnings.\n\n" +
			"A new build first runs the project's test command once: failing already, it stops the build\n" +
			"before anything is recorded, the failure's last lines shown and its failures named. With\n" +
			"--baseline-fails it goes on, recording them as the known-failing baseline: a test step\n" +
			"(run \"test\" or \"acceptance\") whose command fails passes when every failure it names failed\n" +
			"there, and fails naming the others, or when it names none (lines --- FAIL:, FAIL, FAILED, ✕,\n" +
			"not ok are recognised).\n" +
			"A new build refuses a work tree whose tracked files differ from HEAD (commit or stash\n" +
			"them); untracked files may stay, and no commit takes them: the engine commits only what\n" +
			"its dispatches changed, with its trailers and provenance note, hooks or none. While it\n" +
			"runs, the pre-commit hook refuses anyone else's commit in the work tree; a commit made\n" +
			"where no hook runs stops the build (exit status 2), the branch as it is. Each phase's work\n" +
			"(the design, the acceptance tests, the plan) is committed as the phase ends, in a commit of\n" +
			"its own with the phase's trailers; in Phase 3, each task's in its own commit.\n\n" +
			"--dry-run prints the pre-flight (the spec, each role's agent and its program, the design,\n" +
			"the work tree, the baseline, the pipeline on the branch, the hooks, consent to the commands\n" +
			"agents write) and the walk, step by step: what each would dispatch, run or pause for. It\n" +
			"runs the project's test command, as the build's baseline does (a failing one's output kept\n" +
			"in baseline.log, as a build keeps it), and records nothing: no pipeline, no agent run, no\n" +
			"commit. Exit status 0 when the build would start, 1 when the pre-flight would refuse it,\n" +
			"with the build's own error.\n\n" + maxCostHelp,
		Flags: []cli.Flag{
			jsonFlag,
			&cli.BoolFlag{Name: "yes", Usage: "approve the design and the commands agents wrote: go on past the approval pause"},
			&cli.BoolFlag{Name: "resume", Usage: "go on with the branch's unfinished pipeline"},
			&cli.BoolFlag{Name: "baseline-fails", Usage: "start even though the project's test command fails before the build: its failures become the known-failing baseline"},
			&cli.BoolFlag{Name: "fresh", Usage: "abandon the branch's unfinished pipeline and start anew"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the pre-flight (running the project's tests, as the baseline does) and the walk; record nothing, run no agent"},
			&cli.StringFlag{Name: "design", Usage: "use the design document `FILE` (a work-tree path) instead of writing one"},
			&cli.StringFlag{Name: "spec", Usage: "walk the pipeline spec `FILE` instead of the work tree's or the built-in one"},
			&cli.StringFlag{Name: "mode", Value: "feature", Usage: "pipeline `MODE`: feature or refactor"},
			&cli.IntFlag{Name: "max-parallel", Usage: "run the implementers of up to `N` independent tasks at once, each in its own worktree (the spec's tasks step says how many otherwise)"},
			maxCostFlag,
		},
		Action: buildAction,
	}
}

func buildAction(c *cli.Context) error {
	resume, fresh := c.Bool("resume"), c.Bool("fresh")
	switch {
	case resume && fresh:
		return usageErrorf("--resume and --fresh cannot be used together")
	case resume && c.Bool("dry-run"):
		return usageErrorf("--dry-run checks a new build: give the goal, not --resume")
	case resume && c.NArg() > 0:
		return usageErrorf("--resume goes on with the pipeline's own goal: give no goal")
	case !resume && c.NArg() != 1:
		return usageErrorf(`want exactly one argument, the goal: git crucible build "<goal>"`)
	case c.IsSet("max-parallel") && (c.Int("max-parallel") < 1 || c.Int("max-parallel") > pipespec.MaxParallelLimit):
		return usageErrorf("--max-parallel %d: want 1 to %d", c.Int("max-parallel"), pipespec.MaxParallelLimit)
	}
	if err := checkMaxCost(c); err != nil {
		return err
	}
	return withRepo(c, func(s *session) error {
		if c.Bool("dry-run") {
			return dryRun(c, s)
		}
		repo := s.svc.Repo
		if repo.WorkTree == "" {
			return &refused{Err: errors.New("build needs a work tree for its agents")}
		}
		limit, err := budget(c, s, nil)
		if err != nil {
			return err
		}
		sp, err := buildSpec(s, c.String("spec"))
		if err != nil {
			return err
		}
		agents, err := loadAgents(c, s, sp)
		if err != nil {
			return err
		}
		if err := checkDesign(repo.WorkTree, c.String("design")); err != nil {
			return err
		}
		var known *pipeline.BaselineData
		if !resume {
			if err := checkClean(c, s); err != nil {
				return err
			}
			if known, err = checkBaseline(c, s, agents.Test); err != nil {
				return err
			}
		}
		id, err := buildPipeline(c, s, resume, fresh)
		if err != nil {
			return err
		}
		e, err := engine.Open(s.svc, id, agents, repo.WorkTree)
		if err != nil {
			return err
		}
		defer e.Close()
		e.Budget = limit
		templates, mutations, err := replay.Templates(c.Context, s.svc, id, repo.WorkTree)
		if err != nil {
			return err
		}
		return walk(c, s, e, engine.WalkOptions{Spec: sp, Yes: c.Bool("yes"), Design: c.String("design"),
			Templates: templates, Mutations: mutations, MaxParallel: c.Int("max-parallel"), Baseline: known})
	})
}

// checkClean refuses a new pipeline in a work tree with changes to
// tracked files, as git rebase does: its commits would take them.
func checkClean(c *cli.Context, s *session) error {
	err := engine.CheckClean(c.Context, s.svc.Repo)
	var dirty *engine.DirtyTreeError
	if errors.As(err, &dirty) {
		return withHints(&refused{Err: err}, "commit or stash them, then build again; untracked files may stay: the build never commits them")
	}
	return err
}

// checkBaseline runs the project's test command before a new pipeline is
// recorded: failing already, it would be found in Phase 4, after every
// agent ran, so the build stops there, the failures named. With
// --baseline-fails it goes on, and the failures are the known-failing
// baseline its test steps compare with (nil when the command passes).
func checkBaseline(c *cli.Context, s *session, command string) (*pipeline.BaselineData, error) {
	return checkBaselineTo(c, s, command, s.err())
}

// checkBaselineTo is checkBaseline saying its failure's lines, or its
// warning, on w: build --dry-run says them only when the build would.
func checkBaselineTo(c *cli.Context, s *session, command string, w io.Writer) (*pipeline.BaselineData, error) {
	err := engine.CheckBaseline(c.Context, s.svc.Repo, command)
	var failing *engine.BaselineError
	if !errors.As(err, &failing) {
		return nil, err
	}
	named := "its output names no failure (no " + engine.FailureLines + " line)"
	if len(failing.Failing) > 0 {
		named = fmt.Sprintf("%s at the baseline: %s", pipeline.Failing(len(failing.Failing)), engine.NameFailures(failing.Failing, maxNamedFailures))
	}
	if c.Bool("baseline-fails") {
		cliexit.Warn(w, "%v", err)
		cliexit.Hint(w, "%s", named)
		cliexit.Hint(w, "its whole output is in %s", failing.Log)
		if len(failing.Failing) == 0 {
			cliexit.Hint(w, "a test step whose command fails cannot be compared with it: it fails")
		} else {
			cliexit.Hint(w, "going on from it as the known-failing baseline: a test step passes when it fails only as it does")
		}
		return failing.Known(), nil
	}
	for _, l := range strings.Split(failing.Tail, "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return nil, withHints(&refused{Err: err}, named, "its whole output is in "+failing.Log,
		"fix what fails, or build anyway with --baseline-fails: its failures become the known-failing baseline the test steps compare with")
}

// maxNamedFailures is how many of the baseline's failures are named.
const maxNamedFailures = 10

// loadAgents is the agents' configuration, refused unless every role sp
// dispatches has one: checked before anything starts.
func loadAgents(c *cli.Context, s *session, sp *pipespec.Spec) (*agent.Config, error) {
	agents, err := agentConfig(c, s)
	if err != nil {
		return nil, err
	}
	return agents, resolveRoles(sp, agents, s.svc.Repo.WorkTree)
}

// agentConfig is the agents' configuration, refused while a tracked agents
// file is not trusted.
func agentConfig(c *cli.Context, s *session) (*agent.Config, error) {
	agents, err := agent.Load(c.Context, s.svc.Repo)
	if err != nil {
		return nil, err
	}
	if agents.Refused != nil {
		return nil, agents.Refused // a refusal with its trust hint
	}
	return agents, nil
}

// walk walks engine e's pipeline until it stops, and says where.
func walk(c *cli.Context, s *session, e *engine.Engine, opts engine.WalkOptions) error {
	// Ctrl-C and SIGTERM end the agent's group and leave the run
	// resumable: its dispatch is finished as cancelled, to run again.
	ctx, stop := interruptible(c.Context)
	defer stop()
	trusted, err := engine.TrustsAgentCommands(ctx, s.svc.Repo)
	if err != nil {
		return err
	}
	opts.TrustAgentCommands = trusted
	res, err := e.Walk(ctx, opts)
	if interrupted(ctx, c.Context) {
		return withHints(errors.New("interrupted"), "go on with: git crucible build --resume")
	}
	for _, w := range res.Warnings {
		s.warn("%s", w)
	}
	if err != nil {
		return err
	}
	defer fmt.Fprintln(s.err(), reportHint(e.ID)) // after what printWalk says, whatever the walk's end
	return printWalk(s, e.ID, res)
}

// resolveRoles checks that every role sp dispatches has an agent whose
// program is there, before anything starts.
func resolveRoles(sp *pipespec.Spec, agents *agent.Config, workdir string) error {
	for _, l := range sp.Walk() {
		for _, role := range []string{l.Step.Role, l.Step.Fixer} {
			if role == "" {
				continue
			}
			if _, err := agents.Ready(role, workdir); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDesign checks build --design's file before anything starts: a
// regular file of the work tree, named relative to its top, of a size an
// agent can read.
func checkDesign(work, file string) error {
	if file == "" {
		return nil
	}
	if !filepath.IsLocal(file) {
		return usageErrorf("--design %s: want a path inside the work tree, relative to its top", file)
	}
	err := flagFileError("--design "+file, fsutil.CheckFile(filepath.Join(work, file), maxSmallFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--design %s: no such file in the work tree", file)
	case err != nil:
		var usage *usageError
		if !errors.As(err, &usage) {
			err = fmt.Errorf("--design %s: %w", file, err)
		}
		return err
	}
	return nil
}

// buildSpec is the spec to walk: a work tree's own override runs only in
// the content the user trusted, for its run steps are commands.
func buildSpec(s *session, file string) (*pipespec.Spec, error) {
	return effectiveSpec(s.svc.Repo.WorkTree, file, engine.TrustedOverride(s.svc.Repo))
}

// buildPipeline is the pipeline to walk: the branch's unfinished one with
// --resume, else a new one (--fresh abandons the unfinished one).
func buildPipeline(c *cli.Context, s *session, resume, fresh bool) (string, error) {
	if resume {
		// A build killed while it verified commits may have left HEAD
		// detached on that rebase, and HEAD's branch names the pipeline.
		if settled, err := engine.SettleVerifyCommits(c.Context, s.svc.Repo); err != nil {
			return "", err
		} else if settled {
			fmt.Fprintln(s.err(), "Put back the verify-commits run a stopped build left under way")
		}
		id, err := s.pipelineID(c.Context)
		var none *pipeline.NoActiveError
		if errors.As(err, &none) {
			// A build killed as it started left its pipeline not yet active.
			if st, aerr := s.svc.AdoptOrphan(c.Context); aerr != nil || st != nil {
				if st != nil {
					fmt.Fprintf(s.err(), "Going on with pipeline %s, which a stopped build had started\n", st.ID)
					return st.ID, nil
				}
				return "", aerr
			}
		}
		return id, err
	}
	opts := pipeline.StartOptions{Goal: c.Args().First(), Mode: c.String("mode"), Fresh: fresh}
	if err := opts.Validate(); err != nil {
		return "", usageErrorf("%v", err)
	}
	st, abandoned, err := s.svc.Start(c.Context, opts)
	var active *pipeline.ActiveError
	if errors.As(err, &active) {
		return "", withHints(&refused{Err: err}, "go on with it: git crucible build --resume",
			`or abandon it and start anew: git crucible build --fresh "<goal>"`)
	}
	if err != nil {
		return "", err
	}
	if abandoned != "" {
		fmt.Fprintf(s.err(), "Abandoned pipeline %s (kept in refs/crucible/pipelines/%s)\n", abandoned, abandoned)
	}
	fmt.Fprintf(s.err(), "Started pipeline %s on branch '%s'\n", st.ID, st.Branch)
	if missing, err := hooks.NotOurs(c.Context, s.svc.Repo); err != nil {
		return "", err
	} else if len(missing) > 0 {
		s.hint("the gate hooks are not installed: the engine writes its commits' trailers and provenance itself,")
		s.hint("but nothing checks another commit here; install them with: git crucible hooks install")
	}
	return st.ID, nil
}

// walkJSON is where a walk stopped, as build --json prints it: what the
// text says, field by field.
type walkJSON struct {
	Pipeline      string                `json:"pipeline"`
	Status        string                `json:"status"` // done | waiting | consent | escalated | failed
	Phase         int                   `json:"phase,omitempty"`
	Step          string                `json:"step,omitempty"`
	Task          string                `json:"task,omitempty"`
	Reason        string                `json:"reason,omitempty"`
	Suggestion    string                `json:"suggestion,omitempty"`
	Message       string                `json:"message,omitempty"` // the approval pause's
	Manual        *manualJSON           `json:"manual,omitempty"`  // a manual agent's dispatch waits
	AgentCommands []engine.AgentCommand `json:"agent_commands"`
	Hints         []string              `json:"hints"`    // the hint: lines, without "hint: "
	Warnings      []string              `json:"warnings"` // the warning: lines, without "warning: "
}

// manualJSON is what a person answers a manual agent's dispatch with.
type manualJSON struct {
	Seq    int    `json:"seq"`
	Prompt string `json:"prompt"` // the prompt's file
	Output string `json:"output"` // where the report goes
	Finish string `json:"finish"` // the command that finishes the dispatch, as a shell line
}

// printWalk says where the walk stopped and how to go on: on stdout, or
// as JSON there with --json (the error and the hints stay on stderr).
func printWalk(s *session, id string, res engine.WalkResult) error {
	hints := walkHints(res)
	var manual *manualJSON
	if w := res.Waiting; w != nil && w.Waiting != nil {
		manual = &manualJSON{Seq: w.Seq, Prompt: w.Waiting.PromptFile, Output: w.Waiting.Output, Finish: shellJoin(w.Waiting.Finish)}
	}
	out := s.out()
	if s.jsonOut() {
		p := res.Point
		if err := s.printJSON(walkJSON{Pipeline: id, Status: res.Status, Phase: int(p.Phase), Step: p.Step, Task: p.Task, Reason: res.Reason,
			Suggestion: res.Suggestion, Message: res.Message, Manual: manual, AgentCommands: append([]engine.AgentCommand{}, res.Commands...),
			Hints: append([]string{}, hints...), Warnings: append([]string{}, res.Warnings...)}); err != nil {
			return err
		}
		out = io.Discard
	}
	at := fmt.Sprintf("Phase %d, step %s", res.Point.Phase, res.Point.Step)
	if res.Point.Task != "" {
		at += ", task " + res.Point.Task
	}
	switch res.Status {
	case engine.WalkDone:
		fmt.Fprintf(out, "Pipeline %s: the four phases are closed\n", id)
	case engine.WalkWaiting:
		fmt.Fprintf(out, "Pipeline %s waits at %s: %s\n", id, at, res.Reason)
		if res.Message != "" {
			fmt.Fprintln(out, res.Message)
			listCommands(out, res.Commands)
		}
		if manual != nil {
			fmt.Fprintf(out, "The prompt is %s; write the report to %s, then run:\n  %s\n", manual.Prompt, manual.Output, manual.Finish)
		}
	case engine.WalkConsent:
		s.error("pipeline %s stopped at %s: %s", id, at, res.Reason)
		listCommands(out, res.Commands)
	case engine.WalkEscalated:
		s.error("pipeline %s escalated at %s: %s", id, at, res.Reason)
	default:
		s.error("pipeline %s stopped at %s: %s", id, at, res.Reason)
	}
	cliexit.Hints(s.err(), hints)
	switch res.Status {
	case engine.WalkDone, engine.WalkWaiting:
		return nil
	case engine.WalkConsent, engine.WalkEscalated:
		return &silentExit{Code: exitEscalated}
	}
	return &silentExit{Code: exitRefused}
}

// walkHints is how to go on from where a walk stopped.
func walkHints(res engine.WalkResult) []string {
	var hints []string
	switch res.Status {
	case engine.WalkDone:
	case engine.WalkWaiting:
		if res.Message != "" {
			hints = append(hints, "approve and go on with: git crucible build --resume --yes")
		}
		if res.Waiting != nil && res.Waiting.Waiting != nil {
			hints = append(hints, "then go on with: git crucible build --resume")
		}
	case engine.WalkConsent:
		hints = append(hints, "approve them and go on with: git crucible build --resume --yes",
			"or accept every command agents write: git config "+engine.TrustAgentCommandsKey+" true")
	default: // escalated, failed
		if res.Suggestion != "" {
			hints = append(hints, res.Suggestion)
		}
		if res.Status != engine.WalkEscalated {
			hints = append(hints, "fix the cause, then go on with: git crucible build --resume")
		}
	}
	return hints
}

// listCommands lists the commands agents wrote, and whether each is approved.
func listCommands(out io.Writer, commands []engine.AgentCommand) {
	if len(commands) > 0 {
		fmt.Fprintln(out, "Commands the agents wrote, run only once approved:")
	}
	for _, c := range commands {
		state := "not approved"
		if c.Approved {
			state = "approved"
		}
		fmt.Fprintf(out, "  %s  (%s; %s)\n", c.Command, c.From, state)
	}
}

// shellJoin is args as one shell command line.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}
