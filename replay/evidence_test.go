package replay

import (
	"maps"
	"strings"
	"testing"
)

// logRecord is one commit as Gather's git log prints it.
func logRecord(pipeline, seqs, note, message string) string {
	return "\x1e" + pipeline + "\x1f" + seqs + "\x1f" + note + "\x1f" + message
}

func TestCommitsOf(t *testing.T) {
	log := logRecord("p1", "3", "", "Take the name (task 1)\n\nCrucible-Seq: 3\n") +
		logRecord("p2", "4", "", "another pipeline's\n") +
		logRecord("", "", `{"pipeline":"p1","phase":3,"seq":5}`+"\n"+`{"pipeline":"p2","phase":3,"seq":6}`, "noted\n") +
		logRecord("", "", "", "Test it (task 2)\n\nimplementer dispatch 7 of pipeline p1.\n") +
		logRecord("", "", "not json", "dispatch 8 of pipeline p10.\n")
	got := map[int]bool{}
	commitsOf([]byte(log), "p1", got)
	if want := map[int]bool{3: true, 5: true, 7: true}; !maps.Equal(got, want) {
		t.Errorf("commitsOf = %v, want %v", got, want)
	}
}

// FuzzCommitsOf: commit messages and notes come from remotes; whatever they
// hold, commitsOf never panics and finds seqs only for a pipeline the log
// names.
func FuzzCommitsOf(f *testing.F) {
	f.Add([]byte(logRecord("p1", "3,4", `{"pipeline":"p1","phase":3,"seq":5}`, "x\n\nimplementer dispatch 7 of pipeline p1.\n")), "p1")
	f.Add([]byte("\x1e\x1f\x1f\x1f"), "")
	f.Fuzz(func(t *testing.T, log []byte, id string) {
		got := map[int]bool{}
		commitsOf(log, id, got)
		if len(got) > 0 && !strings.Contains(string(log), id) {
			t.Errorf("found seqs %v for pipeline %q, which the log never names", got, id)
		}
	})
}
