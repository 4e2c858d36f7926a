package fakemodel

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// scripted is the scripted agent; the scenarios are beside it.
const (
	scripted  = "../../testdata/agent/scripted"
	scenarios = "../../testdata/agent/scenarios"
)

// buildDispatches are the dispatches of a happy build (pipespec/default.toml)
// as the engine gives them to an agent, and a few no scenario plays;
// dagDispatches those of the sample task DAG with critique and fix rounds.
var buildDispatches, dagDispatches = func() ([]Conds, []Conds) {
	build := []Conds{
		{"design-writer", "1", "", ""},
		{"test-writer", "1", "", ""},
		{"plan-writer", "2", "", ""},
		{"reviewer", "2", "", "1"},
		{"red-team", "2", "", "1"},
		{"implementer", "3", "1", ""},
		{"reviewer", "3", "1", "1"},
		{"implementer", "3", "2", ""},
		{"reviewer", "3", "2", "1"},
		{"implementer", "3", "3", ""},
		{"reviewer", "4", "", "1"},
		{"red-team", "4", "", "1"},
		{"nobody", "1", "", ""},
		{"implementer", "3", "9", ""},
	}
	for r := 1; r <= 4; r++ {
		build = append(build, Conds{"red-team", "1", "", strconv.Itoa(r)}, Conds{"fixer", "1", "", strconv.Itoa(r)})
	}
	var dag []Conds
	for r := 1; r <= 4; r++ {
		dag = append(dag, Conds{"critique", "3", "", strconv.Itoa(r)})
	}
	for _, task := range []string{"1a-upper", "1b-lower", "1c-notes", "2a-case", "2b-docs", "3a-greet", "3b-survey"} {
		dag = append(dag, Conds{"implementer", "3", task, ""})
	}
	for _, task := range []string{"1a-upper", "1b-lower"} {
		dag = append(dag, Conds{"implementer", "3", task, "1"}, Conds{"implementer", "3", task, "2"}, Conds{"implementer", "3", task, "3"})
	}
	return build, append(dag, Conds{"critique", "3", "1a-upper", "1"}, Conds{"nobody", "3", "", ""})
}()

// TestSelectAsScripted plays every dispatch of every scenario with the
// scripted agent and with the section Select picks, and wants the same
// work tree, report, stdout and exit status: the fake model plays what
// the scripted agent plays.
func TestSelectAsScripted(t *testing.T) {
	files, err := filepath.Glob(scenarios + "/*")
	if err != nil || len(files) < 10 {
		t.Fatalf("scenarios: %v, %v", files, err)
	}
	// The scripted agent's sleeps are not what is compared.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "sleep"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	agent, err := filepath.Abs(scripted)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if file, err = filepath.Abs(file); err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			// A scenario plays a build or a task run: its dispatches are
			// those of one or the other.
			dispatches := buildDispatches
			if sec, _ := Select(file, dagDispatches[0]); sec != nil {
				dispatches = dagDispatches
			}
			// happy and dag are played whole; the others, which include
			// them, where they differ, once where they do not, and where
			// nothing plays.
			whole := filepath.Base(file) == "happy" || filepath.Base(file) == "dag"
			fellThrough := false
			for _, c := range dispatches {
				sec, err := Select(file, c)
				if err != nil {
					t.Fatalf("%v: %v", c, err)
				}
				if !whole && sec != nil && sec.File != file {
					if fellThrough {
						continue
					}
					fellThrough = true
				}
				want := runScripted(t, agent, bin, file, c)
				var got played
				if sec == nil {
					got.status = 3 // the scripted agent's "no entry"
				} else {
					got = apply(t, sec)
				}
				if !got.equal(want) {
					t.Errorf("%s %+v: Select played %+v (section [%s])\nthe scripted agent %+v", filepath.Base(file), c, got, header(sec), want)
				}
			}
		})
	}
}

func header(s *Section) string {
	if s == nil {
		return "none"
	}
	return s.Header
}

// played is what a dispatch left: the work tree's files, the report,
// stdout and the exit status (-1 killed).
type played struct {
	files     map[string]string
	report    string
	hasReport bool
	stdout    string
	status    int
}

func (p played) equal(q played) bool {
	return maps.Equal(p.files, q.files) && p.report == q.report && p.hasReport == q.hasReport &&
		p.stdout == q.stdout && p.status == q.status
}

func runScripted(t *testing.T, agent, bin, scenario string, c Conds) played {
	t.Helper()
	work, out := t.TempDir(), filepath.Join(t.TempDir(), "output.yaml")
	cmd := exec.Command("sh", agent, "--scenario", scenario)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "SCRIPTED_LOG=",
		"CRUCIBLE_ROLE="+c.Role, "CRUCIBLE_PHASE="+c.Phase, "CRUCIBLE_TASK="+c.Task, "CRUCIBLE_ROUND="+c.Round,
		"CRUCIBLE_OUTPUT="+out, "CRUCIBLE_WORKDIR="+work)
	stdout, err := cmd.Output()
	p := played{files: tree(t, work), stdout: string(stdout)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		p.status = exit.ExitCode() // -1 when killed
	case err != nil:
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err == nil {
		p.report, p.hasReport = string(b), true
	}
	return p
}

// apply plays sec's directives as the scripted agent's README says they
// are played, in a work tree of its own.
func apply(t *testing.T, sec *Section) played {
	t.Helper()
	work := t.TempDir()
	p := played{}
	for _, d := range sec.Directives {
		f := filepath.Join(work, d.Arg)
		switch d.Kind {
		case Write, Append:
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			old, _ := os.ReadFile(f)
			if d.Kind == Write {
				old = nil
			}
			if err := os.WriteFile(f, append(old, d.Block...), 0o644); err != nil {
				t.Fatal(err)
			}
		case Remove:
			_ = os.Remove(f)
		case Report:
			p.report, p.hasReport = d.Block, true
		case Stdout:
			p.stdout += d.Block
		case Exit:
			p.status, _ = strconv.Atoi(d.Arg)
			p.files = tree(t, work)
			return p
		case Crash:
			p.status = -1
			p.files = tree(t, work)
			return p
		}
	}
	p.files = tree(t, work)
	return p
}

// tree is every regular file under dir, by slash path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSelect pins what the scenario format means where the scripted agent
// is terse: conditions, includes, blocks, the new directives, errors.
func TestSelect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("base", "[implementer]\nstdout\nbase\n.\n")
	main := write("main", `# a comment
[implementer phase=3 task=1]
# a comment between directives
write a/b.txt
[not a header inside a block]
# nor a comment
.
run sh test/unit.sh && echo "ok"
tokens 1000 300
api-error 529
sleep 0.5
append a/b.txt

.
remove old.txt
stdout
said
.
exit 2

[implementer round=1]
report
verdict: accepted
.
crash

include base
`)
	cases := []struct {
		name   string
		file   string
		c      Conds
		header string
		dirs   []Directive
		err    string
	}{
		{"first match, every directive", main, Conds{"implementer", "3", "1", ""}, "implementer phase=3 task=1", []Directive{
			{Kind: Write, Arg: "a/b.txt", Block: "[not a header inside a block]\n# nor a comment\n"},
			{Kind: Run, Arg: `sh test/unit.sh && echo "ok"`},
			{Kind: Tokens, Arg: "1000 300"},
			{Kind: APIError, Arg: "529"},
			{Kind: Sleep, Arg: "0.5"},
			{Kind: Append, Arg: "a/b.txt", Block: "\n"},
			{Kind: Remove, Arg: "old.txt"},
			{Kind: Stdout, Block: "said\n"},
			{Kind: Exit, Arg: "2"},
		}, ""},
		{"a condition absent from the dispatch is empty", main, Conds{"implementer", "3", "", "1"}, "implementer round=1",
			[]Directive{{Kind: Report, Block: "verdict: accepted\n"}, {Kind: Crash}}, ""},
		{"include", main, Conds{"implementer", "3", "2", ""}, "implementer", []Directive{{Kind: Stdout, Block: "base\n"}}, ""},
		{"none", main, Conds{"red-team", "1", "", "1"}, "", nil, ""},
		{"unknown directive", write("bad", "[fixer]\nwrite-all x\n"), Conds{Role: "fixer"}, "", nil, "bad:2: unknown directive 'write-all x'"},
		{"unknown condition", write("cond", "[fixer step=x]\n"), Conds{Role: "fixer"}, "", nil, "cond:1: unknown condition 'step=x'"},
		{"open block", write("open", "[fixer]\nreport\nstatus: completed\n"), Conds{Role: "fixer"}, "", nil, "not closed"},
		{"way out of the work tree", write("out", "[fixer]\nwrite ../x\n.\n"), Conds{Role: "fixer"}, "", nil, "not inside the work tree"},
		{"absolute path", write("abs", "[fixer]\nremove /etc/x\n"), Conds{Role: "fixer"}, "", nil, "not inside the work tree"},
		{"bad status", write("status", "[fixer]\napi-error overloaded\n"), Conds{Role: "fixer"}, "", nil, "wants an HTTP status"},
		{"bad tokens", write("tokens", "[fixer]\ntokens 10\n"), Conds{Role: "fixer"}, "", nil, "two counts"},
		{"include loop", write("loop", "include loop\n"), Conds{Role: "fixer"}, "", nil, "nested too deep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sec, err := Select(c.file, c.c)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.header == "" {
				if sec != nil {
					t.Fatalf("selected [%s], want none", sec.Header)
				}
				return
			}
			if sec == nil || sec.Header != c.header || !equalJSON(sec.Directives, c.dirs) {
				t.Errorf("selected %+v\nwant [%s] %+v", sec, c.header, c.dirs)
			}
		})
	}
}
