package tomlpos

import (
	"reflect"
	"testing"
)

func TestKeyLines(t *testing.T) {
	src := `# comment [[phases]]
"version" = 1
[[ phases ]]
'number' = 1 # x = 2
name = """
id = "not a key"
[[phases.steps]]
"""
  [[phases . steps]]
  id = 'a'
  outputs = { design = "d.md",
    more = "m" }
  inputs = [
    "x", # [[phases]]
  ]
  esc = "a\"b = c"
  [[phases.steps]]
  id = "b"
  [phases.steps.extra]
  k = 1
[[phases]]
number = 2
  [[phases.steps]]
  a.b = 3
`
	want := map[string]int{
		"version": 2, "phases": 3, "phases.0": 3, "phases.0.number": 4, "phases.0.name": 5,
		"phases.0.steps": 9, "phases.0.steps.0": 9, "phases.0.steps.0.id": 10, "phases.0.steps.0.outputs": 11,
		"phases.0.steps.0.inputs": 13, "phases.0.steps.0.esc": 16, "phases.0.steps.1": 17, "phases.0.steps.1.id": 18,
		"phases.0.steps.1.extra": 19, "phases.0.steps.1.extra.k": 20,
		"phases.1": 21, "phases.1.number": 22, "phases.1.steps": 23, "phases.1.steps.0": 23, "phases.1.steps.0.a.b": 24,
	}
	if got := Lines([]byte(src)); !reflect.DeepEqual(got, want) {
		t.Errorf("Lines:\n got %v\nwant %v", got, want)
	}
	if got := LineOf(want, "phases.0.steps.0.outputs.more"); got != 11 {
		t.Errorf("an inline table's key falls back to its table's line: %d", got)
	}
	if got := LineOf(want, "nowhere"); got != 0 {
		t.Errorf("LineOf(unknown) = %d", got)
	}
}
