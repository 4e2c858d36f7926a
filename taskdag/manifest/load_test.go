package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	top := t.TempDir()
	if _, err := Resolve(top, ""); err == nil || err.Error() != "no run under dispatch/: name a manifest, a run directory or a run" {
		t.Fatalf("no runs: %v", err)
	}
	old := filepath.Join(top, "dispatch", "old", "dispatch.yaml")
	newer := filepath.Join(top, "dispatch", "new", "dispatch.toml")
	write(t, old, "")
	write(t, newer, "")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(top, "dispatch", "empty", "notes.md"), "")
	for _, tc := range []struct{ arg, want, err string }{
		{"", newer, ""},
		{"old", old, ""},
		{"new", newer, ""},
		{filepath.Join(top, "dispatch", "old"), old, ""},
		{old, old, ""},
		{"nope", "", `no run named "nope": no dispatch/nope/dispatch.yaml`},
		{"./nope", "", "./nope: no such file or directory"},
		{"empty", "", `no run named "empty": no dispatch/empty/dispatch.yaml`},
	} {
		got, err := Resolve(top, tc.arg)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %s", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

func TestPlanFiles(t *testing.T) {
	plan := "---\nid: 1a\n---\n## Objective\nTouch `not/this.go`.\n## Files to Modify\n" +
		"- `src/auth.ts` (new), `./src/index.ts`\n- `src/auth.ts` again\n- run `bun test` after\n### Notes\n- `docs/auth.md`\n" +
		"## Constraints\n- `nor/this.go`\n"
	want := []string{"src/auth.ts", "src/index.ts", "docs/auth.md"}
	if got := PlanFiles([]byte(plan)); !reflect.DeepEqual(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
}

func TestLoadPlanFiles(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "dispatch.yaml")
	write(t, manifest, header+"  - {id: a, type: feature, agent: general}\n  - {id: b, type: feature, agent: general, files: [b.go]}\n  - {id: c, type: feature, agent: general}\n")
	write(t, filepath.Join(dir, "a", "plan.md"), "## Files to Modify\n- `a.go`\n- `shared.go`\n")
	write(t, filepath.Join(dir, "b", "plan.md"), "## Files to Modify\n- `shared.go`\n") // the manifest's files win
	m, err := Load(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if got := [][]string{m.Task("a").Files, m.Task("b").Files, m.Task("c").Files}; !reflect.DeepEqual(got, [][]string{{"a.go", "shared.go"}, {"b.go"}, nil}) {
		t.Fatalf("files %q", got)
	}
	write(t, filepath.Join(dir, "c", "plan.md"), "## Files to Modify\n- `shared.go`\n")
	_, err = Load(manifest)
	want := manifest + `:7: tasks "a" and "c" (line 5) of level 1 both name shared.go and neither depends on the other: add a depends-on edge between them`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant  %s", err, want)
	}
}

func TestPlanObjective(t *testing.T) {
	for _, c := range []struct{ plan, want string }{
		{"---\nid: 1a\n---\n## Objective\n\nExtract the auth module.\nKeep its API.\r\n\n## Files to Modify\n- `a`\n", "Extract the auth module.\nKeep its API."},
		{"## objective\nlower case heading\n", "lower case heading"},
		{"## Objectives\nnot this\n### Objective\nnor this\n", ""},
		{"", ""},
	} {
		if got := PlanObjective([]byte(c.plan)); got != c.want {
			t.Errorf("PlanObjective(%q) = %q, want %q", c.plan, got, c.want)
		}
	}
}
