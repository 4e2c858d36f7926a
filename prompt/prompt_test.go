package prompt

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/git-crucible/git-crucible/report"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.md")

// sample is what the engine would pass each default template in the
// default pipeline: the inputs its step names, a task in Phase 3, findings
// for the fixer.
func sample(name string) Data {
	d := Data{Goal: "add a --json flag to status", Mode: "feature", Pipeline: "build-20261124-100000",
		Phase: 1, PhaseName: "Design", Step: name, Role: name, TestCommand: "go test ./...",
		Inputs: map[string]string{}, Outputs: map[string]string{},
		Report: Report{Path: "/repo/.git/crucible/dispatch/7/output.yaml", Format: ReportTask}}
	design := "docs/design.md"
	switch name {
	case "design-writer":
		d.Outputs["design"] = design
	case "test-writer":
		d.Inputs["design"] = design
		d.Exports = []string{"acceptance-command"}
	case "plan-writer":
		d.Phase, d.PhaseName = 2, "Plan"
		d.Inputs = map[string]string{"design": design, "acceptance-command": "go test ./acceptance/"}
		d.Outputs["plan"] = "docs/plan.md"
		d.Exports = []string{"tasks"}
	case "implementer":
		d.Phase, d.PhaseName = 3, "Execute"
		d.Inputs = map[string]string{"design": design, "plan": "docs/plan.md"}
		d.Task = &report.PlanTask{ID: "task-2", Title: "status --json prints the state", Files: []string{"cmd/status.go", "cmd/status_test.go"},
			DependsOn: []string{"task-1"}, FastGate: "go test ./cmd/"}
	case "task":
		d.Phase, d.PhaseName, d.Step = 3, "Execute", "task"
		d.Inputs = map[string]string{"manifest": "dispatch/json/dispatch.yaml"}
		d.Task = &report.PlanTask{ID: "2a-status-json", Title: "2a-status-json", Files: []string{"cmd/status.go"},
			DependsOn: []string{"1a-encoder"}, FastGate: "go test ./cmd/"}
		d.Upstream = "## Upstream context\n\n### Output of task 1a-encoder\n\n```yaml\nstatus: completed\n```\n"
	case "critique":
		d.Phase, d.PhaseName, d.Step, d.Round, d.MaxRounds = 3, "Execute", "critique", 1, 3
		d.Inputs = map[string]string{"manifest": "dispatch/json/dispatch.yaml"}
		d.Reviewed = []Reviewed{
			{ID: "1a-encoder", Commit: "0123456789abcdef0123456789abcdef01234567", Files: []string{"json/encode.go"}, Output: "status: completed\nfiles-modified: [json/encode.go]"},
			{ID: "1b-survey", Output: "status: completed\nfiles-modified: []", Instructions: "Check each claim against the code."}}
		d.Report.Format = ReportCritique
	case "plan-reviewer":
		d.Phase, d.PhaseName, d.Round, d.MaxRounds = 2, "Plan", 2, 15
		d.Inputs["design"] = design
		d.Artifact = Artifact{Name: "plan", Path: "docs/plan.md"}
		d.Report.Format = ReportFindings
	case "code-reviewer":
		d.Phase, d.PhaseName, d.Round, d.MaxRounds = 3, "Execute", 1, 15
		d.Inputs = map[string]string{"design": design, "plan": "docs/plan.md"}
		d.Artifact = Artifact{Name: "diff", Path: ".git/crucible/dispatch/9/diff.patch"}
		d.Task = &report.PlanTask{ID: "task-1", Title: "the JSON encoder"}
		d.Report.Format = ReportFindings
	case "red-team":
		d.Round, d.MaxRounds = 3, 15
		d.Artifact = Artifact{Name: "design", Path: design}
		d.Report.Format = ReportFindings
	case "fixer":
		d.Phase, d.PhaseName, d.Round, d.MaxRounds = 2, "Plan", 1, 15
		d.Inputs["design"] = design
		d.Artifact = Artifact{Name: "plan", Path: "docs/plan.md"}
		d.Exports = []string{"tasks"}
		d.Findings = &report.Findings{
			Fatal:       []report.Finding{{Title: "no task delivers criterion 3", File: "docs/plan.md", Detail: "--json on an empty repository is never planned"}},
			Significant: []report.Finding{{Title: "task-2 has no fast gate", Detail: "every task needs one"}},
		}
	}
	return d
}

// TestDefaultsRender renders every built-in template with sample data and
// compares it with testdata/golden (go test ./prompt -update rewrites them).
func TestDefaultsRender(t *testing.T) {
	set, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"code-reviewer", "critique", "design-writer", "fixer", "implementer", "plan-reviewer", "plan-writer", "red-team", "task", "test-writer"}
	if got := strings.Join(set.Names(), " "); got != strings.Join(want, " ") {
		t.Fatalf("Names() = %s, want %s", got, strings.Join(want, " "))
	}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			out, err := set.Render(name, sample(name))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, "<no value>") {
				t.Errorf("rendered <no value>:\n%s", out)
			}
			// What a real agent must be told, whatever else the prompt says.
			for _, must := range []string{"CRUCIBLE_OUTPUT", sample(name).Report.Path, "exit with status 0"} {
				if !strings.Contains(out, must) {
					t.Errorf("prompt does not say %q", must)
				}
			}
			golden := filepath.Join("testdata", "golden", name+".md")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != out {
				t.Errorf("%s differs from %s (go test ./prompt -update rewrites it):\n%s", name, golden, out)
			}
		})
	}
}

func writeOverride(t *testing.T, work, name, text string) string {
	t.Helper()
	dir := filepath.Join(work, OverrideDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOverrideWins(t *testing.T) {
	work := t.TempDir()
	writeOverride(t, work, "red-team.md", "attack {{.Artifact.Path}}\n{{template \"report\" .}}")
	writeOverride(t, work, "security.md", "audit {{.Goal}} report at {{.Report.Path}}")
	writeOverride(t, work, "notes.txt", "not a template")
	set, err := Load(work)
	if err != nil {
		t.Fatal(err)
	}
	d := sample("red-team")
	out, err := set.Render("red-team", d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "attack docs/design.md\n## Your report") || !strings.Contains(out, "findings:\n  fatal:") {
		t.Errorf("override not used, or the built-in report partial not available to it:\n%s", out)
	}
	if got, want := set.Source("red-team"), ".crucible/templates/red-team.md"; got != want {
		t.Errorf("Source(red-team) = %q, want %q", got, want)
	}
	if got, want := set.Source("fixer"), "<built-in>/fixer.md"; got != want {
		t.Errorf("Source(fixer) = %q, want %q", got, want)
	}
	if out, err := set.Render("security", d); err != nil || out != "audit add a --json flag to status report at "+d.Report.Path {
		t.Errorf("an added template: %q, %v", out, err)
	}
	if set.Has("notes") || set.Has("_report") || !set.Has("security") {
		t.Errorf("Has: notes %v, _report %v, security %v; want false false true", set.Has("notes"), set.Has("_report"), set.Has("security"))
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"parse error names file and line", "fixer.md", "line one\n{{if .Round}\n", "template: .crucible/templates/fixer.md:2: bad character U+007D '}'"},
		{"unknown function", "red-team.md", "a\nb\n{{shout .Goal}}", "template: .crucible/templates/red-team.md:3: function \"shout\" not defined"},
		{"broken partial", "_report.md", "{{define \"report\"}}{{end}\n", "template: .crucible/templates/_report.md:1: bad character U+007D '}'"},
		{"bad name", "Red-Team.md", "x", ".crucible/templates/Red-Team.md: \"Red-Team\" is not a template name (lower-case letters, digits and dashes); " + ErrRefused.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			writeOverride(t, work, tc.file, tc.text)
			_, err := Load(work)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Load: %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	work := t.TempDir()
	writeOverride(t, work, "implementer.md", "task\n{{.Task.ID}} {{.Inputs.missing}}")
	writeOverride(t, work, "fixer.md", "x\n\n{{.Inputs.missing}}")
	set, err := Load(work)
	if err != nil {
		t.Fatal(err)
	}
	d := sample("design-writer")
	_, err = set.Render("implementer", d)
	if want := `template: .crucible/templates/implementer.md:2:7: executing ".crucible/templates/implementer.md" at <.Task.ID>: nil pointer evaluating *report.PlanTask.ID`; err == nil || err.Error() != want {
		t.Errorf("nil task: %v\nwant %s", err, want)
	}
	_, err = set.Render("fixer", d)
	if want := `template: .crucible/templates/fixer.md:3:9: executing ".crucible/templates/fixer.md" at <.Inputs.missing>: map has no entry for key "missing"`; err == nil || err.Error() != want {
		t.Errorf("missing key: %v\nwant %s", err, want)
	}
	d.Report.Format = "yaml"
	if _, err := set.Render("design-writer", d); err == nil || !strings.Contains(err.Error(), `not "yaml"`) {
		t.Errorf("bad report format: %v", err)
	}
	if _, err := set.Render("nope", sample("fixer")); err == nil || err.Error() != `no template "nope"` {
		t.Errorf("unknown template: %v", err)
	}
}

func TestOverrideRefused(t *testing.T) {
	t.Run("symlinked file", func(t *testing.T) {
		work := t.TempDir()
		secret := filepath.Join(t.TempDir(), "secret")
		os.WriteFile(secret, []byte("{{.Goal}} secret"), 0o644)
		dir := filepath.Join(work, OverrideDir)
		os.MkdirAll(dir, 0o755)
		if err := os.Symlink(secret, filepath.Join(dir, "red-team.md")); err != nil {
			t.Fatal(err)
		}
		_, err := Load(work)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "red-team.md: is a symbolic link") {
			t.Errorf("Load: %v, want a refused symbolic link", err)
		}
	})
	t.Run("symlinked directory", func(t *testing.T) {
		work := t.TempDir()
		elsewhere := t.TempDir()
		writeOverride(t, elsewhere, "red-team.md", "x")
		os.MkdirAll(filepath.Join(work, ".crucible"), 0o755)
		if err := os.Symlink(filepath.Join(elsewhere, OverrideDir), filepath.Join(work, OverrideDir)); err != nil {
			t.Fatal(err)
		}
		_, err := Load(work)
		if want := ".crucible/templates: is not a directory (a symbolic link?); " + ErrRefused.Error(); err == nil || err.Error() != want {
			t.Errorf("Load: %v\nwant %s", err, want)
		}
	})
	t.Run("too large", func(t *testing.T) {
		work := t.TempDir()
		writeOverride(t, work, "red-team.md", strings.Repeat("x", MaxTemplateBytes+1))
		if _, err := Load(work); err == nil || !strings.Contains(err.Error(), "over the 65536-byte limit") {
			t.Errorf("Load: %v, want the size limit", err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		work := t.TempDir()
		path := writeOverride(t, work, "red-team.md", "")
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skip(err)
		}
		if _, err := Load(work); !errors.Is(err, ErrRefused) {
			t.Errorf("Load: %v, want a refused FIFO", err)
		}
	})
}

// yamlBlocks are the ```yaml blocks of a rendered prompt.
func yamlBlocks(prompt string) []string {
	var blocks []string
	for _, part := range strings.Split(prompt, "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, block)
	}
	return blocks
}

// TestReportShapesParse: the report shape each built-in prompt shows is a
// report the engine accepts (package report), so an agent that copies it
// and fills it in writes a parseable report.
func TestReportShapesParse(t *testing.T) {
	set, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range set.Names() {
		out, err := set.Render(name, sample(name))
		if err != nil {
			t.Fatal(err)
		}
		// The shape is the first block of the report section (a task's
		// upstream context, before it, has reports of its own).
		_, section, _ := strings.Cut(out, "## Your report")
		blocks := yamlBlocks(section)
		if len(blocks) == 0 {
			t.Errorf("%s shows no report shape", name)
			continue
		}
		shape := []byte(blocks[0])
		if sample(name).Report.Format == ReportFindings {
			f, err := report.ParseFindings(shape)
			if err != nil || len(f.Fatal) != 1 || f.Fatal[0].Title != "one line naming the problem" {
				t.Errorf("%s: findings shape: %+v, %v", name, f, err)
			}
			continue
		}
		if sample(name).Report.Format == ReportCritique {
			c, err := report.ParseCritique(shape)
			if err != nil || c.Verdict != report.NeedsWork || !slices.Equal(c.NeedsWork(), []string{"1a-encoder"}) || len(c.Tasks) != 2 {
				t.Errorf("%s: critique shape: %+v, %v", name, c, err)
			}
			continue
		}
		task, err := report.ParseTask(shape)
		if err != nil || task.Status != report.Completed {
			t.Errorf("%s: task shape: %+v, %v", name, task, err)
		}
		if !strings.Contains(blocks[0], "  tasks: []") {
			continue
		}
		// The plan's task list: the shape with the example list in its exports.
		withTasks := strings.Replace(blocks[0], "exports:                   # values later steps need\n  tasks: []  # the plan's task list: format below\n", blocks[1], 1)
		plan, err := report.ParsePlan([]byte(withTasks))
		if tasks := plan.Tasks(); err != nil || len(tasks) != 1 || tasks[0].ID != "task-1" || tasks[0].FastGate != "go test ./path/" {
			t.Errorf("%s: tasks shape: %+v, %v\n%s", name, tasks, err, withTasks)
		}
	}
}
