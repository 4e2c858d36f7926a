package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/prompt"
)

func TestCheckPoint(t *testing.T) {
	sp, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    Point
		want string
	}{
		{Point{Phase: 1, Step: "design-gate", Round: 3}, ""},
		{Point{Phase: 3, Step: "implement", Task: "task-2"}, ""},
		{Point{Phase: 3, Step: "task-review", Task: "t", Round: 15}, ""},
		{Point{Phase: 1, Step: "gone"}, `the spec has no step "gone"`},
		{Point{Phase: 2, Step: "design-gate"}, `step "design-gate" is in phase 1, not 2`},
		{Point{Phase: 3, Step: "implement"}, `step "implement" runs per task: the point needs a task`},
		{Point{Phase: 3, Step: "tasks", Task: "t"}, `step "tasks" does not run per task, but the point names task "t"`},
		{Point{Phase: 1, Step: "design", Round: 1}, `step "design" has no rounds, but the point names round 1`},
		{Point{Phase: 2, Step: "plan-gate", Round: 16}, `step "plan-gate" has at most 15 rounds, not 16`},
		{Point{Phase: 2, Step: "plan-gate", Round: -1}, `step "plan-gate" has no rounds, but the point names round -1`},
	} {
		err := sp.Check(tc.p)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("Check(%+v) = %s, want %q", tc.p, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("Check(%+v) = nil, want %s", tc.p, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.toml")
	os.WriteFile(path, DefaultTOML(), 0o644)
	sp, err := Load(path, templates(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Source != path || len(sp.Walk()) != 25 {
		t.Errorf("Load: source %q, %d steps", sp.Source, len(sp.Walk()))
	}
	os.WriteFile(path, []byte(strings.Replace(string(DefaultTOML()), `template = "implementer"`, `template = "builder"`, 1)), 0o644)
	if _, err := Load(path, templates(t), nil); err == nil || !strings.HasPrefix(err.Error(), path+":123: unknown template \"builder\"") {
		t.Errorf("Load of a broken spec: %v", err)
	}
	os.WriteFile(path, make([]byte, MaxBytes+1), 0o644)
	if _, err := Load(path, templates(t), nil); err == nil || !strings.Contains(err.Error(), "over the 1048576-byte limit") {
		t.Errorf("Load of a huge spec: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "none.toml"), templates(t), nil); !os.IsNotExist(err) {
		t.Errorf("Load of a missing file: %v", err)
	}
	link := filepath.Join(dir, "link.toml")
	os.WriteFile(path, DefaultTOML(), 0o644)
	os.Symlink(path, link)
	if _, err := Load(link, templates(t), nil); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Load of a symbolic link: %v", err)
	}
}

// TestWorkTreeTemplates: a spec may name a template the work tree adds.
func TestWorkTreeTemplates(t *testing.T) {
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, prompt.OverrideDir), 0o755)
	os.WriteFile(filepath.Join(work, prompt.OverrideDir, "security.md"), []byte("audit {{.Goal}}"), 0o644)
	set, err := prompt.Load(work)
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(minimal, `template = "implementer"`, `template = "security"`, 1)
	if _, err := Parse([]byte(spec), "x.toml", set); err != nil {
		t.Errorf("with the work tree's templates: %v", err)
	}
	if _, err := Parse([]byte(spec), "x.toml", templates(t)); err == nil || !strings.Contains(err.Error(), `x.toml:37: unknown template "security"`) {
		t.Errorf("with the built-in templates only: %v", err)
	}
}
