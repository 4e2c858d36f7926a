package record

import (
	"testing"

	"github.com/git-crucible/git-crucible/taskdag"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// A unit's message: one task's text (its first line the subject), or a
// group's tasks named and each one's text; the trailers once, with a
// Crucible-Task per task.
func TestUnitMessage(t *testing.T) {
	e := newEngine(t)
	m := &manifest.Manifest{Goal: "greet", Commits: manifest.Commits{MessageSource: "notes"}}
	tr := TaskRun{Manifest: m, Role: "implementer"}
	notes := func(id, text string) taskdag.Result {
		return taskdag.Result{ID: id, Report: []byte("status: completed\ndeviations: []\nnotes: " + text + "\n")}
	}
	number := map[string]int{"a": 1, "b": 2, "c": 3}
	trailers := "Crucible-Pipeline: " + e.ID + "\nCrucible-Phase: 3\n"
	for _, c := range []struct {
		unit []taskdag.Result
		want string
	}{
		{[]taskdag.Result{notes("a", `"Upper case.\nReads its arguments."`)}, "Upper case.\n\nReads its arguments.\n\n" + trailers + "Crucible-Task: 1\n"},
		{[]taskdag.Result{{ID: "b"}}, "Task b of greet\n\n" + trailers + "Crucible-Task: 2\n"},
		{[]taskdag.Result{notes("a", "one"), {ID: "b"}, notes("c", "three")},
			"Tasks a, b, c of greet\n\na: one\n\nc: three\n\n" + trailers + "Crucible-Task: 1\nCrucible-Task: 2\nCrucible-Task: 3\n"},
	} {
		if got := e.unitMessage(tr, taskdag.Unit{Results: c.unit}, number, 3); got != c.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
		}
	}
}
