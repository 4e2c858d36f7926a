package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/pipespec"
)

// DryStep is one step of a walk as build --dry-run shows it (its --json
// fields too): what the build would do there.
type DryStep struct {
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

// DryWalkOptions are the build's flags that change its walk.
type DryWalkOptions struct {
	Design      string // build --design: the design's writer is not dispatched
	Yes         bool   // build --yes: the approval pause approves
	MaxParallel int    // build --max-parallel, when above 0
}

// DryWalk is the walk of sp a build with o would take, agents (nil when
// unknown) running its roles: each step, what it does. Nothing runs.
func DryWalk(sp *pipespec.Spec, agents *agent.Config, o DryWalkOptions) []DryStep {
	// who is the agent that plays role, and whether a person does.
	who := func(role string) (name string, manual bool) {
		if role == "" || agents == nil {
			return "", false
		}
		a, err := agents.Resolve(role)
		if err != nil {
			return "(none)", false
		}
		return a.Name, a.Kind == agent.Manual
	}
	var out []DryStep
	var add func(ph pipespec.Phase, st *pipespec.Step, perTask bool)
	add = func(ph pipespec.Phase, st *pipespec.Step, perTask bool) {
		d := DryStep{Phase: int(ph.Number), PhaseName: ph.Name, Step: st.ID, PerTask: perTask, Kind: string(st.Kind)}
		switch st.Kind {
		case pipespec.Checkpoint:
			d.Action, d.Detail = "checkpoint", "takes checkpoint "+st.CheckpointName("<task>")
		case pipespec.Dispatch:
			var manual bool
			d.Role, d.Template = st.Role, st.Template
			d.Agent, manual = who(st.Role)
			d.Action, d.Detail = "dispatch", fmt.Sprintf("%s: %s (template %s)", st.Role, d.Agent, st.Template)
			if manual {
				d.Action, d.Detail = "manual", d.Detail+": waits for a person to finish it"
			}
			if st.SkipIfExists && len(st.Outputs) > 0 {
				var paths []string
				for _, name := range slices.Sorted(maps.Keys(st.Outputs)) {
					paths = append(paths, st.Outputs[name])
				}
				d.Detail += "; skipped if " + strings.Join(paths, ", ") + " exists"
			}
			if file := o.Design; file != "" && sp.Producer("design") == st {
				d.Action, d.Detail = "skip", "the design is "+file+" (--design): not dispatched"
			}
		case pipespec.Gate, pipespec.ReviewLoop:
			d.Role, d.Template = st.Role, st.Template
			d.Agent, _ = who(st.Role)
			d.Action = "rounds"
			judges := "judges %s in fresh rounds"
			if st.Kind == pipespec.ReviewLoop {
				judges = "reviews %s in rounds"
			}
			d.Detail = fmt.Sprintf("%s: %s (template %s) "+judges+" until a clean one, at most %d",
				st.Role, d.Agent, st.Template, st.Artifact, st.MaxRounds)
			if st.Fixer != "" {
				d.Fixer, d.FixTemplate = st.Fixer, st.FixTemplate
				d.FixerAgent, _ = who(st.Fixer)
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
			if o.Yes {
				d.Action, d.Detail = "approve", "approved by --yes, with the commands agents wrote so far"
			}
		case pipespec.Tasks:
			n := st.MaxParallel
			if o.MaxParallel > 0 {
				n = o.MaxParallel
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
