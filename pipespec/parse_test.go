package pipespec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// minimal is the smallest valid spec; the cases below break it. Its line
// numbers matter: the expected errors name them.
const minimal = `[[phases]]
number = 1
[[phases.steps]]
id = "design"
kind = "dispatch"
role = "design-writer"
template = "design-writer"
outputs = { design = "docs/design.md" }
[[phases.steps]]
id = "design-gate"
kind = "gate"
artifact = "design"
[[phases]]
number = 2
[[phases.steps]]
id = "plan"
kind = "dispatch"
role = "plan-writer"
template = "plan-writer"
inputs = ["design"]
outputs = { plan = "docs/plan.md" }
exports = ["tasks"]
[[phases.steps]]
id = "plan-gate"
kind = "gate"
artifact = "plan"
[[phases]]
number = 3
[[phases.steps]]
id = "tasks"
kind = "tasks"
from = "tasks"
[[phases.steps.steps]]
id = "implement"
kind = "dispatch"
role = "implementer"
template = "implementer"
[[phases]]
number = 4
[[phases.steps]]
id = "code-gate"
kind = "gate"
artifact = "diff"
`

// edit replaces old, which must occur once in minimal, by new.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	s := minimal
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.Count(s, pairs[i]) != 1 {
			t.Fatalf("%q occurs %d times", pairs[i], strings.Count(s, pairs[i]))
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

func TestMinimalParses(t *testing.T) {
	sp, err := Parse([]byte(minimal), "x.toml", nil) // nil: the built-in templates
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, l := range sp.Walk() {
		lines = append(lines, l.Step.Line)
	}
	if want := []int{3, 9, 15, 23, 29, 33, 40}; !reflect.DeepEqual(lines, want) {
		t.Errorf("step lines %v, want %v", lines, want)
	}
	g := sp.Gate(4)
	if g == nil || g.ID != "code-gate" || g.Role != "red-team" || g.Template != "red-team" || g.Fixer != "fixer" || g.FixTemplate != "fixer" || g.MaxRounds != 15 {
		t.Errorf("phase 4's gate with its defaults: %+v", g)
	}
	if sp.Gate(3) != nil || sp.Producer("tasks").ID != "plan" || sp.Producer("design").ID != "design" || sp.Producer("diff") != nil {
		t.Errorf("Gate(3) or Producer wrong")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		want string
	}{
		{"toml syntax", edit(t, `id = "plan"`, `id = "plan`),
			`x.toml:16: strings cannot contain newlines`},
		{"duplicate toml key", edit(t, `id = "plan"`, "id = \"plan\"\nid = \"again\""),
			`x.toml:17: Key 'phases.steps.id' has already been defined.`},
		{"unknown top-level key", "colour = \"red\"\n" + minimal,
			`x.toml:1: unknown key "colour" (a spec has version and phases)`},
		{"unknown phase key", edit(t, "number = 2\n", "number = 2\ngate = true\n"),
			`x.toml:15: unknown key "gate" in a phase (it has number, name and steps)`},
		{"unknown step key", edit(t, `artifact = "diff"`, "artifact = \"diff\"\nbogus = 1"),
			`x.toml:44: unknown key "bogus" in a gate step`},
		{"another kind's key", edit(t, `artifact = "design"`, "artifact = \"design\"\nexpect = \"fail\""),
			`x.toml:13: unknown key "expect" in a gate step`},
		{"unknown kind", edit(t, `kind = "tasks"`, `kind = "task"`),
			`x.toml:31: unknown step kind "task" (dispatch, gate, review-loop, run, checkpoint, approve, tasks)`},
		{"missing kind", edit(t, "kind = \"dispatch\"\nrole = \"design-writer\"", `role = "design-writer"`),
			`x.toml:3: a step needs a kind (dispatch, gate, review-loop, run, checkpoint, approve, tasks)`},
		{"wrong type", edit(t, "number = 4", `number = "four"`),
			"x.toml:39: number must be an integer"},
		{"missing id", edit(t, `id = "plan-gate"`, ``),
			`x.toml:23: a step needs an id`},
		{"bad id", edit(t, `id = "plan-gate"`, `id = "Plan gate"`),
			`x.toml:24: step id "Plan gate": want lower-case letters, digits and dashes`},
		{"duplicate id", edit(t, `id = "plan"`, `id = "design"`),
			`x.toml:16: duplicate step id "design" (first at line 4)`},
		{"duplicate id inside tasks", edit(t, `id = "implement"`, `id = "tasks"`),
			`x.toml:34: duplicate step id "tasks" (first at line 30)`},
		{"version", "version = 2\n" + minimal,
			`x.toml:1: version 2 is not supported (1 is)`},
		{"phases out of order", edit(t, "[[phases]]\nnumber = 3\n[[phases.steps]]\nid = \"tasks\"\nkind = \"tasks\"\nfrom = \"tasks\"\n[[phases.steps.steps]]\nid = \"implement\"\nkind = \"dispatch\"\nrole = \"implementer\"\ntemplate = \"implementer\"\n", "",
			"[[phases]]\nnumber = 4\n[[phases.steps]]\nid = \"code-gate\"\nkind = \"gate\"\nartifact = \"diff\"\n",
			"[[phases]]\nnumber = 4\n[[phases.steps]]\nid = \"code-gate\"\nkind = \"gate\"\nartifact = \"diff\"\n[[phases]]\nnumber = 3\n[[phases.steps]]\nid = \"tasks\"\nkind = \"tasks\"\nfrom = \"tasks\"\n[[phases.steps.steps]]\nid = \"implement\"\nkind = \"dispatch\"\nrole = \"implementer\"\ntemplate = \"implementer\"\n"),
			`x.toml:34: phase 3 comes after phase 4: phases go 1, 2, 3, 4 in order`},
		{"phase twice", edit(t, "number = 4", "number = 2"),
			"x.toml:39: phase 2 appears twice (first at line 14)\nx.toml: phase 4 (Completion) is missing: a spec has all four phases"},
		{"phase out of range", edit(t, "number = 4", "number = 5"),
			"x.toml:39: phase number 5 is not 1-4\nx.toml: phase 4 (Completion) is missing: a spec has all four phases"},
		{"phase without number", edit(t, "number = 4\n", ""),
			"x.toml:38: a phase needs a number (1-4)\nx.toml: phase 4 (Completion) is missing: a spec has all four phases"},
		{"no gate in phase 2", edit(t, "kind = \"gate\"\nartifact = \"plan\"", "kind = \"review-loop\"\ntemplate = \"plan-reviewer\"\nartifact = \"plan\""),
			`x.toml:13: phase 2 (Plan) needs a gate step: the ledger's PASS for it is a gate verdict`},
		{"second gate in phase 1", edit(t, "[[phases]]\nnumber = 2", "[[phases.steps]]\nid = \"again\"\nkind = \"gate\"\nartifact = \"design\"\n[[phases]]\nnumber = 2"),
			`x.toml:15: phase 1 (Design) has a second gate (the first at line 9): one gate gives a phase its verdict`},
		{"gate in phase 3", edit(t, "[[phases]]\nnumber = 4", "[[phases.steps]]\nid = \"task-gate\"\nkind = \"gate\"\nartifact = \"plan\"\n[[phases]]\nnumber = 4"),
			`x.toml:40: phase 3 (Execute) has no quality gate: it ends COMPLETE when its tasks are done`},
		{"gate not last in phase 4", minimal + "[[phases.steps]]\nid = \"after\"\nkind = \"run\"\ncommand = \"test\"\n",
			`x.toml:44: step "after" comes after phase 4 (Completion)'s gate, whose PASS closes the pipeline: the gate must be the phase's last step`},
		{"no tasks in phase 3", edit(t, "kind = \"tasks\"\nfrom = \"tasks\"\n[[phases.steps.steps]]\nid = \"implement\"\n", "kind = \"run\"\ncommand = \"test\"\n[[phases.steps]]\nid = \"implement\"\n"),
			`x.toml:27: phase 3 (Execute) needs a tasks step`},
		{"tasks outside phase 3", edit(t, "kind = \"gate\"\nartifact = \"diff\"", "kind = \"gate\"\nartifact = \"diff\"\n[[phases.steps]]\nid = \"more\"\nkind = \"tasks\"\nfrom = \"tasks\"\n  [[phases.steps.steps]]\n  id = \"x\"\n  kind = \"checkpoint\"\n  name = \"x\""),
			"x.toml:44: step \"more\" comes after phase 4 (Completion)'s gate, whose PASS closes the pipeline: the gate must be the phase's last step\n" +
				"x.toml:46: a tasks step belongs in phase 3 (Execute), not phase 4"},
		{"unknown template", edit(t, `template = "implementer"`, `template = "implementor"`),
			`x.toml:37: unknown template "implementor" (there are: code-reviewer, critique, design-writer, fixer, implementer, plan-reviewer, plan-writer, red-team, task, test-writer)`},
		{"partial is not a template", edit(t, `template = "implementer"`, `template = "_report"`),
			`x.toml:37: unknown template "_report" (there are: code-reviewer, critique, design-writer, fixer, implementer, plan-reviewer, plan-writer, red-team, task, test-writer)`},
		{"unknown fix-template", edit(t, `artifact = "plan"`, "artifact = \"plan\"\nfix-template = \"mender\""),
			`x.toml:27: unknown template "mender" (there are: code-reviewer, critique, design-writer, fixer, implementer, plan-reviewer, plan-writer, red-team, task, test-writer)`},
		{"max-rounds too high", edit(t, `artifact = "diff"`, "artifact = \"diff\"\nmax-rounds = 40"),
			`x.toml:44: max-rounds 40 is out of range 1-15`},
		{"max-rounds zero", edit(t, `artifact = "plan"`, "artifact = \"plan\"\nmax-rounds = 0"),
			`x.toml:27: max-rounds 0 is out of range 1-15`},
		{"max-rounds not an integer", edit(t, `artifact = "plan"`, "artifact = \"plan\"\nmax-rounds = \"15\""),
			`x.toml:27: max-rounds must be an integer`},
		{"max-parallel too high", edit(t, `from = "tasks"`, "from = \"tasks\"\nmax-parallel = 17"),
			`x.toml:33: max-parallel 17 is out of range 1-16`},
		{"max-parallel zero", edit(t, `from = "tasks"`, "from = \"tasks\"\nmax-parallel = 0"),
			`x.toml:33: max-parallel 0 is out of range 1-16`},
		{"input not declared", edit(t, `inputs = ["design"]`, `inputs = ["desing"]`),
			`x.toml:20: input "desing" is not an output or export of an earlier step (nor "diff")`},
		{"input declared later", edit(t, `inputs = ["design"]`, `inputs = ["design", "plan"]`),
			`x.toml:20: input "plan" is not an output or export of an earlier step (nor "diff")`},
		{"gate on an export", edit(t, `artifact = "plan"`, `artifact = "tasks"`),
			`x.toml:26: artifact "tasks" is an export, not a file to review`},
		{"gate without artifact", edit(t, `artifact = "plan"`, ``),
			`x.toml:23: a gate step needs an artifact: the file it reviews (an earlier output, or "diff")`},
		{"from not an export", edit(t, `from = "tasks"`, `from = "plan"`),
			`x.toml:32: from "plan" is not an export of an earlier step (exports = ["plan"])`},
		{"artifact declared twice", edit(t, `outputs = { plan = "docs/plan.md" }`, `outputs = { design = "docs/plan.md" }`),
			"x.toml:21: artifact \"design\" is declared twice (first at line 8)\n" +
				"x.toml:26: artifact \"plan\" is not an output of an earlier step (nor \"diff\")"},
		{"output outside the work tree", edit(t, `outputs = { design = "docs/design.md" }`, `outputs = { design = "../design.md" }`),
			`x.toml:8: output design = "../design.md": want a clean relative path inside the work tree, outside .git`},
		{"output in .git", edit(t, `outputs = { design = "docs/design.md" }`, `outputs = { design = ".git/design.md" }`),
			`x.toml:8: output design = ".git/design.md": want a clean relative path inside the work tree, outside .git`},
		{"outputs per task", edit(t, `template = "implementer"`, "template = \"implementer\"\noutputs = { notes = \"notes.md\" }"),
			`x.toml:33: a step inside tasks runs once per task: it cannot declare outputs or exports`},
		{"skip-if-exists without outputs", edit(t, `template = "implementer"`, "template = \"implementer\"\nskip-if-exists = true"),
			`x.toml:38: skip-if-exists needs outputs: it skips the step when they all exist`},
		{"approve per task", edit(t, "kind = \"dispatch\"\nrole = \"implementer\"\ntemplate = \"implementer\"", "kind = \"approve\""),
			`x.toml:35: approve steps cannot run per task (inside tasks: dispatch, review-loop, run and checkpoint)`},
		{"fast-gate outside tasks", minimal[:strings.Index(minimal, "[[phases]]\nnumber = 2")] + "[[phases.steps]]\nid = \"fg\"\nkind = \"run\"\ncommand = \"fast-gate\"\n" + minimal[strings.Index(minimal, "[[phases]]\nnumber = 2"):],
			`x.toml:16: command "fast-gate" runs a task's fast gate: only inside tasks`},
		{"bad expect", edit(t, "[[phases]]\nnumber = 4\n[[phases.steps]]", "[[phases]]\nnumber = 4\n[[phases.steps]]\nid = \"red\"\nkind = \"run\"\ncommand = \"test\"\nexpect = \"red\"\n[[phases.steps]]"),
			`x.toml:44: expect "red" is not "pass" or "fail"`},
		{"run without command", edit(t, "[[phases]]\nnumber = 4\n[[phases.steps]]", "[[phases]]\nnumber = 4\n[[phases.steps]]\nid = \"red\"\nkind = \"run\"\n[[phases.steps]]"),
			`x.toml:40: a run step needs a command (a shell command, "test", "acceptance" or "fast-gate")`},
		{"task placeholder outside tasks", edit(t, "[[phases]]\nnumber = 4\n[[phases.steps]]", "[[phases]]\nnumber = 4\n[[phases.steps]]\nid = \"cp\"\nkind = \"checkpoint\"\nname = \"pre-{{task}}\"\n[[phases.steps]]"),
			`x.toml:43: checkpoint name "pre-{{task}}": {{task}} is the task id, only inside tasks`},
		{"bad checkpoint name", edit(t, "kind = \"dispatch\"\nrole = \"implementer\"\ntemplate = \"implementer\"", "kind = \"checkpoint\"\nname = \"pre task {{task}}\""),
			`x.toml:36: checkpoint name "pre task {{task}}": want letters, digits, '.', '_', '-' (and {{task}} inside tasks)`},
		{"bad role", edit(t, `role = "plan-writer"`, `role = "Plan Writer"`),
			`x.toml:18: role "Plan Writer": want lower-case letters, digits and dashes`},
		{"phases not an array of tables", "[phases]\nnumber = 1\n",
			"x.toml:1: phases must be an array of tables ([[phases]])"},
		{"inline steps fall back to the array's line", edit(t, "[[phases.steps]]\nid = \"code-gate\"\nkind = \"gate\"\nartifact = \"diff\"\n", "steps = [ { id = \"code-gate\", kind = \"gate\", artifact = \"diff\", max-rounds = 99 } ]\n"),
			`x.toml:40: max-rounds 99 is out of range 1-15`},
		{"empty", "",
			"x.toml: phase 1 (Design) is missing: a spec has all four phases\n" +
				"x.toml: phase 2 (Plan) is missing: a spec has all four phases\n" +
				"x.toml: phase 3 (Execute) is missing: a spec has all four phases\n" +
				"x.toml: phase 4 (Completion) is missing: a spec has all four phases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Parse([]byte(tc.spec), "x.toml", templates(t))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v, %v; want an *Error", sp, err)
			}
			if err.Error() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}
