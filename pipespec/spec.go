// Package pipespec is the pipeline spec of `git crucible build`: the phases and
// steps an engine walks, in TOML. Default is the embedded default.toml,
// which reproduces crucible's build skill; a work tree overrides it with
// .crucible/pipeline.toml, or a user with --spec FILE.
//
// # Shape
//
//	version = 1                   # optional; 1 is the only version
//	[[phases]]                    # exactly phases 1, 2, 3, 4, in order
//	number = 1
//	name = "Design"               # optional, for display
//	  [[phases.steps]]            # the phase's steps, in order
//	  id = "design-gate"          # required, unique in the spec
//	  kind = "gate"
//	  ...
//
// Every step has an id (lower-case letters, digits, dashes; unique in the
// whole spec, also inside tasks, because resume and replay name a step by
// it) and a kind:
//
//   - dispatch: one agent call. role and template are required; inputs,
//     outputs, exports and skip-if-exists are optional.
//   - gate: the phase's quality gate. Each round a fresh dispatch of role
//     (default "red-team") with template (default "red-team") returns
//     findings; between rounds fixer (default "fixer") with fix-template
//     (default "fixer") fixes artifact. max-rounds (1-15, default 15) is
//     the breaker. Phases 1, 2 and 4 need exactly one gate: its verdict is
//     the phase's PASS (or FAIL) in the ledger, so in phase 4, which it
//     closes, it is the last step. Phase 3 has none: it ends COMPLETE.
//   - review-loop: the same rounds with role defaulting to "reviewer";
//     template is required; progress is strictly fewer issues.
//   - run: command is a shell command run in the work tree, or one of
//     "test" (the project's test command), "acceptance" (the
//     acceptance-command export, or the project's test command when no
//     report gave one) and "fast-gate" (the current task's fast gate; a
//     task without one skips the step; only inside tasks). expect is
//     "pass" (default) or "fail" (RED acceptance tests).
//   - checkpoint: a working-tree checkpoint with reason name; inside tasks
//     the name may hold {{task}}, replaced by the task id.
//   - approve: the approval pause; `build --yes` or `git crucible approve`
//     goes on. message is shown.
//   - tasks: phase 3's plan tasks, exactly one, only in phase 3. from names
//     the export holding the task list; steps (a [[phases.steps.steps]]
//     array of dispatch, review-loop, run and checkpoint steps) run once
//     per task, one task at a time in dependency order.
//
// # Artifacts: how a step names earlier steps' outputs
//
// Artifacts have names unique in the spec and are declared by the one
// step that produces them:
//
//   - outputs = { design = "docs/design.md" } declares file artifacts: a
//     work-tree path the dispatch writes (relative, inside the work tree);
//   - exports = ["tasks"] declares values the dispatch's report carries
//     under exports. A later report carrying the same key (a fixer
//     revising the plan re-exports tasks) supersedes it: the newest wins.
//
// A later step names artifacts in inputs = ["design", "tasks"] (the
// prompt's Inputs: a file as its path, an export as its value), a gate or
// review-loop in artifact (a file, never an export), tasks in from (an
// export). A name must be declared by an earlier step, in walk order, or
// be "diff": a file the engine writes holding the change under review (in
// a task, the task's change; elsewhere the pipeline's since its baseline).
// An input export that no report carried is left out of Inputs; from's is
// required.
//
// A dispatch with skip-if-exists = true is skipped when all its output
// files exist already (the existing design doc) and no dispatch of the
// step was recorded: files a failed dispatch left are never taken as its
// output, the step dispatches again. `build --design FILE` is
// an engine option, not a spec feature: it supplies the artifact "design"
// at FILE and skips the step that produces it (Producer).
//
// # Trust
//
// A spec is code: its run steps are shell commands. A tracked
// .crucible/pipeline.toml can arrive with a pull request, so the engine
// must run it only after `git crucible trust` recorded its exact content
// (package trust); an untracked one or --spec FILE is the user's own. Its
// templates are prompts, not code, and need no trust (package prompt).
package pipespec

import (
	_ "embed"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/rounds"
)

// OverridePath is where a work tree keeps its own spec.
const OverridePath = ".crucible/pipeline.toml"

// MaxParallelLimit is the most tasks a tasks step may run at once.
const MaxParallelLimit = 16

// DefaultMaxRounds is the breaker of gates and review loops (package
// gate's, 15), and the most a spec may allow.
const DefaultMaxRounds = rounds.DefaultMaxRounds

// Diff is the built-in artifact: the change under review.
const Diff = "diff"

// Kind is a step's kind.
type Kind string

// The step kinds.
const (
	Dispatch   Kind = "dispatch"
	Gate       Kind = "gate"
	ReviewLoop Kind = "review-loop"
	Run        Kind = "run"
	Checkpoint Kind = "checkpoint"
	Approve    Kind = "approve"
	Tasks      Kind = "tasks"
)

// Reserved run commands.
const (
	CommandTest       = "test"
	CommandAcceptance = "acceptance"
	CommandFastGate   = "fast-gate"
)

// Expectations of a run step.
const (
	ExpectPass = "pass"
	ExpectFail = "fail"
)

// AcceptanceCommand is the export a run step's "acceptance" command uses.
const AcceptanceCommand = "acceptance-command"

// TaskPlaceholder in a checkpoint name inside tasks is the task id.
const TaskPlaceholder = "{{task}}"

// Spec is a validated pipeline spec.
type Spec struct {
	Source  string  `json:"source"` // the name errors use: a path, or "<built-in>/default.toml"
	Version int     `json:"version"`
	Phases  []Phase `json:"phases"` // phases 1-4, in order
}

// Phase is one of the four phases and its steps, in order.
type Phase struct {
	Number ledger.Phase `json:"number"`
	Name   string       `json:"name"`
	Steps  []Step       `json:"steps"`
	Line   int          `json:"-"`
	path   string       // in tomlpos.Lines, for validation errors
}

// Step is one step. Which fields mean something depends on Kind (see the
// package doc); defaults are filled in by Parse.
type Step struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`

	// dispatch, gate, review-loop
	Role     string            `json:"role,omitempty"`
	Template string            `json:"template,omitempty"`
	Inputs   []string          `json:"inputs,omitempty"`
	Outputs  map[string]string `json:"outputs,omitempty"` // dispatch: artifact -> work-tree path
	Exports  []string          `json:"exports,omitempty"` // dispatch
	// SkipIfExists skips a dispatch whose output files all exist.
	SkipIfExists bool `json:"skip-if-exists,omitempty"`

	// gate, review-loop
	Artifact    string `json:"artifact,omitempty"`
	Fixer       string `json:"fixer,omitempty"`
	FixTemplate string `json:"fix-template,omitempty"`
	MaxRounds   int    `json:"max-rounds,omitempty"`

	// run
	Command string `json:"command,omitempty"`
	Expect  string `json:"expect,omitempty"`

	// checkpoint
	Name string `json:"name,omitempty"`

	// approve
	Message string `json:"message,omitempty"`

	// tasks
	From  string `json:"from,omitempty"`
	Steps []Step `json:"steps,omitempty"`
	// MaxParallel is how many tasks' implementers run at once, each in
	// its own worktree (the task DAG); 1, the default, runs the tasks one
	// at a time in the work tree.
	MaxParallel int `json:"max-parallel,omitempty"`

	Line int    `json:"-"` // the line of the step's table header in Source
	path string // in tomlpos.Lines, for validation errors
}

//go:embed default.toml
var defaultTOML []byte

// DefaultSource names the embedded default in errors.
const DefaultSource = "<built-in>/default.toml"

var parsedDefault = lazy.Values[*Spec]{New: func() (*Spec, error) { return Parse(defaultTOML, DefaultSource, nil) }}

// Default is the embedded default spec. Its validity is a test's business:
// an error here means a broken build.
func Default() (*Spec, error) { return parsedDefault.Get() }

// DefaultTOML is the embedded default's text, to start an override from.
func DefaultTOML() []byte { return append([]byte(nil), defaultTOML...) }

// CheckpointName is a checkpoint step's reason for task (empty outside
// tasks).
func (s *Step) CheckpointName(task string) string {
	return strings.ReplaceAll(s.Name, TaskPlaceholder, task)
}

// Rounds reports whether the step runs rounds (a gate or a review loop).
func (s *Step) Rounds() bool { return s.Kind == Gate || s.Kind == ReviewLoop }

// Phase is phase n.
func (s *Spec) Phase(n ledger.Phase) *Phase {
	for i := range s.Phases {
		if s.Phases[i].Number == n {
			return &s.Phases[i]
		}
	}
	return nil
}

// Located is a step and where it is: its phase, and the tasks step whose
// per-task body holds it (nil at a phase's top level).
type Located struct {
	Phase  ledger.Phase
	Step   *Step
	Parent *Step
}

// Walk lists every step in walk order: phase by phase, a tasks step
// followed by its per-task steps.
func (s *Spec) Walk() []Located {
	var out []Located
	for i := range s.Phases {
		p := &s.Phases[i]
		for j := range p.Steps {
			st := &p.Steps[j]
			out = append(out, Located{Phase: p.Number, Step: st})
			for k := range st.Steps {
				out = append(out, Located{Phase: p.Number, Step: &st.Steps[k], Parent: st})
			}
		}
	}
	return out
}

// Find is the step with id.
func (s *Spec) Find(id string) (Located, bool) {
	for _, l := range s.Walk() {
		if l.Step.ID == id {
			return l, true
		}
	}
	return Located{}, false
}

// Gate is phase p's gate step, nil for phase 3.
func (s *Spec) Gate(p ledger.Phase) *Step {
	for _, l := range s.Walk() {
		if l.Phase == p && l.Step.Kind == Gate {
			return l.Step
		}
	}
	return nil
}

// Producer is the step declaring artifact name (an output file or an
// export), or nil for "diff" and unknown names.
func (s *Spec) Producer(name string) *Step {
	for _, l := range s.Walk() {
		if _, ok := l.Step.Outputs[name]; ok {
			return l.Step
		}
		for _, e := range l.Step.Exports {
			if e == name {
				return l.Step
			}
		}
	}
	return nil
}
