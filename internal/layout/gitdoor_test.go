package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rawGit are gitext.Repo's methods that take git's arguments as they are:
// outside gitext, git runs through its typed verbs instead (issue 24).
var rawGit = []string{"Git"}

// notThroughTheDoor are the packages that still run git with argument
// lists of their own: a shrinking list, each to take gitext's verbs and
// leave it (the test fails for one that no longer needs to be here).
var notThroughTheDoor = []string{}

// ownGit are the packages that run git themselves for good: gitext, the
// one door, and the tests' hermetic git.
var ownGit = []string{"gitext", "internal/gittest"}

// TestGitThroughOneDoor: no non-test file outside gitext calls a raw Git*
// method or runs exec.Command("git", ...), but in the packages listed as
// not converted yet.
func TestGitThroughOneDoor(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{} // package directory: its raw calls
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		dir := path.Dir(filepath.ToSlash(rel))
		if slices.Contains(ownGit, dir) {
			return nil
		}
		calls, err := rawGitCalls(p)
		for _, c := range calls {
			found[dir] = append(found[dir], filepath.ToSlash(rel)+":"+c)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, calls := range found {
		if !slices.Contains(notThroughTheDoor, dir) {
			t.Errorf("%s runs git with its own arguments; use gitext's verbs (add one there if none fits):\n\t%s", dir, strings.Join(calls, "\n\t"))
		}
	}
	for _, dir := range notThroughTheDoor {
		if found[dir] == nil {
			t.Errorf("%s runs git through gitext's verbs alone now: take it off notThroughTheDoor", dir)
		}
	}
}

// rawGitCalls lists the lines of file that call a raw Git* method, or
// exec.Command or exec.CommandContext with "git" for the program.
func rawGitCalls(file string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	execName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "os/exec" {
			execName = "exec"
			if imp.Name != nil {
				execName = imp.Name.Name
			}
		}
	}
	var calls []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, _ := sel.X.(*ast.Ident)
		raw := slices.Contains(rawGit, sel.Sel.Name)
		if pkg != nil && pkg.Name == execName && execName != "" {
			program := 0
			if sel.Sel.Name == "CommandContext" {
				program = 1
			}
			raw = (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext") && len(call.Args) > program && isGit(call.Args[program])
		}
		if raw {
			calls = append(calls, strconv.Itoa(fset.Position(call.Pos()).Line)+": "+sel.Sel.Name)
		}
		return true
	})
	return calls, nil
}

// isGit reports whether e is the string literal "git".
func isGit(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && s == "git"
}
