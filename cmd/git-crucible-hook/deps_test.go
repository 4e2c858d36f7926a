package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// forbidden are what the hook binary must not link: the command-line
// framework and everything only the main binary's commands need. Each
// package's init would run on every commit.
var forbidden = []string{
	"github.com/urfave/cli",
	"github.com/BurntSushi/toml",
	"github.com/go-git/",
	"gopkg.in/src-d/go-git",
	"github.com/sergi/go-diff",
	"github.com/russross/blackfriday",
	"github.com/cpuguy83/go-md2man",
	"gopkg.in/yaml",
	"sigs.k8s.io/yaml",
	"github.com/goccy/go-yaml",
	"go.yaml.in/yaml",
}

// forbiddenStd are standard packages the hook binary must not link either:
// regexp/syntax's init builds tables, about a tenth of the binary's
// start-up, on every commit (git's messages are read by hand instead).
var forbiddenStd = []string{"regexp", "regexp/syntax"}

// TestLeanDependencies: git-crucible-hook is built from the standard
// library and git-crucible's own packages only, and not from the standard
// packages forbiddenStd names.
func TestLeanDependencies(t *testing.T) {
	std, err := exec.Command("go", "list", "-deps", "-f", "{{if .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(std)) {
		if slices.Contains(forbiddenStd, dep) {
			t.Errorf("git-crucible-hook links %s", dep)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps found only %q", deps)
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("git-crucible-hook links %s", dep)
			}
		}
		if strings.Contains(strings.ToLower(dep), "yaml") {
			t.Errorf("git-crucible-hook links a YAML library: %s", dep)
		}
		if !strings.HasPrefix(dep, "github.com/git-crucible/git-crucible/") {
			t.Errorf("git-crucible-hook links %s, which is neither the standard library nor git-crucible's", dep)
		}
	}
}
