package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/cmd/internal/manpage"
)

var update = flag.Bool("update", false, "rewrite docs/man from the command definitions")

// manDir holds the rendered manual, which install.sh installs.
var manDir = filepath.Join("..", "..", "docs", "man")

// TestManPages fails when docs/man is not what the command definitions
// render; `go generate ./cmd/git-crucible` (go test -run TestManPages
// -update) rewrites it.
func TestManPages(t *testing.T) {
	want := map[string][]byte{}
	for _, p := range manPages(newApp(nil, io.Discard, io.Discard)) {
		var b bytes.Buffer
		if err := manpage.Render(&b, p); err != nil {
			t.Fatal(err)
		}
		want[p.Name+".1"] = b.Bytes()
	}
	have, err := filepath.Glob(filepath.Join(manDir, "git-crucible*.1"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for _, f := range have {
			if want[filepath.Base(f)] == nil {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.MkdirAll(manDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range want {
			if err := os.WriteFile(filepath.Join(manDir, name), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	const regenerate = "; run: go generate ./cmd/git-crucible"
	for _, f := range have {
		if want[filepath.Base(f)] == nil {
			t.Errorf("%s documents no command%s", f, regenerate)
		}
	}
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(manDir, name))
		if err != nil {
			t.Errorf("%v%s", err, regenerate)
		} else if !bytes.Equal(got, content) {
			t.Errorf("%s is stale%s", name, regenerate)
		}
	}
}

// TestManPagesRenderCleanly renders every page of docs/man with man, as a
// reader would see it, and fails on any warning of groff's.
func TestManPagesRenderCleanly(t *testing.T) {
	man, err := exec.LookPath("man")
	if err != nil {
		t.Skip("man is not installed")
	}
	pages, err := filepath.Glob(filepath.Join(manDir, "git-crucible*.1"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in %s: %v", manDir, err)
	}
	for _, p := range pages {
		cmd := exec.Command(man, "--warnings", "-l", p)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("man -l %s: %v\n%s", p, err, stderr.String())
		}
		if name := strings.ToUpper(strings.TrimSuffix(filepath.Base(p), ".1")); !bytes.HasPrefix(out, []byte(name+"(1)")) {
			t.Errorf("man -l %s does not start with its title:\n%.200s", p, out)
		}
	}
}
