package manifest

import (
	"fmt"
	"strings"
)

// Task returns the task with id, or nil.
func (m *Manifest) Task(id string) *Task {
	if i, ok := m.index[id]; ok {
		return &m.Tasks[i]
	}
	return nil
}

// Level is the level of the task with id, from 1: one more than the
// highest level it depends on. 0 for an unknown id.
func (m *Manifest) Level(id string) int {
	if i, ok := m.index[id]; ok {
		return m.level[i]
	}
	return 0
}

// Levels lists the ids of each level's tasks, in the order listed:
// Levels()[0] is level 1.
func (m *Manifest) Levels() [][]string {
	var out [][]string
	for i, t := range m.Tasks {
		for len(out) < m.level[i] {
			out = append(out, nil)
		}
		out[m.level[i]-1] = append(out[m.level[i]-1], t.ID)
	}
	return out
}

// Ready lists the tasks that can be dispatched now, in the order listed:
// pending, with every dependency completed.
func (m *Manifest) Ready() []string {
	var out []string
	for _, t := range m.Tasks {
		if t.Status == Pending && m.blockers(t) == nil {
			out = append(out, t.ID)
		}
	}
	return out
}

// blockers lists t's dependencies that are not completed.
func (m *Manifest) blockers(t Task) []string {
	var out []string
	for _, d := range t.DependsOn {
		if m.Task(d).Status != Completed {
			out = append(out, d)
		}
	}
	return out
}

// Deadlock is a run that can go no further: tasks remain pending, none is
// ready and none is in flight (dispatched, committed or fixing) to
// unblock them.
type Deadlock struct {
	Blocked []Blocked // the pending tasks, in the order listed
}

// Blocked is a pending task and what it waits on.
type Blocked struct {
	ID      string
	Waiting []Dependency // in depends-on order
}

// Dependency is a task a blocked task waits on, and its status.
type Dependency struct {
	ID     string
	Status TaskStatus
}

func (d *Deadlock) Error() string {
	parts := make([]string, len(d.Blocked))
	for i, b := range d.Blocked {
		var waits []string
		for _, w := range b.Waiting {
			waits = append(waits, fmt.Sprintf("%s (%s)", w.ID, w.Status))
		}
		parts[i] = b.ID + " waits on " + strings.Join(waits, ", ")
	}
	noun := "tasks"
	if len(d.Blocked) == 1 {
		noun = "task"
	}
	return fmt.Sprintf("deadlock: %d %s can never run: %s", len(d.Blocked), noun, strings.Join(parts, "; "))
}

// Deadlocked says whether the run is stuck, and on what; nil when it can
// go on (or has nothing left to do).
func (m *Manifest) Deadlocked() *Deadlock {
	var d Deadlock
	for _, t := range m.Tasks {
		switch t.Status {
		case Dispatched, Committed, Fixing:
			return nil
		case Pending:
			bs := m.blockers(t)
			if bs == nil {
				return nil
			}
			b := Blocked{ID: t.ID}
			for _, id := range bs {
				b.Waiting = append(b.Waiting, Dependency{id, m.Task(id).Status})
			}
			d.Blocked = append(d.Blocked, b)
		}
	}
	if len(d.Blocked) == 0 {
		return nil
	}
	return &d
}

// SetStatus sets the status of the task with id, and its commit; it is
// how a run's events apply to the manifest.
func (m *Manifest) SetStatus(id string, st TaskStatus, commit string) error {
	t := m.Task(id)
	if t == nil {
		return fmt.Errorf("no task %q", id)
	}
	t.Status, t.CommitSHA = st, commit
	if st != Fixing {
		t.FixingSource = ""
	}
	return nil
}
