// Package report reads what an agent writes to $CRUCIBLE_OUTPUT, in
// crucible's own formats (the dispatch seed's output.yaml): a task agent's
// report (Task), the plan writer's task list in its exports (Plan), and a
// reviewer's or red-team round's findings (Findings).
//
// Reports come from programs the engine does not trust to be careful: input
// is limited to MaxSize bytes, YAML aliases are refused (no expansion bombs),
// keys crucible agents add are ignored, and every problem is an *Error
// naming the line, never a panic.
package report
