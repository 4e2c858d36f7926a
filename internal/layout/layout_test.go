package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/git-crucible/git-crucible/"

// pure are the packages that decide without doing: they link no package
// that runs git or touches a repository (gitext and everything above it).
var pure = []string{"fastgate", "ledger", "pipespec", "prompt", "report", "rounds", "taskdag/manifest"}

// git are the packages that run git, directly or through another.
var git = []string{"gitext", "refs", "pipeline"}

func TestPurePackagesLinkNoGit(t *testing.T) {
	for _, p := range pure {
		for _, g := range git {
			if links(t, p, g) {
				t.Errorf("%s links %s, which runs git: a pure package must not", p, g)
			}
		}
	}
}

// readers read the chain and show it: they link no engine, so that a view
// cannot run an agent or move a branch.
var readers = []string{"replay", "runpage", "pipeline", "interop", "hooks", "enforce"}

// engines are the packages that dispatch agents or rewrite history.
var engines = []string{"engine", "taskdag", "taskdag/record", "verifycommits"}

func TestReadersLinkNoEngine(t *testing.T) {
	for _, p := range readers {
		for _, e := range engines {
			if links(t, p, e) {
				t.Errorf("%s links %s: a reader of the chain must not link an engine", p, e)
			}
		}
	}
}

// links says whether package p links package dep (go list -deps).
func links(t *testing.T, p, dep string) bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+p).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", p, err)
	}
	for _, d := range strings.Fields(string(out)) {
		if d == module+dep {
			return true
		}
	}
	return false
}
