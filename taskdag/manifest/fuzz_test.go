package manifest

import (
	"errors"
	"testing"
)

// fuzzManifest checks what Parse promises for any input: an *Error or
// Errors and no manifest, or a manifest whose levels put every task after
// its dependencies and whose receives lie within depends-on.
func fuzzManifest(t *testing.T, name string, data []byte) {
	m, err := Parse(name, data)
	if err != nil {
		var e *Error
		var es Errors
		if !errors.As(err, &e) && !errors.As(err, &es) {
			t.Fatalf("error %T %v, want *Error or Errors", err, err)
		}
		if m != nil {
			t.Fatalf("a manifest with error %v", err)
		}
		return
	}
	if len(m.Tasks) == 0 || m.MaxParallel < 1 {
		t.Fatalf("accepted %d tasks at max-parallel %d", len(m.Tasks), m.MaxParallel)
	}
	seen := 0
	for lv, ids := range m.Levels() {
		if len(ids) == 0 {
			t.Fatalf("level %d is empty", lv+1)
		}
		for _, id := range ids {
			seen++
			task := m.Task(id)
			deps := map[string]bool{}
			for _, d := range task.DependsOn {
				deps[d] = true
				if m.Level(d) >= lv+1 {
					t.Fatalf("%s at level %d depends on %s at level %d", id, lv+1, d, m.Level(d))
				}
			}
			for _, r := range task.Receives {
				if !deps[r] {
					t.Fatalf("%s receives %s outside its depends-on", id, r)
				}
			}
		}
	}
	if seen != len(m.Tasks) {
		t.Fatalf("levels hold %d of %d tasks", seen, len(m.Tasks))
	}
	if m.Ready() != nil && m.Deadlocked() != nil {
		t.Fatalf("deadlocked with tasks ready: %v", m.Ready())
	}
}

func FuzzParseYAML(f *testing.F) {
	for _, name := range []string{"seed-dispatch.yaml", "seed-dispatch-complete.yaml"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(header + "  - {id: a, type: feature, agent: general, depends-on: [a]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzManifest(t, "dispatch.yaml", data)
		fuzzView(t, data)
	})
}

// fuzzView checks the view of any manifest Parse accepts: it reads back
// as a manifest that shows the state it was given.
func fuzzView(t *testing.T, data []byte) {
	m, err := Parse("dispatch.yaml", data)
	if err != nil {
		return
	}
	m.Status, m.BackupBranch, m.LevelBoundaries = RunFailed, "backup-x", map[int]string{1: "0123"}
	for _, task := range m.Tasks {
		m.SetStatus(task.ID, Completed, "0123")
	}
	out, err := RenderView(data, m)
	if err != nil {
		return // a document yaml.v3 cannot write back: the view leaves the file alone
	}
	back, err := Parse("dispatch.yaml", out)
	if err != nil {
		t.Fatalf("the view does not parse: %v\n%s", err, out)
	}
	if back.Status != RunFailed || back.BackupBranch != "backup-x" || back.LevelBoundaries[1] != "0123" {
		t.Fatalf("the view shows %s %q %v\n%s", back.Status, back.BackupBranch, back.LevelBoundaries, out)
	}
	for _, task := range back.Tasks {
		if task.Status != Completed || task.CommitSHA != "0123" {
			t.Fatalf("task %s shows %s %q\n%s", task.ID, task.Status, task.CommitSHA, out)
		}
	}
}

func FuzzParseTOML(f *testing.F) {
	f.Add(readTestdata(f, "seed-dispatch.toml"))
	f.Add([]byte("[[tasks]]\nid = \"a\"\ntype = \"feature\"\nagent = \"general\"\ndepends-on = [\"a\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzManifest(t, "dispatch.toml", data) })
}
