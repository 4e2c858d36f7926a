package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
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

const gitextPath = "github.com/git-crucible/git-crucible/gitext"

// pureRepoAccessors are gitext.Repo's methods the command may call: each
// joins or returns paths Discover already found, and runs no git and
// reads no file (see their bodies in gitext/discover.go).
var pureRepoAccessors = []string{"CrucibleDir"}

// TestCmdAsksGitNothing: the command parses flags, makes one engine or
// reader call and prints; it asks git nothing itself (issue 24). It opens
// the repository (gitext.Discover) and hands it on, but calls no other
// function of gitext and no method of gitext.Repo but the pure path
// accessors. The check is by type, not by name, so a variable called
// anything but repo is caught too.
func TestCmdAsksGitNothing(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedFiles,
		// go list -export of a main package stamps git's status into it
		// otherwise: a checkout git will not read (another owner's) fails.
		BuildFlags: []string{"-buildvcs=false"}}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 || len(pkgs) != 1 {
		t.Fatalf("loading the command: %d packages, errors above", len(pkgs))
	}
	pkg := pkgs[0]
	found := map[string][]string{} // file: its calls into git
	for _, f := range pkg.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if what := asksGit(pkg.TypesInfo, sel); what != "" {
				pos := pkg.Fset.Position(sel.Sel.Pos())
				name := filepath.Base(pos.Filename)
				found[name] = append(found[name], fmt.Sprintf("%s:%d: %s", name, pos.Line, what))
			}
			return true
		})
	}
	for _, name := range slices.Sorted(maps.Keys(found)) {
		for _, c := range found[name] {
			t.Errorf("%s: the command asks git itself; ask an engine or reader package (add a verb there)", c)
		}
	}
}

// asksGit names what sel reaches of gitext that asks git, "" when
// nothing: a method of gitext.Repo (called or taken as a value) but a
// pure accessor, or a function of gitext's but Discover.
func asksGit(info *types.Info, sel *ast.SelectorExpr) string {
	var fn *types.Func
	if s, ok := info.Selections[sel]; ok {
		fn, _ = s.Obj().(*types.Func)
	} else {
		fn, _ = info.Uses[sel.Sel].(*types.Func)
	}
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != gitextPath {
		return ""
	}
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		if fn.Name() == "Discover" {
			return ""
		}
		return "gitext." + fn.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Name() != "Repo" || slices.Contains(pureRepoAccessors, fn.Name()) {
		return ""
	}
	return "(*gitext.Repo)." + fn.Name()
}
