package pipespec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/prompt"
)

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
