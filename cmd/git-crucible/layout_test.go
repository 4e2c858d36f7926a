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

// rawGit are gitext's methods that take a git argument list as it is.
var rawGit = map[string]bool{"Git": true, "GitEnv": true, "GitEnvInput": true, "GitGroup": true, "GitLocking": true,
	"GitProgress": true, "GitIndex": true, "GitIndexInput": true, "GitInput": true}

// TestCommandsRunNoGit: the command layer holds no git argument list. It
// calls the packages' verbs (gitext's typed ones, the engines'); it starts
// no git itself, and names no git subcommand in a list of arguments.
func TestCommandsRunNoGit(t *testing.T) {
	eachCommandFile(t, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if rawGit[sel.Sel.Name] {
				t.Errorf("%s: %s runs git with an argument list: give gitext a verb for it", fset.Position(call.Pos()), sel.Sel.Name)
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "exec" && len(call.Args) > 0 {
				first := call.Args[0]
				if sel.Sel.Name == "CommandContext" && len(call.Args) > 1 {
					first = call.Args[1]
				}
				if lit, ok := first.(*ast.BasicLit); ok && lit.Value == `"git"` {
					t.Errorf("%s: exec.%s starts git: gitext does", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	})
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
