package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// dryRunJSON is build --dry-run --json.
type dryRunJSON struct {
	Goal   string           `json:"goal"`
	Ready  bool             `json:"ready"` // no check refuses: the build would start
	Checks []dryCheck       `json:"checks"`
	Spec   string           `json:"spec,omitempty"`
	Steps  []engine.DryStep `json:"steps"`
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

	var steps []engine.DryStep
	if sp != nil {
		o := engine.DryWalkOptions{Design: c.String("design"), Yes: c.Bool("yes")}
		if c.IsSet("max-parallel") {
			o.MaxParallel = c.Int("max-parallel")
		}
		steps = engine.DryWalk(sp, agents, o)
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

// printDryRun prints the pre-flight's checks and the walk.
func printDryRun(w io.Writer, checks []dryCheck, sp *pipespec.Spec, steps []engine.DryStep) {
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
