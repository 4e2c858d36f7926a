package inittrace

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	out := []byte(`error: a line of the program's own
init runtime @0.031 ms, 0.048 ms clock, 0 bytes, 0 allocs
init go.yaml.in/yaml/v3 @1.3 ms, 0.12 ms clock, 25736 bytes, 276 allocs
init github.com/git-crucible/git-crucible/ledger @1.4 ms, 0.002 ms clock, 0 bytes, 0 allocs
init main @1.5 ms, 0 ms clock, 16 bytes, 1 allocs
init broken @1.5 ms, x ms clock, 0 bytes, 0 allocs
init short @1.5 ms, 0 ms clock
`)
	want := []Init{
		{"runtime", 0.048, 0, 0},
		{"go.yaml.in/yaml/v3", 0.12, 25736, 276},
		{"github.com/git-crucible/git-crucible/ledger", 0.002, 0, 0},
		{"main", 0, 16, 1},
	}
	if got := Parse(out); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n got %v\nwant %v", got, want)
	}
}

func TestKindOf(t *testing.T) {
	for pkg, want := range map[string]Kind{
		"runtime":                         Std,
		"crypto/internal/fips140/sha256":  Std,
		"main":                            Ours,
		Module:                            Ours,
		Module + "/internal/lazy":         Ours,
		Module + "x/y":                    Dep,
		"go.yaml.in/yaml/v3":              Dep,
		"github.com/BurntSushi/toml":      Dep,
		"github.com/urfave/cli/v2":        Dep,
		"golang.org/x/sys/unix":           Dep,
		"github.com/git-crucible/other/x": Dep,
	} {
		if got := KindOf(pkg); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", pkg, got, want)
		}
	}
}

func TestSum(t *testing.T) {
	all, by := Sum([]Init{
		{"runtime", 0.05, 0, 0},
		{"unicode", 0.02, 100, 2},
		{"go.yaml.in/yaml/v3", 0.1, 2000, 30},
		{"main", 0.01, 16, 1},
	})
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if !near(all.Clock, 0.18) || all.Bytes != 2116 || all.Allocs != 33 {
		t.Errorf("all = %+v", all)
	}
	if !near(by[Std].Clock, 0.07) || by[Std].Allocs != 2 || by[Dep].Allocs != 30 || by[Ours].Bytes != 16 {
		t.Errorf("by kind = %+v", by)
	}
}
