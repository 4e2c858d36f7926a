package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// initAllocs is what each of our packages allocates before main, as
// GODEBUG=inittrace=1 counts it in the binaries install.sh builds: exactly,
// so that a regular expression compiled, a template parsed or a table built
// at init fails the test. A package not named here allocates nothing.
// Allocation counts are deterministic (times are not: they are not read).
var initAllocs = map[string]map[string]int{
	"git-crucible": {
		"main":     7,
		"agent":    10,
		"dag":      2,
		"fastgate": 6,
		"gate":     2,
		"gitext":   4,
		"hooks":    10,
		"interop":  8,
		"pipeline": 10,
		"prompt":   6,
		"replay":   4,
		"report":   2,
		"runpage":  2,
		"spec":     15,
	},
	"git-crucible-hook": {
		"gitext":   4,
		"hooks":    10,
		"pipeline": 10,
	},
}

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

var initLine = regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestInitAllocs: the binaries' own packages do (next to) nothing at init;
// every command, and every hook of every commit, pays for it.
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
			found := initLine.FindAllStringSubmatch(string(out), -1)
			if len(found) == 0 {
				t.Fatalf("no init lines in the trace:\n%s", out)
			}
			want := initAllocs[b.name]
			seen := map[string]bool{}
			for _, m := range found {
				pkg := m[1]
				if pkg != "main" {
					if !strings.HasPrefix(pkg, module) {
						continue
					}
					pkg = strings.TrimPrefix(pkg, module)
				}
				seen[pkg] = true
				if n, _ := strconv.Atoi(m[3]); n != want[pkg] {
					t.Errorf("%s allocates %d times at init (%s bytes), want %d", pkg, n, m[2], want[pkg])
				}
			}
			for pkg, n := range want {
				if !seen[pkg] && n != 0 {
					t.Errorf("%s: no init in the trace, want %d allocations (update initAllocs)", pkg, n)
				}
			}
		})
	}
}
