package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/engine"
	"github.com/git-crucible/git-crucible/hooks"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// dryCheck is one check of a build's pre-flight, as build --dry-run
// prints it: a refusal is the one the build would stop at.
type dryCheck struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	err    error
	said   string // what the build would say on stderr as it runs the check
}

// dryStep is one step of the walk as build --dry-run prints it: what the
// build would do there.
type dryStep struct {
	Phase     int    `json:"phase"`
	PhaseName string `json:"phase_name"`
	Step      string `json:"step"`
	PerTask   bool   `json:"per_task,omitempty"` // a step of each task of the plan
	Kind      string `json:"kind"`
	// Action: checkpoint, dispatch, manual (waits for a person), skip,
	// rounds (a gate or review loop), run, pause (for approval), approve
	// (--yes), tasks.
	Action      string `json:"action"`
	Role        string `json:"role,omitempty"`
	Agent       string `json:"agent,omitempty"`
	Template    string `json:"template,omitempty"`
	Fixer       string `json:"fixer,omitempty"`
	FixerAgent  string `json:"fixer_agent,omitempty"`
	FixTemplate string `json:"fix_template,omitempty"`
	Command     string `json:"command,omitempty"`
	Detail      string `json:"detail"`
}

// dryRunJSON is build --dry-run --json.
type dryRunJSON struct {
	Goal   string     `json:"goal"`
	Ready  bool       `json:"ready"` // no check refuses: the build would start
	Checks []dryCheck `json:"checks"`
	Spec   string     `json:"spec,omitempty"`
	Steps  []dryStep  `json:"steps"`
}

// dryRun is build --dry-run: the pre-flight a new build runs before it
// records anything, each check said, and the walk it would take, step by
// step; nothing is recorded, no agent runs. The project's test command
// runs, as the build's baseline does: only a failure writes, its log.
// The first refusal is reported as the build would report it, exit 1.
func dryRun(c *cli.Context, s *session) error {
	repo := s.svc.Repo
	var checks []dryCheck
	add := func(check string, err error, detail string) { checks = append(checks, newCheck(check, err, detail)) }
	if repo.WorkTree == "" {
		return &refused{Err: errors.New("build needs a work tree for its agents")}
	}
	opts := pipeline.StartOptions{Goal: c.Args().First(), Mode: c.String("mode"), Fresh: c.Bool("fresh")}
	if err := opts.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	limit, err := budget(c, s, nil)
	if err != nil {
		return err // a usage error, as the build's
	}
	capped := "none"
	if limit != nil {
		capped = fmt.Sprintf("$%s (%s): no dispatch starts once the pipeline's recorded cost reaches it",
			strconv.FormatFloat(limit.MaxUSD, 'f', -1, 64), limit.From)
	}
	sp, err := buildSpec(s, c.String("spec"))
	source := ""
	if sp != nil {
		source = sp.Source
	}
	add("spec", err, source)
	agents, err := agentConfig(c, s)
	if err != nil {
		add("agents", err, "")
	} else if sp != nil {
		seen := map[string]bool{}
		for _, l := range sp.Walk() {
			for _, role := range []string{l.Step.Role, l.Step.Fixer} {
				if role == "" || seen[role] {
					continue
				}
				seen[role] = true
				a, err := agents.Ready(role, repo.WorkTree)
				found := "its program found"
				if a.Kind == agent.Manual {
					found = "a person finishes its dispatches"
				}
				add("agent", err, fmt.Sprintf("%s: %s (%s), %s", role, a.Name, a.Kind, found))
			}
		}
	}
	if file := c.String("design"); file != "" {
		add("design", checkDesign(repo.WorkTree, file), file+": its writer is not dispatched")
	}
	add("cost cap", nil, capped)
	add("work tree", checkClean(c, s), "no tracked file differs from HEAD; untracked files stay, and no commit takes them")
	checks = append(checks, dryBaseline(c, s, agents), dryPipeline(c, s, opts.Fresh), dryHooks(c, s), dryConsent(c, s))

	var steps []dryStep
	if sp != nil {
		steps = dryWalk(sp, agents, c)
	}
	var first error
	for _, ch := range checks {
		if ch.err != nil {
			first = ch.err
			break
		}
	}
	out := s.out()
	if s.jsonOut() {
		if err := s.printJSON(dryRunJSON{Goal: opts.Goal, Ready: first == nil, Checks: checks, Spec: source, Steps: steps}); err != nil {
			return err
		}
		out = io.Discard
	}
	printDryRun(out, checks, sp, steps)
	// What the build would say, up to its refusal if any, in its own words.
	for _, ch := range checks {
		fmt.Fprint(s.err(), ch.said)
		if ch.err != nil {
			break
		}
	}
	if first == nil {
		fmt.Fprintln(out, "Nothing was recorded: build without --dry-run starts it.")
		return nil
	}
	report(s.err(), first)
	return &silentExit{Code: exitRefused}
}

// newCheck is a check, refused by err when it is not nil.
func newCheck(check string, err error, detail string) dryCheck {
	if err != nil {
		detail = err.Error()
	}
	return dryCheck{Check: check, OK: err == nil, Detail: detail, err: err}
}

// dryBaseline is the baseline check: the project's test command run once,
// as a new build runs it first; with --baseline-fails a failure is the
// known-failing baseline the build would go on from.
func dryBaseline(c *cli.Context, s *session, agents *agent.Config) dryCheck {
	command := ""
	if agents != nil {
		command = agents.Test
	}
	if command == "" {
		return newCheck("baseline", nil, "no test command (crucible.test): nothing to run")
	}
	var said bytes.Buffer
	known, err := checkBaselineTo(c, s, command, &said)
	detail := command + " passes (it ran)"
	if known != nil {
		detail = fmt.Sprintf("%s fails (exit %d): --baseline-fails goes on from it, %s known at the baseline",
			command, known.Exit, pipeline.Failing(len(known.Failing)))
	}
	ch := newCheck("baseline", err, detail)
	ch.said = said.String()
	return ch
}

// dryPipeline is the pipeline check: a new one starts on the branch,
// unless an unfinished one is active there and --fresh is not given.
func dryPipeline(c *cli.Context, s *session, fresh bool) dryCheck {
	check := func(err error, detail string) dryCheck { return newCheck("pipeline", err, detail) }
	at, err := s.svc.StartPoint(c.Context)
	branch, old := at.Branch, at.Active
	switch {
	case err != nil:
		return check(err, "")
	case old == "":
		return check(nil, fmt.Sprintf("a new one starts on branch '%s'", branch))
	case !at.Open:
		return check(nil, fmt.Sprintf("a new one starts on branch '%s' (%s there is finished)", branch, old))
	case fresh:
		return check(nil, fmt.Sprintf("a new one starts on branch '%s'; --fresh abandons the unfinished %s", branch, old))
	}
	return check(withHints(&refused{Err: &pipeline.ActiveError{Branch: branch, ID: old}}, "go on with it: git crucible build --resume",
		`or abandon it and start anew: git crucible build --fresh "<goal>"`), "")
}

// dryHooks says whether the gate hooks are installed, or what the engine
// does without them.
func dryHooks(c *cli.Context, s *session) dryCheck {
	missing, err := hooks.NotOurs(c.Context, s.svc.Repo)
	if err != nil || len(missing) == 0 {
		return newCheck("hooks", err, "the gate hooks are installed: they refuse every other commit while the engine works")
	}
	return newCheck("hooks", nil, fmt.Sprintf("not installed (%s): the engine writes its commits' trailers and provenance itself, "+
		"but nothing checks another commit here (git crucible hooks install)", strings.Join(missing, ", ")))
}

// dryConsent says who consents to the commands agents write.
func dryConsent(c *cli.Context, s *session) dryCheck {
	trusted, err := engine.TrustsAgentCommands(c.Context, s.svc.Repo)
	switch {
	case err != nil:
		return newCheck("commands", err, "")
	case trusted:
		return newCheck("commands", nil, "the commands agents write run without asking: git config "+engine.TrustAgentCommandsKey+" is true")
	case c.Bool("yes"):
		return newCheck("commands", nil, "the commands agents write run once approved: --yes approves them, recorded")
	}
	return newCheck("commands", nil, "the commands agents write run once approved: the build stops for a person's consent first")
}

// dryWalk is the walk of sp a build would take: each step, what it does.
func dryWalk(sp *pipespec.Spec, agents *agent.Config, c *cli.Context) []dryStep {
	who := func(role string) string {
		if role == "" || agents == nil {
			return ""
		}
		a, err := agents.Resolve(role)
		if err != nil {
			return "(none)"
		}
		return a.Name
	}
	manual := func(role string) bool {
		if agents == nil {
			return false
		}
		a, err := agents.Resolve(role)
		return err == nil && a.Kind == agent.Manual
	}
	var out []dryStep
	var add func(ph pipespec.Phase, st *pipespec.Step, perTask bool)
	add = func(ph pipespec.Phase, st *pipespec.Step, perTask bool) {
		d := dryStep{Phase: int(ph.Number), PhaseName: ph.Name, Step: st.ID, PerTask: perTask, Kind: string(st.Kind)}
		switch st.Kind {
		case pipespec.Checkpoint:
			d.Action, d.Detail = "checkpoint", "takes checkpoint "+st.CheckpointName("<task>")
		case pipespec.Dispatch:
			d.Role, d.Agent, d.Template = st.Role, who(st.Role), st.Template
			d.Action, d.Detail = "dispatch", fmt.Sprintf("%s: %s (template %s)", st.Role, d.Agent, st.Template)
			if manual(st.Role) {
				d.Action, d.Detail = "manual", d.Detail+": waits for a person to finish it"
			}
			if st.SkipIfExists && len(st.Outputs) > 0 {
				var paths []string
				for _, name := range slices.Sorted(maps.Keys(st.Outputs)) {
					paths = append(paths, st.Outputs[name])
				}
				d.Detail += "; skipped if " + strings.Join(paths, ", ") + " exists"
			}
			if file := c.String("design"); file != "" && sp.Producer("design") == st {
				d.Action, d.Detail = "skip", "the design is "+file+" (--design): not dispatched"
			}
		case pipespec.Gate, pipespec.ReviewLoop:
			d.Role, d.Agent, d.Template = st.Role, who(st.Role), st.Template
			d.Action = "rounds"
			judges := "judges %s in fresh rounds"
			if st.Kind == pipespec.ReviewLoop {
				judges = "reviews %s in rounds"
			}
			d.Detail = fmt.Sprintf("%s: %s (template %s) "+judges+" until a clean one, at most %d",
				st.Role, d.Agent, st.Template, st.Artifact, st.MaxRounds)
			if st.Fixer != "" {
				d.Fixer, d.FixerAgent, d.FixTemplate = st.Fixer, who(st.Fixer), st.FixTemplate
				d.Detail += fmt.Sprintf("; %s: %s (template %s) fixes between rounds", st.Fixer, d.FixerAgent, st.FixTemplate)
			}
		case pipespec.Run:
			d.Action = "run"
			switch st.Command {
			case pipespec.CommandTest:
				if agents != nil {
					d.Command = agents.Test
				}
				d.Detail = "the project's test command, " + d.Command
			case pipespec.CommandAcceptance:
				d.Command = st.Command
				d.Detail = "the acceptance command the test writer exports (an agent's: runs once approved)"
			case pipespec.CommandFastGate:
				d.Command = st.Command
				d.Detail = "the task's fast gate from the plan, if any (an agent's: runs once approved)"
			default:
				d.Command = st.Command
				d.Detail = "the spec's command, " + st.Command
			}
			d.Detail += ", expect " + st.Expect
		case pipespec.Approve:
			d.Action, d.Detail = "pause", "for approval: the build stops here; --resume --yes goes on"
			if c.Bool("yes") {
				d.Action, d.Detail = "approve", "approved by --yes, with the commands agents wrote so far"
			}
		case pipespec.Tasks:
			n := st.MaxParallel
			if c.IsSet("max-parallel") {
				n = c.Int("max-parallel")
			}
			d.Action, d.Detail = "tasks", fmt.Sprintf("each task of the plan (%s), one at a time, each committed", st.From)
			if n > 1 {
				d.Detail = fmt.Sprintf("each task of the plan (%s) as a task DAG: up to %d implementers at once, each in its own worktree, each task committed", st.From, n)
			}
		}
		out = append(out, d)
		for i := range st.Steps {
			add(ph, &st.Steps[i], true)
		}
	}
	for _, ph := range sp.Phases {
		for i := range ph.Steps {
			add(ph, &ph.Steps[i], false)
		}
	}
	return out
}

// printDryRun prints the pre-flight's checks and the walk.
func printDryRun(w io.Writer, checks []dryCheck, sp *pipespec.Spec, steps []dryStep) {
	fmt.Fprintln(w, "Pre-flight:")
	for _, ch := range checks {
		state := "ok"
		if !ch.OK {
			state = "refused"
		}
		fmt.Fprintf(w, "  %-8s %-10s %s\n", state, ch.Check, ch.Detail)
	}
	if sp == nil {
		return
	}
	fmt.Fprintf(w, "Walk (%s):\n", sp.Source)
	phase := 0
	for _, d := range steps {
		if d.Phase != phase {
			phase = d.Phase
			fmt.Fprintf(w, "Phase %d: %s\n", d.Phase, d.PhaseName)
		}
		indent := "  "
		if d.PerTask {
			indent = "    "
		}
		fmt.Fprintf(w, "%s%-*s %-10s %s\n", indent, 20-len(indent), d.Step, d.Action, d.Detail)
	}
	fmt.Fprintln(w, "Each phase's work is committed as the phase ends; in Phase 3, each task's in a commit of its own.")
}
