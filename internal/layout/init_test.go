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

// TestInitAllocs: the binaries' own packages allocate nothing at init;
// every command, and every hook of every commit, would pay for it. It reads
// GODEBUG=inittrace=1 of the binaries install.sh builds: a regular
// expression compiled, a template parsed, a map built or a sync.OnceValue
// made at init fails it (internal/lazy defers them). Allocation counts are
// deterministic; times are not, and are not read.
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
			for _, m := range found {
				pkg := m[1]
				if pkg != "main" && !strings.HasPrefix(pkg, module) {
					continue
				}
				if n, _ := strconv.Atoi(m[3]); n != 0 {
					t.Errorf("%s allocates %d times at init (%s bytes), want none", strings.TrimPrefix(pkg, module), n, m[2])
				}
			}
		})
	}
}
