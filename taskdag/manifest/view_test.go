package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const viewManifest = `# the run's manifest
goal: greet # why
max-parallel: 2
tasks:
  # first
  - id: 1a
    agent: explore
    files: [a.sh]
    status: pending # set by the engine
  - id: 1b
    agent: explore
    commit-sha: ""
  - id: 2a
    agent: explore
    depends-on: [1a, 1b]
`

func viewed(t *testing.T) *Manifest {
	t.Helper()
	m, err := Parse("dispatch.yaml", []byte(viewManifest))
	if err != nil {
		t.Fatal(err)
	}
	m.Status, m.BackupBranch = RunInProgress, "backup-main-pre-dispatch"
	m.LevelBoundaries = map[int]string{2: "1234", 1: "abc"}
	m.SetStatus("1a", Completed, "1234")
	m.SetStatus("1b", Completed, "")
	m.SetStatus("2a", Dispatched, "")
	return m
}

func TestRenderView(t *testing.T) {
	out, err := RenderView([]byte(viewManifest), viewed(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `# the run's manifest
goal: greet # why
max-parallel: 2
status: in-progress
backup-branch: "backup-main-pre-dispatch"
level-boundaries:
  1: "abc"
  2: "1234"
tasks:
  # first
  - id: 1a
    agent: explore
    files: [a.sh]
    status: completed # set by the engine
    commit-sha: "1234"
  - id: 1b
    agent: explore
    commit-sha: ""
    status: completed
  - id: 2a
    agent: explore
    depends-on: [1a, 1b]
    status: dispatched
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	// The view reads back as the state it shows, and shows it again unchanged.
	back, err := Parse("dispatch.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if back.Task("1a").CommitSHA != "1234" || back.Task("2a").Status != Dispatched || back.LevelBoundaries[2] != "1234" || back.Status != RunInProgress {
		t.Fatalf("read back: %+v", back)
	}
	again, err := RenderView(out, back)
	if err != nil || string(again) != string(out) {
		t.Fatalf("again (%v):\n%s", err, again)
	}
	back.ClearState()
	if back.Task("1a").Status != Pending || back.Task("1a").CommitSHA != "" || back.LevelBoundaries != nil || back.BackupBranch != "" {
		t.Fatalf("cleared: %+v", back)
	}
}

func TestViewWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dispatch.yaml")
	if err := os.WriteFile(path, []byte(viewManifest), 0o640); err != nil {
		t.Fatal(err)
	}
	m := viewed(t)
	v := NewView(path, []byte(viewManifest))
	if err := v.Write(m); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "status: dispatched") {
		t.Fatalf("not rewritten:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode())
	}
	m.SetStatus("2a", Completed, "ffff")
	if err := v.Write(m); err != nil || !strings.Contains(string(must(os.ReadFile(path))), `commit-sha: "ffff"`) {
		t.Fatalf("second write: %v", err)
	}
	// The user edits it: left alone, said once.
	edited := append(must(os.ReadFile(path)), "# mine\n"...)
	os.WriteFile(path, edited, 0o640)
	m.Status = RunCompleted
	if err := v.Write(m); err == nil || !strings.Contains(err.Error(), "changed since the run read it") {
		t.Fatalf("edited file: %v", err)
	}
	if err := v.Write(m); err != nil {
		t.Fatalf("said twice: %v", err)
	}
	if string(must(os.ReadFile(path))) != string(edited) {
		t.Fatal("the edited file was rewritten")
	}
	// A symbolic link is not written through.
	target := filepath.Join(dir, "real.yaml")
	os.WriteFile(target, []byte(viewManifest), 0o644)
	link := filepath.Join(dir, "link.yaml")
	os.Symlink(target, link)
	if err := NewView(link, []byte(viewManifest)).Write(m); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("link: %v", err)
	}
	if string(must(os.ReadFile(target))) != viewManifest {
		t.Fatal("written through the link")
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	// TOML is never rewritten.
	if v := NewView(filepath.Join(dir, "dispatch.toml"), nil); v != nil || v.Write(m) != nil {
		t.Fatal("a TOML view")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// A run killed while it wrote the view leaves its temporary file; the
// next run's view removes it, and a link planted there is not written
// through.
func TestViewTempOfAKilledRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dispatch.yaml")
	data := []byte("tasks:\n  - {id: a, type: feature, agent: general}\n")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	temp := filepath.Join(dir, ".dispatch.yaml.crucible-tmp")
	if err := os.WriteFile(temp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := NewView(path, data)
	if _, err := os.Lstat(temp); !os.IsNotExist(err) {
		t.Fatalf("the killed run's temporary file is still there: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.Symlink(outside, temp); err != nil {
		t.Fatal(err)
	}
	m, err := Parse("dispatch.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	m.Status = RunInProgress
	if err := v.Write(m); err == nil {
		t.Fatal("the view was written through a link")
	}
	if _, err := os.Lstat(outside); !os.IsNotExist(err) {
		t.Fatalf("the link's target was created: %v", err)
	}
}
