package spec

import (
	"bytes"
	"errors"
	"github.com/git-crucible/git-crucible/internal/tomlpos"
	"testing"
)

// FuzzParse: Parse never panics; it either returns a spec whose every step
// is a valid resume point, or an *Error whose lines are in the input. The
// line scanner, which Parse runs only on valid TOML, survives any input.
func FuzzParse(f *testing.F) {
	f.Add(defaultTOML)
	f.Add([]byte(minimal))
	f.Add([]byte("[[phases]]\nnumber = 1\nsteps = [ { id = \"a\", kind = \"gate\", artifact = \"diff\" } ]\n"))
	f.Add([]byte("x = \"\"\"\nid = 1\n\"\"\"\n[[phases]]\n'number' = 1 # c\n[phases.steps]\n"))
	set := templates(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		for path, l := range tomlpos.Lines(data) {
			if l < 1 || l > lines {
				t.Fatalf("keyLines puts %s at line %d of %d", path, l, lines)
			}
		}
		sp, err := Parse(data, "f.toml", set)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || len(se.Problems) == 0 {
				t.Fatalf("error %v is not an *Error with problems", err)
			}
			for _, p := range se.Problems {
				if p.Line < 0 || p.Line > lines {
					t.Fatalf("problem %+v outside the input's %d lines", p, lines)
				}
			}
			return
		}
		for _, l := range sp.Walk() {
			p := Point{Phase: l.Phase, Step: l.Step.ID}
			if l.Parent != nil {
				p.Task = "task-1"
			}
			if l.Step.Rounds() {
				p.Round = l.Step.MaxRounds
			}
			if err := sp.Check(p); err != nil {
				t.Fatalf("step %q of a valid spec: %v", l.Step.ID, err)
			}
		}
	})
}
