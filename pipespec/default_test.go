package pipespec

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-crucible/git-crucible/report"

	"github.com/git-crucible/git-crucible/prompt"
)

var update = flag.Bool("update", false, "rewrite testdata/default.golden")

func templates(t testing.TB) *prompt.Set {
	t.Helper()
	set, err := prompt.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestDefaultShape pins the default pipeline, the build seed's, step by
// step (testdata/default.golden; go test ./pipespec -update rewrites it).
func TestDefaultShape(t *testing.T) {
	sp, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sp); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	golden := filepath.Join("testdata", "default.golden")
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(b) {
		t.Errorf("the default differs from %s (go test ./pipespec -update rewrites it):\n%s", golden, b)
	}
}

// TestDefaultRenders renders every template the default names with the
// data its step gives (inputs, outputs, artifact, task): a template that
// asks for an input its step lacks fails here, not in a user's build.
func TestDefaultRenders(t *testing.T) {
	sp, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	set := templates(t)
	for _, l := range sp.Walk() {
		s := l.Step
		if s.Template == "" {
			continue
		}
		d := prompt.Data{Goal: "g", Mode: "feature", Pipeline: "p", Phase: int(l.Phase), PhaseName: l.Phase.Name(),
			Step: s.ID, Role: s.Role, Inputs: map[string]string{}, Outputs: s.Outputs, Exports: s.Exports,
			Report: prompt.Report{Path: "/out.yaml", Format: prompt.ReportTask}}
		for _, in := range s.Inputs {
			d.Inputs[in] = "in/" + in
		}
		if l.Parent != nil {
			d.Task = &report.PlanTask{ID: "task-1", Title: "t"}
		}
		if !s.Rounds() {
			if _, err := set.Render(s.Template, d); err != nil {
				t.Errorf("step %s: %v", s.ID, err)
			}
			continue
		}
		d.Round, d.MaxRounds, d.Artifact = 1, s.MaxRounds, prompt.Artifact{Name: s.Artifact, Path: "a/" + s.Artifact}
		round := d
		round.Role, round.Report.Format = s.Role, prompt.ReportFindings
		if _, err := set.Render(s.Template, round); err != nil {
			t.Errorf("step %s, round: %v", s.ID, err)
		}
		fix := d
		fix.Role, fix.Findings = s.Fixer, &report.Findings{Fatal: []report.Finding{{Title: "x"}}}
		if _, err := set.Render(s.FixTemplate, fix); err != nil {
			t.Errorf("step %s, fix: %v", s.ID, err)
		}
	}
}
