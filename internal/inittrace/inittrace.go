// Package inittrace reads what a Go program prints at start under
// GODEBUG=inittrace=1: one line per package whose initialisation did work,
// with its clock time and allocations. A command pays for every package its
// binary links, whichever it uses, so these lines are the start-up cost that
// no command's own work explains. Allocations are deterministic; clock times
// are not, and are summed per run and compared as medians of many runs.
package inittrace

import (
	"strconv"
	"strings"
)

// Module is this repository's module path: its packages, and main, are ours.
const Module = "github.com/git-crucible/git-crucible"

// Init is one package's initialisation.
type Init struct {
	Package string
	Clock   float64 // milliseconds
	Bytes   int64
	Allocs  int64
}

// Parse returns the init lines of out, in order; the program's own lines
// are left out.
//
//	init go.yaml.in/yaml/v3 @1.3 ms, 0.12 ms clock, 25736 bytes, 276 allocs
func Parse(out []byte) []Init {
	var inits []Init
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[3] != "ms," || f[5] != "ms" || f[6] != "clock," ||
			f[8] != "bytes," || f[10] != "allocs" || !strings.HasPrefix(f[2], "@") {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		bytes, err2 := strconv.ParseInt(f[7], 10, 64)
		allocs, err3 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		inits = append(inits, Init{Package: f[1], Clock: clock, Bytes: bytes, Allocs: allocs})
	}
	return inits
}

// Kind says whose a package is.
type Kind int

const (
	Std  Kind = iota // the standard library, the runtime's own packages included
	Dep              // another module's
	Ours             // this module's, or main
)

func (k Kind) String() string {
	return [...]string{"standard library", "dependencies", "ours"}[k]
}

// KindOf says whose package pkg is: the standard library's paths have no
// dot in their first element.
func KindOf(pkg string) Kind {
	switch first, _, _ := strings.Cut(pkg, "/"); {
	case pkg == "main" || pkg == Module || strings.HasPrefix(pkg, Module+"/"):
		return Ours
	case strings.Contains(first, "."):
		return Dep
	}
	return Std
}

// Total is a sum of initialisations.
type Total struct {
	Clock  float64
	Bytes  int64
	Allocs int64
}

// Add adds in.
func (t *Total) Add(in Init) {
	t.Clock += in.Clock
	t.Bytes += in.Bytes
	t.Allocs += in.Allocs
}

// Sum totals inits, all of them and by kind.
func Sum(inits []Init) (all Total, byKind [3]Total) {
	for _, in := range inits {
		all.Add(in)
		byKind[KindOf(in.Package)].Add(in)
	}
	return all, byKind
}
