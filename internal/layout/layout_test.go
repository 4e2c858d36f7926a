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
var pure = []string{"fastgate", "ledger", "prompt", "pipespec", "report", "rounds", "taskdag/manifest"}

// git are the packages that run git, directly or through another.
var git = []string{"gitext", "refs", "pipeline"}

func TestPurePackagesLinkNoGit(t *testing.T) {
	for _, p := range pure {
		out, err := exec.Command("go", "list", "-deps", module+p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		deps := strings.Fields(string(out))
		for _, g := range git {
			for _, d := range deps {
				if d == module+g {
					t.Errorf("%s links %s, which runs git: a pure package must not", p, g)
				}
			}
		}
	}
}
