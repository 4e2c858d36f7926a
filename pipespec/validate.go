package pipespec

import (
	"fmt"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/internal/tomlpos"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/prompt"
)

// validName is the shape of step ids, roles and artifact names.
var validName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) }}

// validReason is a checkpoint name once {{task}} is replaced.
var validReason = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) }}

// inTasks are the kinds a tasks step's per-task body may hold.
var inTasks = lazy.Value[map[Kind]bool]{New: func() map[Kind]bool {
	return map[Kind]bool{Dispatch: true, ReviewLoop: true, Run: true, Checkpoint: true}
}}

// artifact is a declared artifact and where.
type artifact struct {
	export bool
	line   int
}

// validator checks the meaning of a decoded spec, in walk order.
type validator struct {
	*decoder
	templates *prompt.Set
	ids       map[string]int      // step id -> line of its id
	artifacts map[string]artifact // declared so far
}

func (d *decoder) validate(sp *Spec, templates *prompt.Set) {
	v := &validator{decoder: d, templates: templates, ids: map[string]int{}, artifacts: map[string]artifact{}}
	if sp.Version != 1 {
		d.errorf("version", "version %d is not supported (1 is)", sp.Version)
	}
	v.phases(sp)
	for i := range sp.Phases {
		p := &sp.Phases[i]
		for j := range p.Steps {
			v.step(p, &p.Steps[j], nil)
		}
		v.phaseShape(p)
	}
}

// phases checks that phases 1-4 each appear once, in order.
func (v *validator) phases(sp *Spec) {
	seen := map[ledger.Phase]int{} // phase -> line of its number
	last := ledger.Phase(0)
	for _, p := range sp.Phases {
		at := tomlpos.Join(p.path, "number")
		switch {
		case p.Number == 0:
			v.errorf(p.path, "a phase needs a number (1-4)")
			continue
		case !p.Number.Valid():
			v.errorf(at, "phase number %d is not 1-4", p.Number)
			continue
		case seen[p.Number] != 0:
			v.errorf(at, "phase %d appears twice (first at line %d)", p.Number, seen[p.Number])
			continue
		case p.Number < last:
			v.errorf(at, "phase %d comes after phase %d: phases go 1, 2, 3, 4 in order", p.Number, last)
		}
		seen[p.Number] = max(1, tomlpos.LineOf(v.lines, at))
		last = max(last, p.Number)
	}
	for _, n := range ledger.Phases {
		if seen[n] == 0 {
			v.errorf("", "phase %d (%s) is missing: a spec has all four phases", n, n.Name())
		}
	}
}

// phaseShape checks a phase's gates and tasks against what the ledger
// records for it.
func (v *validator) phaseShape(p *Phase) {
	if !p.Number.Valid() {
		return
	}
	name := fmt.Sprintf("phase %d (%s)", p.Number, p.Number.Name())
	var gates, tasks []*Step
	for i := range p.Steps {
		switch s := &p.Steps[i]; s.Kind {
		case Gate:
			gates = append(gates, s)
		case Tasks:
			tasks = append(tasks, s)
		}
	}
	if !p.Number.HasQualityGate() {
		for _, g := range gates {
			v.errorf(tomlpos.Join(g.path, "kind"), "%s has no quality gate: it ends COMPLETE when its tasks are done", name)
		}
		if len(tasks) == 0 {
			v.errorf(p.path, "%s needs a tasks step", name)
		}
	} else if len(gates) == 0 {
		v.errorf(p.path, "%s needs a gate step: the ledger's PASS for it is a gate verdict", name)
	}
	for _, extra := range gates[min(1, len(gates)):] {
		if p.Number.HasQualityGate() {
			v.errorf(tomlpos.Join(extra.path, "kind"), "%s has a second gate (the first at line %d): one gate gives a phase its verdict", name, gates[0].Line)
		}
	}
	for _, extra := range tasks[min(1, len(tasks)):] {
		v.errorf(tomlpos.Join(extra.path, "kind"), "%s has a second tasks step (the first at line %d)", name, tasks[0].Line)
	}
	if p.Number == ledger.Completion && len(gates) > 0 {
		if last := &p.Steps[len(p.Steps)-1]; last != gates[len(gates)-1] {
			v.errorf(last.path, "step %q comes after %s's gate, whose PASS closes the pipeline: the gate must be the phase's last step", last.ID, name)
		}
	}
}

func (v *validator) step(p *Phase, s *Step, parent *Step) {
	v.id(s)
	if parent != nil && !inTasks.Get()[s.Kind] {
		v.errorf(tomlpos.Join(s.path, "kind"), "%s steps cannot run per task (inside tasks: dispatch, review-loop, run and checkpoint)", s.Kind)
	}
	switch s.Kind {
	case Dispatch:
		v.role(s, "role", s.Role)
		v.template(s, "template", s.Template)
		v.inputs(s)
		v.declare(s, parent)
		if s.SkipIfExists && len(s.Outputs) == 0 {
			v.errorf(tomlpos.Join(s.path, "skip-if-exists"), "skip-if-exists needs outputs: it skips the step when they all exist")
		}
	case Gate, ReviewLoop:
		v.role(s, "role", s.Role)
		v.role(s, "fixer", s.Fixer)
		v.template(s, "template", s.Template)
		v.template(s, "fix-template", s.FixTemplate)
		v.inputs(s)
		v.file(s, "artifact", s.Artifact)
		if s.MaxRounds < 1 || s.MaxRounds > DefaultMaxRounds {
			v.errorf(tomlpos.Join(s.path, "max-rounds"), "max-rounds %d is out of range 1-%d", s.MaxRounds, DefaultMaxRounds)
		}
	case Run:
		switch {
		case s.Command == "":
			v.errorf(s.path, "a run step needs a command (a shell command, %q, %q or %q)", CommandTest, CommandAcceptance, CommandFastGate)
		case s.Command == CommandFastGate && parent == nil:
			v.errorf(tomlpos.Join(s.path, "command"), "command %q runs a task's fast gate: only inside tasks", CommandFastGate)
		}
		if s.Expect != ExpectPass && s.Expect != ExpectFail {
			v.errorf(tomlpos.Join(s.path, "expect"), "expect %q is not %q or %q", s.Expect, ExpectPass, ExpectFail)
		}
	case Checkpoint:
		name := s.Name
		if parent != nil {
			name = s.CheckpointName("task-1")
		}
		switch {
		case s.Name == "":
			v.errorf(s.path, "a checkpoint step needs a name")
		case parent == nil && strings.Contains(s.Name, TaskPlaceholder):
			v.errorf(tomlpos.Join(s.path, "name"), "checkpoint name %q: %s is the task id, only inside tasks", s.Name, TaskPlaceholder)
		case !validReason.Get().MatchString(name):
			v.errorf(tomlpos.Join(s.path, "name"), "checkpoint name %q: want letters, digits, '.', '_', '-' (and %s inside tasks)", s.Name, TaskPlaceholder)
		}
	case Tasks:
		if p.Number != ledger.Execute {
			v.errorf(tomlpos.Join(s.path, "kind"), "a tasks step belongs in phase 3 (Execute), not phase %d", p.Number)
		}
		if s.From == "" {
			v.errorf(s.path, "a tasks step needs from: the export holding the plan's task list")
		} else if a, ok := v.artifacts[s.From]; !ok || !a.export {
			v.errorf(tomlpos.Join(s.path, "from"), "from %q is not an export of an earlier step (exports = [%q])", s.From, s.From)
		}
		if len(s.Steps) == 0 {
			v.errorf(s.path, "a tasks step needs steps ([[phases.steps.steps]]) to run per task")
		}
		if s.MaxParallel < 1 || s.MaxParallel > MaxParallelLimit {
			v.errorf(tomlpos.Join(s.path, "max-parallel"), "max-parallel %d is out of range 1-%d", s.MaxParallel, MaxParallelLimit)
		}
		for i := range s.Steps {
			v.step(p, &s.Steps[i], s)
		}
	}
}

func (v *validator) id(s *Step) {
	at := tomlpos.Join(s.path, "id")
	switch first, dup := v.ids[s.ID]; {
	case s.ID == "":
		v.errorf(s.path, "a step needs an id")
	case !validName.Get().MatchString(s.ID):
		v.errorf(at, "step id %q: want lower-case letters, digits and dashes", s.ID)
	case dup:
		v.errorf(at, "duplicate step id %q (first at line %d)", s.ID, first)
	default:
		v.ids[s.ID] = tomlpos.LineOf(v.lines, at)
	}
}

func (v *validator) role(s *Step, key, role string) {
	switch {
	case role == "":
		v.errorf(s.path, "a %s step needs a %s", s.Kind, key)
	case !validName.Get().MatchString(role):
		v.errorf(tomlpos.Join(s.path, key), "%s %q: want lower-case letters, digits and dashes", key, role)
	}
}

func (v *validator) template(s *Step, key, name string) {
	switch {
	case name == "":
		v.errorf(s.path, "a %s step needs a %s", s.Kind, key)
	case !v.templates.Has(name):
		v.errorf(tomlpos.Join(s.path, key), "unknown template %q (there are: %s)", name, strings.Join(v.templates.Names(), ", "))
	}
}

// inputs checks that each input is declared by an earlier step.
func (v *validator) inputs(s *Step) {
	for _, in := range s.Inputs {
		if _, ok := v.artifacts[in]; !ok && in != Diff {
			v.errorf(tomlpos.Join(s.path, "inputs"), "input %q is not an output or export of an earlier step (nor %q)", in, Diff)
		}
	}
}

// file checks that a gate's or loop's artifact is a file it can examine.
func (v *validator) file(s *Step, key, name string) {
	a, ok := v.artifacts[name]
	switch {
	case name == "":
		v.errorf(s.path, "a %s step needs an %s: the file it reviews (an earlier output, or %q)", s.Kind, key, Diff)
	case name == Diff:
	case !ok:
		v.errorf(tomlpos.Join(s.path, key), "%s %q is not an output of an earlier step (nor %q)", key, name, Diff)
	case a.export:
		v.errorf(tomlpos.Join(s.path, key), "%s %q is an export, not a file to review", key, name)
	}
}

// declare records a dispatch's outputs and exports as artifacts.
func (v *validator) declare(s *Step, parent *Step) {
	if parent != nil && (len(s.Outputs) > 0 || len(s.Exports) > 0) {
		v.errorf(s.path, "a step inside tasks runs once per task: it cannot declare outputs or exports")
		return
	}
	add := func(key, name string, export bool) {
		at := tomlpos.Join(s.path, key)
		switch first, dup := v.artifacts[name]; {
		case !validName.Get().MatchString(name) || name == Diff:
			v.errorf(at, "artifact name %q: want lower-case letters, digits and dashes, and not %q", name, Diff)
		case dup:
			v.errorf(at, "artifact %q is declared twice (first at line %d)", name, first.line)
		default:
			v.artifacts[name] = artifact{export: export, line: tomlpos.LineOf(v.lines, at)}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Outputs)) {
		path := s.Outputs[name]
		if !filepath.IsLocal(path) || filepath.ToSlash(filepath.Clean(path)) != path || isGitPath(path) {
			v.errorf(tomlpos.Join(s.path, "outputs"), "output %s = %q: want a clean relative path inside the work tree, outside .git", name, path)
		}
		add("outputs", name, false)
	}
	for _, name := range s.Exports {
		add("exports", name, true)
	}
}

func isGitPath(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return strings.EqualFold(first, ".git")
}
