package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/inittrace"
)

// builds are install.sh's builds of the two binaries, and a cheap command
// of each that runs every init: git crucible ledger check -q, and the hook
// binary with no hook (a usage error).
var builds = []struct {
	name  string
	flags []string
	args  []string
}{
	{"git-crucible", []string{"-trimpath", "-tags", "urfave_cli_no_docs,urfave_cli_no_suggest"}, []string{"ledger", "check", "-q"}},
	{"git-crucible-hook", []string{"-trimpath"}, nil},
}

// TestInitAllocs: the binaries' own packages allocate nothing at init;
// every command, and every hook of every commit, would pay for it. It reads
// GODEBUG=inittrace=1 of the binaries install.sh builds: a regular
// expression compiled, a template parsed, a map built or a sync.OnceValue
// made at init fails it (internal/lazy defers them). Allocation counts are
// deterministic; times are not, and are not read (bench/run.sh's init rows
// time them). With -v it logs each binary's allocations by whose they are.
func TestInitAllocs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	repo := gittest.Init(t)
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			exe := filepath.Join(bin, b.name)
			build := exec.Command("go", append(append([]string{"build"}, b.flags...), "-o", exe, "./cmd/"+b.name)...)
			build.Dir = root
			build.Env = append(os.Environ(), "GOFLAGS=") // install.sh's flags only
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			cmd := exec.Command(exe, b.args...)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
			out, _ := cmd.CombinedOutput()
			inits := inittrace.Parse(out)
			if len(inits) == 0 {
				t.Fatalf("no init lines in the trace:\n%s", out)
			}
			for _, in := range inits {
				if inittrace.KindOf(in.Package) == inittrace.Ours && in.Allocs != 0 {
					t.Errorf("%s allocates %d times at init (%d bytes), want none", strings.TrimPrefix(in.Package, module), in.Allocs, in.Bytes)
				}
			}
			all, by := inittrace.Sum(inits)
			t.Logf("%d allocations at init (%d bytes): ours %d, %v %d, %v %d",
				all.Allocs, all.Bytes, by[inittrace.Ours].Allocs, inittrace.Dep, by[inittrace.Dep].Allocs, inittrace.Std, by[inittrace.Std].Allocs)
		})
	}
}
