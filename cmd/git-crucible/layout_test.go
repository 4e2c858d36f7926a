package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnePrinter: no command writes git's "hint: ", "warning: " or
// "error: " itself; cliexit's printer does (s.hint, s.warn, s.error,
// cliexit.Hint and the others), so every such line is worded one way.
func TestOnePrinter(t *testing.T) {
	eachCommandFile(t, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
			}
			if p := linePrefix(s); p != "" {
				t.Errorf("%s: %s writes %q itself: print it with s.%s or cliexit", fset.Position(lit.Pos()), lit.Value, p, printerOf[p])
			}
			return true
		})
	})
}

// eachCommandFile parses each non-test file of the command (comments
// left out: they may name what the tests look for).
func eachCommandFile(t *testing.T, inspect func(*token.FileSet, *ast.File)) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		inspect(fset, f)
	}
}

var printerOf = map[string]string{"hint: ": "hint", "warning: ": "warn", "error: ": "error"}

// linePrefix is the prefix of git's that begins a line of s, "" when none does.
func linePrefix(s string) string {
	for p := range printerOf {
		if strings.HasPrefix(s, p) || strings.Contains(s, "\n"+p) {
			return p
		}
	}
	return ""
}

// TestLinePrefix: what TestOnePrinter takes for a hand-written prefix.
func TestLinePrefix(t *testing.T) {
	for s, want := range map[string]string{
		"hint: %s\n":                         "hint: ",
		"task %s\nwarning: %s\n":             "warning: ",
		"\nerror: ":                          "error: ",
		"hint:%s":                            "",
		"the hint: below":                    "",
		"(`error: cannot build`, exit 1)":    "",
		"ok: notes.rewriteMode: is the mode": "",
	} {
		if got := linePrefix(s); got != want {
			t.Errorf("linePrefix(%q) = %q, want %q", s, got, want)
		}
	}
}
