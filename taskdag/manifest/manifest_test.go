package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// seedManifest is the seed's example as Parse must read it, whichever
// syntax it comes in.
func seedManifest(created string) Manifest {
	return Manifest{
		Goal:        "Short description of the overall goal",
		Status:      RunPending,
		MaxParallel: 5,
		Created:     created,
		Verify: Verify{Build: "bun run build", Test: "bun test", Lint: "bun run lint",
			Custom: []NamedCommand{{"integration-tests", "bun test:integration"}}},
		Validation:              Validation{FastGate: "bun run typecheck && bun run lint"},
		Critique:                Critique{Enabled: true, Agent: "critique"},
		Commits:                 Commits{Strategy: "per-task", Approval: "ask-once", MessageSource: "objective"}, // written out in the example
		LevelBoundaries:         map[int]string{},
		UnexpectedModifications: "ask",
		DeviationHandling:       DeviationHandling{Threshold: "moderate", AutoFix: true, EscalateTo: "user"},
		Tasks: []Task{
			{ID: "1a-extract_auth_module", Type: "feature", Agent: "general", Status: Pending,
				Critique: &Critique{Enabled: true, Agent: "critique", Prompt: "Custom critique instructions for this task.\n"}},
			{ID: "1b-extract_logging_module", Type: "feature", Agent: "general", Status: Pending},
			{ID: "2a-integrate_modules", Type: "feature", Agent: "general", Status: Pending,
				DependsOn: []string{"1a-extract_auth_module", "1b-extract_logging_module"},
				Receives:  []string{"1a-extract_auth_module"}},
		},
	}
}

func TestParseSeedExample(t *testing.T) {
	for _, tc := range []struct {
		file, created string
		lines         []int
	}{
		{"seed-dispatch-complete.yaml", "YYYY-MM-DD", []int{54, 71, 76}},
		{"seed-dispatch.toml", "2026-11-24", []int{44, 66, 73}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m, err := Parse(tc.file, readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want := seedManifest(tc.created)
			for i := range want.Tasks {
				want.Tasks[i].Line = tc.lines[i]
			}
			got := *m
			got.lines, got.index, got.level = manifestLines{}, nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("manifest\n  %#v\nwant\n  %#v", got, want)
			}
			if levels := m.Levels(); !reflect.DeepEqual(levels, [][]string{
				{"1a-extract_auth_module", "1b-extract_logging_module"}, {"2a-integrate_modules"}}) {
				t.Fatalf("levels %q", levels)
			}
		})
	}
}

// The seed's example as it is elides a task it depends on: the manifest
// reads, and validation names the dangling id where it is.
func TestParseSeedExampleAsIs(t *testing.T) {
	_, err := Parse("dispatch.yaml", readTestdata(t, "seed-dispatch.yaml"))
	want := `dispatch.yaml:72: task "2a-integrate_modules" depends on "1b-extract_logging_module", which the manifest does not have`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant  %s", err, want)
	}
}

const header = "goal: g\nvalidation:\n  fast-gate: go vet ./...\ntasks:\n"

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"cycle", "d.yaml", header + `  - {id: a, type: feature, agent: general, depends-on: [c]}
  - {id: b, type: feature, agent: general, depends-on: [a]}
  - {id: c, type: feature, agent: general, depends-on: [b]}
`, `d.yaml:5: dependency cycle: a -> c -> b -> a (each depends on the next)`},
		{"self cycle", "d.yaml", header + "  - {id: a, type: feature, agent: general, depends-on: [a]}\n",
			`d.yaml:5: dependency cycle: a -> a (each depends on the next)`},
		{"unknown ids, each on its line", "d.yaml", header + `  - id: a
    type: feature
    agent: general
    depends-on:
      - nope
      - b
      - nada
  - {id: b, type: feature, agent: general}
`, "d.yaml:9: task \"a\" depends on \"nope\", which the manifest does not have\n" +
			"d.yaml:11: task \"a\" depends on \"nada\", which the manifest does not have"},
		{"receives outside depends-on", "d.yaml", header + `  - {id: a, type: feature, agent: general}
  - {id: b, type: feature, agent: general}
  - id: c
    type: feature
    agent: general
    depends-on: [a]
    receives: [b]
`, `d.yaml:11: task "c" receives "b", which is not in its depends-on: receives must be a subset of depends-on`},
		{"one file, two tasks of a level", "d.yaml", header + `  - {id: a, type: feature, agent: general, files: [x.go, ./y.go]}
  - {id: b, type: feature, agent: general, files: [z.go]}
  - id: c
    type: bugfix
    agent: general
    files:
      - y.go
`, `d.yaml:11: tasks "a" and "c" (line 5) of level 1 both name y.go and neither depends on the other: add a depends-on edge between them`},
		{"stub fast gate", "d.yaml", "goal: g\nvalidation:\n  fast-gate: echo ok\ntasks:\n  - {id: a, type: feature, agent: general}\n",
			`d.yaml:3: validation.fast-gate: "echo ok" is a stub, not a gate: a fast gate must fail when a commit uses what only a later commit adds`},
		{"no fast gate without reason", "d.yaml", "validation:\n  no-fast-gate: true\ntasks:\n  - {id: a, type: feature, agent: general}\n",
			`d.yaml:2: validation: no-fast-gate: true needs a reason saying why the full verify pipeline is the minimum`},
		{"both gates", "d.yaml", "validation: {no-fast-gate: true, reason: r, fast-gate: go vet}\ntasks:\n  - {id: a, type: feature, agent: general}\n",
			`d.yaml:1: validation: fast-gate and no-fast-gate: true both set: keep one`},
		{"misspelt key", "d.yaml", header + "  - {id: a, type: feature, agent: general, depends_on: [b]}\n",
			`d.yaml:5: task: unknown key "depends_on"`},
		{"duplicate id", "d.yaml", header + "  - {id: a, type: feature, agent: general}\n  - {id: a, type: bugfix, agent: general}\n",
			`d.yaml:6: duplicate task id "a" (first on line 5)`},
		{"no type", "d.yaml", header + "  - {id: a, agent: general}\n  - {id: b, agent: explore}\n",
			`d.yaml:5: task "a" has no type (feature or bugfix): only explore tasks go without`},
		{"bad status", "d.yaml", header + "  - {id: a, type: feature, agent: general, status: done}\n",
			`d.yaml:5: status: "done" is not one of pending, dispatched, committed, completed, failed, fixing`},
		{"fixing without source", "d.yaml", header + "  - {id: a, type: feature, agent: general, status: fixing}\n",
			`d.yaml:5: task "a": fixing-source "" with status fixing: the source is set exactly while fixing`},
		{"max-parallel 0", "d.yaml", "max-parallel: 0\n" + header + "  - {id: a, type: feature, agent: general}\n",
			`d.yaml:1: max-parallel: want a whole number from 1, found "0"`},
		{"no tasks", "d.yaml", "goal: g\n", `d.yaml:1: the manifest has no tasks`},
		{"alias", "d.yaml", "goal: &g x\nbackup-branch: *g\ntasks: []\n", `d.yaml:2: YAML aliases are not accepted in a manifest (*g)`},
		{"duplicate key", "d.yaml", "goal: a\ngoal: b\n", `d.yaml:2: duplicate key "goal" (first on line 1)`},
		{"yaml syntax", "d.yaml", "goal: [\n", "d.yaml:1: did not find expected node content"},
		{"level boundary", "d.yaml", "level-boundaries: {zero: abc}\n", `d.yaml:1: level-boundaries: "zero" is not a level number`},
		{"toml cycle", "d.toml", `[[tasks]]
id = "a"
type = "feature"
agent = "general"
depends-on = ["b"]

[[tasks]]
id = "b"
type = "feature"
agent = "general"
depends-on = ["a"]
`, `d.toml:1: dependency cycle: a -> b -> a (each depends on the next)`},
		{"toml unknown id", "d.toml", "[[tasks]]\nid = \"a\"\ntype = \"feature\"\nagent = \"general\"\ndepends-on = [\"zz\"]\n",
			`d.toml:5: task "a" depends on "zz", which the manifest does not have`},
		{"toml syntax", "d.toml", "goal = \ntasks = 3\n", `d.toml:1: expected value but found '\n' instead`},
		{"toml type", "d.toml", "max-parallel = \"four\"\n", `d.toml:1: max-parallel: want a whole number from 1, found "four"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.file, []byte(tc.text))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v\nwant  %s", err, tc.want)
			}
			if m != nil {
				t.Fatalf("a manifest with an error: %#v", m)
			}
			var e *Error
			var es Errors
			if !errors.As(err, &e) && !errors.As(err, &es) {
				t.Fatalf("error %T, want *Error or Errors", err)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	m, err := Parse("d.yaml", []byte(header+"  - {id: a, type: feature, agent: general}\n  - {id: b, agent: explore, depends-on: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxParallel != 5 || m.Status != RunPending || m.Commits.Strategy != "per-task" || !m.Critique.Enabled {
		t.Fatalf("defaults: %#v", m)
	}
	if b := m.Task("b"); !reflect.DeepEqual(b.Receives, []string{"a"}) || b.Status != Pending {
		t.Fatalf("receives defaults to depends-on, status to pending: %#v", b)
	}
	if !strings.Contains(header, "fast-gate") || m.Validation.FastGate != "go vet ./..." {
		t.Fatalf("fast gate %q", m.Validation.FastGate)
	}
}

func TestCommitGate(t *testing.T) {
	for _, tc := range []struct{ name, manifest, want string }{
		{"fast gate", "validation: {fast-gate: go test ./...}\n", "go test ./..."},
		{"verify pipeline", "verify: {workdir: it's, build: go build ./..., test: go test ./..., custom: [{name: e2e, command: make e2e}]}\n" +
			"validation: {no-fast-gate: true, reason: the build is the unit}\n",
			`cd 'it'\''s' && (go build ./...) && (go test ./...) && (make e2e)`},
		{"no verify pipeline", "validation: {no-fast-gate: true, reason: none}\n", ""},
		{"neither", "goal: g\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse("dispatch.yaml", []byte(tc.manifest+"tasks:\n  - {id: a, type: feature, agent: general}\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.CommitGate(); got != tc.want {
				t.Fatalf("CommitGate() = %q, want %q", got, tc.want)
			}
		})
	}
}

// A manifest that names no commits.approval says so ("", which a run takes
// as auto); the seed's ask-once default is for a person at the orchestrator.
func TestApprovalUnsaid(t *testing.T) {
	for doc, want := range map[string]string{
		header + "  - {id: a, agent: explore}\n":                                     "",
		"commits: {approval: ask-each}\n" + header + "  - {id: a, agent: explore}\n": "ask-each",
	} {
		m, err := Parse("dispatch.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if m.Commits.Approval != want {
			t.Fatalf("approval %q, want %q", m.Commits.Approval, want)
		}
	}
}
