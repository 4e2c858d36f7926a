package pipespec

import (
	"bytes"
	"errors"
	"testing"

	"github.com/git-crucible/git-crucible/internal/tomlpos"
)

// FuzzParse: Parse never panics; it either returns a spec with steps, or
// an *Error whose lines are in the input. The
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
		if sp == nil || len(sp.Walk()) == 0 {
			t.Fatalf("no error, and no step in the spec")
		}
	})
}
