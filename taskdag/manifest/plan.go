package manifest

import (
	"github.com/git-crucible/git-crucible/report"
)

// FromPlan is the manifest of a plan writer's task list, for build's
// Phase 3: each task, in the plan's order, a feature task of agent with
// the plan's dependencies (received as well) and files, pending. It is
// validated as a manifest file is: tasks of one level that name the same
// file are refused, for they would run at once.
func FromPlan(goal, agent string, maxParallel int, tasks []report.PlanTask) (*Manifest, error) {
	m := &Manifest{Goal: goal, Status: RunPending, MaxParallel: max(maxParallel, 1),
		Commits: Commits{Strategy: "per-task", Approval: "auto", MessageSource: "objective"}}
	for _, pt := range tasks {
		m.Tasks = append(m.Tasks, Task{ID: pt.ID, Type: "feature", Agent: agent, Status: Pending, Line: pt.Line,
			DependsOn: append([]string(nil), pt.DependsOn...), Receives: append([]string(nil), pt.DependsOn...),
			Files: append([]string(nil), pt.Files...)})
		m.lines.tasks = append(m.lines.tasks, taskLines{dependsOn: repeat(pt.Line, len(pt.DependsOn)),
			receives: repeat(pt.Line, len(pt.DependsOn)), files: repeat(pt.Line, len(pt.Files))})
	}
	if errs := m.validate(); len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

func repeat(line, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = line
	}
	return out
}
