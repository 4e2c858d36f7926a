package report

import (
	"container/heap"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PlanTask is one task of the plan writer's exports.tasks.
type PlanTask struct {
	ID        string
	Title     string
	DependsOn []string // ids of tasks that must finish first, duplicates dropped
	Files     []string
	FastGate  string // a shell command that checks this task quickly; "" when none
	Line      int    // where the task is in the report; 0 when not from one
}

// Plan is a validated task list: ids unique and well formed, every
// dependency known, no cycle. Only NewPlan and Task.Plan make one.
type Plan struct {
	tasks []PlanTask
	order []int // indexes into tasks, dependencies first
}

// maxIDLen bounds a task id, which ends up in environment variables,
// file names and journal lines.
const maxIDLen = 64

// ParsePlan reads a plan writer's output.yaml and its exports.tasks.
func ParsePlan(data []byte) (Plan, error) {
	t, err := ParseTask(data)
	if err != nil {
		return Plan{}, err
	}
	return t.Plan()
}

// Plan reads the task list the plan writer put in exports.tasks.
func (t Task) Plan() (Plan, error) { return t.PlanAt("tasks") }

// PlanAt reads a task list from the export named key (a spec may name its
// plan's export as it likes).
func (t Task) PlanAt(key string) (Plan, error) {
	missing := "no exports." + key + ": the plan writer lists its tasks there"
	if t.exports == nil {
		return Plan{}, errorf(0, "%s", missing)
	}
	fs, err := fields(t.exports)
	if err != nil {
		return Plan{}, err
	}
	f := lookup(fs, key)
	if f == nil {
		return Plan{}, errorf(t.exports.Line, "%s", missing)
	}
	if f.value.Kind != yaml.SequenceNode {
		return Plan{}, errorf(f.value.Line, "%s: want a list of tasks, found %s", key, kind(f.value))
	}
	tasks := make([]PlanTask, 0, len(f.value.Content))
	for _, item := range f.value.Content {
		pt, err := planTask(key, item)
		if err != nil {
			return Plan{}, err
		}
		tasks = append(tasks, pt)
	}
	if len(tasks) == 0 {
		return Plan{}, errorf(f.value.Line, "%s: the plan has no task", key)
	}
	return NewPlan(tasks)
}

func planTask(key string, n *yaml.Node) (PlanTask, error) {
	if n.Kind != yaml.MappingNode {
		return PlanTask{}, errorf(n.Line, "%s: want a task (id, title, depends-on, files, fast-gate), found %s", key, kind(n))
	}
	t := PlanTask{Line: n.Line}
	_, err := decode(n, map[string]reader{
		"id":         str(&t.ID),
		"title":      str(&t.Title),
		"depends-on": strs(&t.DependsOn),
		"files":      strs(&t.Files),
		"fast-gate":  str(&t.FastGate),
	})
	if err != nil {
		return PlanTask{}, err
	}
	return t, nil
}

// NewPlan validates tasks, in the order listed, and orders them. Errors
// carry the tasks' Line.
func NewPlan(tasks []PlanTask) (Plan, error) {
	index := make(map[string]int, len(tasks))
	p := Plan{tasks: make([]PlanTask, len(tasks))}
	for i, t := range tasks {
		if msg := badID(t.ID); msg != "" {
			return Plan{}, errorf(t.Line, "task %d: %s", i+1, msg)
		}
		if first, dup := index[t.ID]; dup {
			return Plan{}, errorf(t.Line, "duplicate task id %q (first on line %d)", t.ID, tasks[first].Line)
		}
		if strings.TrimSpace(t.Title) == "" {
			return Plan{}, errorf(t.Line, "task %q has no title", t.ID)
		}
		index[t.ID] = i
		t.DependsOn = dedupe(t.DependsOn)
		t.Files = append([]string(nil), t.Files...)
		p.tasks[i] = t
	}
	for _, t := range p.tasks {
		for _, d := range t.DependsOn {
			if _, ok := index[d]; !ok {
				return Plan{}, errorf(t.Line, "task %q depends on %q, which the plan does not have", t.ID, clip(d))
			}
		}
	}
	order, cycle := topo(p.tasks, index)
	if cycle != nil {
		ids := make([]string, 0, len(cycle)+1)
		for _, c := range append(cycle, cycle[0]) {
			ids = append(ids, p.tasks[c].ID)
		}
		return Plan{}, errorf(p.tasks[cycle[0]].Line, "dependency cycle: %s (each depends on the next)", strings.Join(ids, " -> "))
	}
	p.order = order
	return p, nil
}

// badID says what is wrong with a task id, or "".
func badID(id string) string {
	switch {
	case id == "":
		return "no id"
	case len(id) > maxIDLen:
		return "id longer than 64 bytes"
	case id[0] == '-' || id[0] == '.':
		return "id " + quote(id) + " starts with '" + id[:1] + "'"
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "id " + quote(id) + " has a character other than letters, digits, '-', '_' and '.'"
		}
	}
	return ""
}

func quote(s string) string { return `"` + clip(s) + `"` }

func dedupe(ids []string) []string {
	var out []string
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// topo orders tasks dependencies first; among the tasks ready at once the
// one listed first goes first, so a list already in order stays as it is.
// On a cycle it returns one: indexes where each depends on the next and
// the last on the first.
func topo(tasks []PlanTask, index map[string]int) (order, cycle []int) {
	waiting := make([]int, len(tasks)) // dependencies not yet ordered
	dependents := make([][]int, len(tasks))
	ready := &minHeap{}
	for i, t := range tasks {
		waiting[i] = len(t.DependsOn)
		for _, d := range t.DependsOn {
			dependents[index[d]] = append(dependents[index[d]], i)
		}
		if waiting[i] == 0 {
			heap.Push(ready, i)
		}
	}
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, i)
		for _, j := range dependents[i] {
			if waiting[j]--; waiting[j] == 0 {
				heap.Push(ready, j)
			}
		}
	}
	if len(order) == len(tasks) {
		return order, nil
	}
	// Every task left waits on another task left: walk first-listed
	// dependencies from the first one left until a task repeats.
	at := 0
	for waiting[at] == 0 {
		at++
	}
	seen := map[int]int{} // task -> position in path
	var path []int
	for {
		if start, ok := seen[at]; ok {
			return nil, path[start:]
		}
		seen[at] = len(path)
		path = append(path, at)
		for _, d := range tasks[at].DependsOn {
			if j := index[d]; waiting[j] > 0 {
				at = j
				break
			}
		}
	}
}

type minHeap []int

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Tasks returns the tasks in the order the plan listed them.
func (p Plan) Tasks() []PlanTask { return p.clone(nil) }

// Order returns the tasks in the order to run them: every task after the
// tasks it depends on, ties broken by the listed order.
func (p Plan) Order() []PlanTask { return p.clone(p.order) }

func (p Plan) clone(order []int) []PlanTask {
	out := make([]PlanTask, len(p.tasks))
	for i := range p.tasks {
		j := i
		if order != nil {
			j = order[i]
		}
		t := p.tasks[j]
		t.DependsOn = append([]string(nil), t.DependsOn...)
		t.Files = append([]string(nil), t.Files...)
		out[i] = t
	}
	return out
}
