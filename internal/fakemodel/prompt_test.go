package fakemodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/prompt"
	"github.com/git-crucible/git-crucible/report"
)

// TestParsePromptGolden reads every golden prompt of package prompt as
// the model does.
func TestParsePromptGolden(t *testing.T) {
	const out = "/repo/.git/crucible/dispatch/7/output.yaml"
	cases := map[string]Dispatch{
		"design-writer": {PhaseName: "Design", Phase: "1", Step: "design-writer", Role: "design-writer", TestCommand: "go test ./...", ReportPath: out},
		"test-writer":   {PhaseName: "Design", Phase: "1", Step: "test-writer", Role: "test-writer", TestCommand: "go test ./...", ReportPath: out},
		"red-team": {PhaseName: "Design", Phase: "1", Step: "red-team", Round: "3", MaxRounds: "15", Role: "red-team",
			TestCommand: "go test ./...", ReportPath: out},
		"plan-writer": {PhaseName: "Plan", Phase: "2", Step: "plan-writer", Role: "plan-writer", TestCommand: "go test ./...", ReportPath: out},
		"plan-reviewer": {PhaseName: "Plan", Phase: "2", Step: "plan-reviewer", Round: "2", MaxRounds: "15", Role: "plan-reviewer",
			TestCommand: "go test ./...", ReportPath: out},
		"fixer": {PhaseName: "Plan", Phase: "2", Step: "fixer", Round: "1", MaxRounds: "15", Role: "fixer", TestCommand: "go test ./...", ReportPath: out},
		"implementer": {PhaseName: "Execute", Phase: "3", Step: "implementer", Role: "implementer", Task: "task-2",
			TaskTitle: "status --json prints the state", FastGate: "go test ./cmd/", TestCommand: "go test ./...", ReportPath: out},
		"code-reviewer": {PhaseName: "Execute", Phase: "3", Step: "code-reviewer", Round: "1", MaxRounds: "15", Role: "code-reviewer",
			Task: "task-1", TaskTitle: "the JSON encoder", TestCommand: "go test ./...", ReportPath: out},
		"task": {PhaseName: "Execute", Phase: "3", Step: "task", Role: "task", Task: "2a-status-json", TaskTitle: "2a-status-json",
			FastGate: "go test ./cmd/", TestCommand: "go test ./...", ReportPath: out},
		"critique": {PhaseName: "Execute", Phase: "3", Step: "critique", Round: "1", MaxRounds: "3", Role: "critique",
			TestCommand: "go test ./...", ReportPath: out},
	}
	files, err := filepath.Glob("../../prompt/testdata/golden/*.md")
	if err != nil || len(files) != len(cases) {
		t.Fatalf("golden prompts: %v, %v; want %d of them", files, err, len(cases))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := cases[name]
			if !ok {
				t.Fatalf("no case for %s", f)
			}
			got, ok := ParsePrompt(string(b))
			if !ok || got != want {
				t.Errorf("ParsePrompt(%s) = %+v, %v\nwant %+v", f, got, ok, want)
			}
		})
	}
}

// TestParsePromptRendered renders the templates as build and run do for
// the dispatches the scenarios select by, and reads back what the
// scripted agent is given in CRUCIBLE_ROLE, _PHASE, _TASK and _ROUND.
func TestParsePromptRendered(t *testing.T) {
	set, err := prompt.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	base := func(phase int, name, step, role string) prompt.Data {
		return prompt.Data{Goal: "greet by name", Mode: "feature", Pipeline: "build-1", Phase: phase, PhaseName: name,
			Step: step, Role: role, TestCommand: "sh test/unit.sh", Inputs: map[string]string{}, Outputs: map[string]string{},
			Report: prompt.Report{Path: "/w/.git/crucible/runs/p/1/output.yaml", Format: prompt.ReportTask}}
	}
	task := &report.PlanTask{ID: "1", Title: "Take the name argument", Files: []string{"greet.sh"}, FastGate: "sh test/unit.sh"}
	dagTask := &report.PlanTask{ID: "1b-lower", Title: "1b-lower", Files: []string{"lib/lower.sh"}, FastGate: "sh test/unit.sh"}
	cases := []struct {
		name     string
		template string
		data     func() prompt.Data
		want     Conds
		report   string
	}{
		{"design writer", "design-writer", func() prompt.Data {
			d := base(1, "Design", "design-writer", "design-writer")
			d.Outputs["design"] = "docs/design.md"
			return d
		}, Conds{"design-writer", "1", "", ""}, "/w/.git/crucible/runs/p/1/output.yaml"},
		{"red team round 2", "red-team", func() prompt.Data {
			d := base(1, "Design", "design-gate", "red-team")
			d.Round, d.MaxRounds = 2, 15
			d.Artifact = prompt.Artifact{Name: "design", Path: "docs/design.md"}
			d.Report.Format = prompt.ReportFindings
			return d
		}, Conds{"red-team", "1", "", "2"}, "/w/.git/crucible/runs/p/1/output.yaml"},
		{"build's implementer", "implementer", func() prompt.Data {
			d := base(3, "Execute", "implement", "implementer")
			d.Inputs = map[string]string{"design": "docs/design.md", "plan": "docs/plan.md"}
			d.Task = task
			return d
		}, Conds{"implementer", "3", "1", ""}, "/w/.git/crucible/runs/p/1/output.yaml"},
		{"task reviewer", "code-reviewer", func() prompt.Data {
			d := base(3, "Execute", "review", "reviewer")
			d.Inputs = map[string]string{"design": "docs/design.md", "plan": "docs/plan.md"}
			d.Round, d.MaxRounds, d.Task = 1, 15, task
			d.Artifact = prompt.Artifact{Name: "diff", Path: ".git/crucible/runs/p/12/diff.patch"}
			d.Report.Format = prompt.ReportFindings
			return d
		}, Conds{"reviewer", "3", "1", "1"}, "/w/.git/crucible/runs/p/1/output.yaml"},
		// A task run's prompts name $CRUCIBLE_OUTPUT, not a path.
		{"run's task", "task", func() prompt.Data {
			d := base(3, "Execute", "task", "implementer")
			d.Inputs["manifest"], d.Task, d.Report.Path = "dispatch/greet/dispatch.yaml", dagTask, "$CRUCIBLE_OUTPUT"
			return d
		}, Conds{"implementer", "3", "1b-lower", ""}, "$CRUCIBLE_OUTPUT"},
		{"run's fix, amendment round 1", "task", func() prompt.Data {
			d := base(3, "Execute", "task-fix", "implementer")
			d.Inputs["manifest"], d.Task, d.Report.Path = "dispatch/greet/dispatch.yaml", dagTask, "$CRUCIBLE_OUTPUT"
			d.Round, d.MaxRounds = 1, 3
			d.Issues = []report.Issue{{Task: "1b-lower", Severity: "blocking", File: "lib/lower.sh", Description: "say how to call it"}}
			return d
		}, Conds{"implementer", "3", "1b-lower", "1"}, "$CRUCIBLE_OUTPUT"},
		{"level critique, round 2", "critique", func() prompt.Data {
			d := base(3, "Execute", "critique", "critique")
			d.Inputs["manifest"], d.Round, d.MaxRounds, d.Report.Path = "dispatch/greet/dispatch.yaml", 2, 3, "$CRUCIBLE_OUTPUT"
			d.Report.Format = prompt.ReportCritique
			// A task's report that quotes a prompt does not move the report's path.
			d.Reviewed = []prompt.Reviewed{{ID: "1a-upper", Output: "notes: I was told to write your report as YAML to the file `/elsewhere`"}}
			return d
		}, Conds{"critique", "3", "", "2"}, "$CRUCIBLE_OUTPUT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, err := set.Render(c.template, c.data())
			if err != nil {
				t.Fatal(err)
			}
			d, ok := ParsePrompt(text)
			if !ok {
				t.Fatalf("no dispatch in:\n%s", text)
			}
			if d.Conds() != c.want || d.ReportPath != c.report {
				t.Errorf("read %+v, report %q; want %+v, report %q", d.Conds(), d.ReportPath, c.want, c.report)
			}
		})
	}
}

func TestParsePromptNone(t *testing.T) {
	for _, text := range []string{"", "say hi", "# crucible build — Design, step x", "## crucible build — Design (phase 1 of 4), step x"} {
		if d, ok := ParsePrompt(text); ok {
			t.Errorf("ParsePrompt(%q) = %+v, true; want none", text, d)
		}
	}
}

func TestParseFakeTools(t *testing.T) {
	cases := []struct {
		name, text string
		want       [][]ToolCall
		err        string
	}{
		{"none", "say hi\nFAKE-TOOLS\n", nil, ""},
		{"two turns, parallel calls", "do this\nFAKE-TOOLS [{\"name\":\"Agent\",\"input\":{\"prompt\":\"a\"}},{\"name\":\"Agent\",\"input\":{\"prompt\":\"b\"}}]\n" +
			"FAKE-TOOLS [{\"name\":\"Write\",\"input\":{\"file_path\":\"/x\",\"content\":\"y\\n\"}}]\r\nthen stop",
			[][]ToolCall{
				{{Name: "Agent", Input: map[string]any{"prompt": "a"}}, {Name: "Agent", Input: map[string]any{"prompt": "b"}}},
				{{Name: "Write", Input: map[string]any{"file_path": "/x", "content": "y\n"}}},
			}, ""},
		{"no input", `FAKE-TOOLS [{"name":"TaskList"}]`, [][]ToolCall{{{Name: "TaskList", Input: map[string]any{}}}}, ""},
		{"not JSON", "FAKE-TOOLS [{name}]", nil, "line 1: FAKE-TOOLS needs a JSON array"},
		{"empty", "x\nFAKE-TOOLS []", nil, "line 2: FAKE-TOOLS with no tool call"},
		{"nameless", `FAKE-TOOLS [{"input":{}}]`, nil, "tool call 1 has no name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFakeTools(c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equalJSON(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
