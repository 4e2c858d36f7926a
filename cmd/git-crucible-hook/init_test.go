package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxInitAllocs bounds the allocations each of git-crucible's packages
// makes at start-up: a few maps of names are fine, compiling regular
// expressions or building tables (over a hundred) is not, since every hook
// of every commit pays for it.
const maxInitAllocs = 16

// TestCheapInit: the hook binary's own packages do next to nothing before
// main, as GODEBUG=inittrace=1 reports it.
func TestCheapInit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "git-crucible-hook")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin) // no hook: a usage error, after every init
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, _ := cmd.CombinedOutput()
	line := regexp.MustCompile(`(?m)^init (github\.com/git-crucible/git-crucible/\S+) @.* ([0-9]+) allocs$`)
	found := line.FindAllStringSubmatch(string(out), -1)
	if len(found) == 0 {
		t.Fatalf("no init of ours in the trace:\n%s", out)
	}
	for _, m := range found {
		if n, _ := strconv.Atoi(m[2]); n > maxInitAllocs {
			t.Errorf("%s makes %d allocations at start-up (at most %d)", strings.TrimPrefix(m[1], "github.com/git-crucible/git-crucible/"), n, maxInitAllocs)
		}
	}
}
