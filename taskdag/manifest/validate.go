package manifest

import (
	"errors"
	"sort"
	"strings"

	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/report"
)

// validate checks what the schema cannot: each task's own fields, the
// graph (ids, unknown dependencies, receives within depends-on, cycles),
// files two tasks of one level both name, and the fast gate. It sets the
// index and the levels when the graph is sound.
func (m *Manifest) validate() Errors {
	var errs Errors
	add := func(e *Error) { errs = append(errs, e) }
	ids := make(map[string]bool, len(m.Tasks))
	for _, t := range m.Tasks {
		ids[t.ID] = true
	}
	for i, t := range m.Tasks {
		lines := m.lines.tasks[i]
		if t.Agent == "" {
			add(errorf(t.Line, "task %q has no agent", clip(t.ID)))
		}
		if t.Type == "" && t.Agent != "explore" {
			add(errorf(t.Line, "task %q has no type (feature or bugfix): only explore tasks go without", clip(t.ID)))
		}
		deps := make(map[string]bool, len(t.DependsOn))
		for j, d := range t.DependsOn {
			deps[d] = true
			if !ids[d] {
				add(errorf(lines.dependsOn[j], "task %q depends on %q, which the manifest does not have", clip(t.ID), clip(d)))
			}
		}
		for j, r := range t.Receives {
			if !deps[r] {
				add(errorf(lines.receives[j], "task %q receives %q, which is not in its depends-on: receives must be a subset of depends-on", clip(t.ID), clip(r)))
			}
		}
		if (t.FixingSource != "") != (t.Status == Fixing) {
			add(errorf(t.Line, "task %q: fixing-source %q with status %s: the source is set exactly while fixing", clip(t.ID), t.FixingSource, t.Status))
		}
	}
	if len(errs) == 0 {
		if e := m.order(); e != nil {
			add(e)
		} else {
			errs = append(errs, m.sharedFiles()...)
		}
	}
	if e := m.Validation.check(m.lines.validation); e != nil {
		add(e)
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return errs
}

// order checks ids and cycles with report's plan validation (the plan
// writer's task lists obey the same rules) and sets the levels.
func (m *Manifest) order() *Error {
	tasks := make([]report.PlanTask, len(m.Tasks))
	for i, t := range m.Tasks {
		tasks[i] = report.PlanTask{ID: t.ID, Title: t.ID, DependsOn: t.DependsOn, Line: t.Line}
	}
	plan, err := report.NewPlan(tasks)
	if err != nil {
		var re *report.Error
		if errors.As(err, &re) {
			return errorf(re.Line, "%s", strings.Replace(re.Msg, "the plan does not have", "the manifest does not have", 1))
		}
		return errorf(0, "%v", err)
	}
	m.index = make(map[string]int, len(m.Tasks))
	for i, t := range m.Tasks {
		m.index[t.ID] = i
	}
	m.level = make([]int, len(m.Tasks))
	for _, pt := range plan.Order() {
		i := m.index[pt.ID]
		m.level[i] = 1
		for _, d := range pt.DependsOn {
			m.level[i] = max(m.level[i], m.level[m.index[d]]+1)
		}
	}
	return nil
}

// sharedFiles finds files two tasks of one level both name: they would
// run at once in separate worktrees and their changes clash at the
// fan-in. Tasks of one level never depend on each other, so the fix is an
// edge (or moving the file to one task).
func (m *Manifest) sharedFiles() Errors {
	var errs Errors
	type owner struct{ task, line int }
	owners := map[int]map[string]owner{} // level -> file -> first task naming it
	for i, t := range m.Tasks {
		lv := m.level[i]
		if owners[lv] == nil {
			owners[lv] = map[string]owner{}
		}
		for j, f := range t.Files {
			f = CleanPath(f)
			first, ok := owners[lv][f]
			if !ok {
				owners[lv][f] = owner{i, m.lines.tasks[i].files[j]}
				continue
			}
			if first.task == i {
				continue
			}
			errs = append(errs, errorf(m.lines.tasks[i].files[j],
				"tasks %q and %q (line %d) of level %d both name %s and neither depends on the other: add a depends-on edge between them",
				clip(m.Tasks[first.task].ID), clip(t.ID), first.line, lv, clip(f)))
		}
	}
	return errs
}

// CleanPath is a file's name as the tasks compare them.
func CleanPath(f string) string {
	f = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(f), "./"))
	return strings.TrimSuffix(f, "/")
}

// check refuses stub gates (verify-commits' rule)
// and a declared absence of a gate without its reason.
func (v Validation) check(line int) *Error {
	switch {
	case v.FastGate != "" && v.NoFastGate:
		return errorf(line, "validation: fast-gate and no-fast-gate: true both set: keep one")
	case v.NoFastGate && strings.TrimSpace(v.Reason) == "":
		return errorf(line, "validation: no-fast-gate: true needs a reason saying why the full verify pipeline is the minimum")
	case v.FastGate != "":
		if err := fastgate.CheckStub(v.FastGate); err != nil {
			return errorf(line, "validation.fast-gate: %v", err)
		}
	}
	return nil
}

// CommitGate is the command an amendment round runs at each commit it
// rebuilds, as the seed resolves it: validation.fast-gate, or with
// no-fast-gate the verify pipeline's commands (build, lint, test, then
// the custom ones, in verify.workdir) one after another. "" when the
// manifest gives neither: per-commit validation is then impossible.
func (m *Manifest) CommitGate() string {
	if m.Validation.FastGate != "" || !m.Validation.NoFastGate {
		return m.Validation.FastGate
	}
	var cmds []string
	for _, c := range []string{m.Verify.Build, m.Verify.Lint, m.Verify.Test} {
		if strings.TrimSpace(c) != "" {
			cmds = append(cmds, "("+c+")")
		}
	}
	for _, c := range m.Verify.Custom {
		cmds = append(cmds, "("+c.Command+")")
	}
	if len(cmds) == 0 {
		return ""
	}
	gate := strings.Join(cmds, " && ")
	if m.Verify.Workdir != "" {
		gate = "cd '" + strings.ReplaceAll(m.Verify.Workdir, "'", `'\''`) + "' && " + gate
	}
	return gate
}
