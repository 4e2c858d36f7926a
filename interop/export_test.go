package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// openService makes a hermetic repository, changes into it and opens the
// pipeline service on it for the rest of the test.
func openService(t *testing.T) *pipeline.Service {
	t.Helper()
	t.Chdir(gittest.Init(t))
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	svc := pipeline.Open(repo)
	t.Cleanup(func() { svc.Close() })
	return svc
}

// start starts a pipeline.
func start(t *testing.T, svc *pipeline.Service, opts pipeline.StartOptions) *pipeline.State {
	t.Helper()
	st, _, err := svc.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestExportReadsBack: every file export writes is read back by the
// crucible codecs, with the content the pipeline holds.
func TestExportReadsBack(t *testing.T) {
	svc := openService(t)
	st := start(t, svc, pipeline.StartOptions{Goal: "Add x\nand y", Mode: "refactor", ID: "build-1"})
	task := 2
	seq, err := svc.StartDispatch(t.Context(), st.ID, pipeline.DispatchRequest{Role: "implementer", Phase: ledger.Execute, Task: &task,
		ModelTier: "sonnet", Prompt: []byte("do it\n---\nreally\n")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.FinishDispatch(t.Context(), st.ID, seq, pipeline.FinishRequest{Status: "failed", Summary: "red"}); err != nil {
		t.Fatal(err)
	}
	files, err := Export(t.Context(), svc, st.ID, "/scratch")
	if err != nil {
		t.Fatal(err)
	}

	lines, problems := ParseManifest(files["manifest.jsonl"])
	if len(problems) != 0 || len(lines) != 2 {
		t.Fatalf("manifest: %d lines, problems %v", len(lines), problems)
	}
	last := Latest(lines)
	if len(last) != 1 || last[0].Status != "failed" || *last[0].Summary != "red" || *last[0].Task != 2 || last[0].Phase != "3" {
		t.Fatalf("latest entry %+v", last[0])
	}
	df, err := ParseDispatchFile(files["1-implementer.md"])
	if err != nil || string(df.Prompt) != "do it\n---\nreally\n" || df.Task != "2" || df.DispatchDir != "/scratch" {
		t.Fatalf("dispatch file %+v, %v", df, err)
	}
	l, err := ledger.Parse(files["build-gate-ledger.md"])
	if err != nil || l.PipelineID != "build-1" || l.Goal != "Add x and y" || l.Mode != "refactor" {
		t.Fatalf("ledger %+v, %v", l, err)
	}
	status, err := ParseStatus(files["pipeline-status.md"])
	if err != nil || status.Compression.Goal != "Add x\nand y" || len(status.Tasks) != 1 || status.Elapsed == "" {
		t.Fatalf("status %+v, %v", status, err)
	}
	active, err := ParseActive(files[".pipeline-active"])
	if err != nil || active.PipelineID != "build-1" || active.ScratchDir != "/scratch" {
		t.Fatalf("active %+v, %v", active, err)
	}
}

// TestImportOfExportIsTheSamePipeline: a native pipeline exported and
// imported into another clone has the same manifest, ledger and handoffs,
// and exporting that gives the same files again.
func TestImportOfExportIsTheSamePipeline(t *testing.T) {
	a := openService(t)
	st := start(t, a, pipeline.StartOptions{Goal: "round trip", Mode: "feature", ID: "build-rt"})
	for _, d := range []pipeline.Draft{
		{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: 1}},
		{Type: pipeline.TypeVerdict, Data: pipeline.VerdictData{Phase: 1, Verdict: "PASS", PipelineID: "build-rt", Rounds: 2}},
		{Type: pipeline.LedgerType(ledger.PassGate), Data: pipeline.LedgerData{Phase: 1}},
	} {
		if _, _, err := a.Record(t.Context(), st.ID, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := a.WriteHandoff(t.Context(), st.ID, pipeline.HandoffData{From: 1, Constraints: []string{"no new deps"}}, RenderHandoff); err != nil {
		t.Fatal(err)
	}
	task := 1
	for i := 0; i < 3; i++ {
		seq, err := a.StartDispatch(t.Context(), st.ID, pipeline.DispatchRequest{Role: "planner", Phase: 2, Task: &task, Prompt: []byte(fmt.Sprint("prompt ", i))})
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := a.FinishDispatch(t.Context(), st.ID, seq, pipeline.FinishRequest{Status: "completed", Summary: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	files, err := Export(t.Context(), a, st.ID, dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantManifest, err := a.Manifest(t.Context(), st.ID)
	if err != nil {
		t.Fatal(err)
	}

	b := openService(t)
	r, err := Import(t.Context(), b, dir, "")
	if err != nil || !r.Created || r.Pipeline != "build-rt" || len(r.Problems) != 0 {
		t.Fatalf("import: %+v, %v", r, err)
	}
	got, err := b.Manifest(t.Context(), "build-rt")
	if err != nil {
		t.Fatal(err)
	}
	// As dispatch list --json shows them: the kept prompt is a whole
	// dispatch file once imported (PromptFile), its text is the same.
	if g, w := mustJSON(t, got), mustJSON(t, wantManifest); g != w {
		t.Fatalf("manifest after the round trip:\n%s\nwant:\n%s", g, w)
	}
	st2, _, err := b.Load(t.Context(), "build-rt")
	if err != nil {
		t.Fatal(err)
	}
	cur, _, err := a.Load(t.Context(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st2.Gates.Ledger, cur.Gates.Ledger) || st2.Gates.Ledger.Entry(1).Status != ledger.Pass {
		t.Fatalf("ledger %+v\nwant %+v", st2.Gates.Ledger, cur.Gates.Ledger)
	}
	if !reflect.DeepEqual(st2.View.Journal.Constraints, []string{"no new deps"}) || st2.Dispatch.Last != 3 || len(st2.Dispatch.InFlight) != 1 {
		t.Fatalf("journal %+v, dispatch %+v", st2.View.Journal, st2.Dispatch)
	}
	again, err := Export(t.Context(), b, "build-rt", dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		if !bytes.Equal(again[name], want) {
			t.Errorf("%s differs after import and export:\n%s\nwant:\n%s", name, again[name], want)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"b.md": []byte("b\n"), "a.md": []byte("a\n")}
	if names, err := WriteFiles(dir, files, false); err != nil || fmt.Sprint(names) != "[a.md b.md]" {
		t.Fatalf("%v, %v", names, err)
	}
	if _, err := WriteFiles(dir, files, false); err != nil {
		t.Fatalf("the same content again: %v", err)
	}
	changed := map[string][]byte{"a.md": []byte("A\n"), "c.md": []byte("c\n")}
	_, err := WriteFiles(dir, changed, false)
	var clash *ClashError
	if !errors.As(err, &clash) || fmt.Sprint(clash.Names) != "[a.md]" {
		t.Fatalf("clash: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "a\n" {
		t.Fatalf("a refused export wrote a.md: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.md")); !os.IsNotExist(err) {
		t.Fatalf("a refused export wrote c.md: %v", err)
	}
	if _, err := WriteFiles(dir, changed, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "A\n" {
		t.Fatalf("forced: %q", b)
	}
}

// TestExportStaysInItsDirectory: an imported manifest line whose file
// climbs out with "../" cannot enter a chain (so a fetched chain carrying
// one fails verification); and should a name like it reach export all the
// same, export refuses it and writes nothing, never a file outside the
// directory it was given.
func TestExportStaysInItsDirectory(t *testing.T) {
	svc := openService(t)
	st := start(t, svc, pipeline.StartOptions{Goal: "g", Mode: "feature", ID: "build-esc"})
	line := `{"seq":1,"file":"../escaped.md","role":"implementer","status":"dispatched"}`
	_, _, err := svc.Update(t.Context(), st.ID, func(*pipeline.State, string) (*pipeline.Change, error) {
		return &pipeline.Change{Files: map[string][]byte{"dispatch/0000/p.md": []byte("planted\n")},
			Drafts: []pipeline.Draft{{Type: pipeline.TypeImportDispatch, Data: pipeline.ImportDispatchData{Line: line, Prompt: "dispatch/0000/p.md"}}}}, nil
	})
	if err == nil || !strings.Contains(err.Error(), `imported manifest line 1 names a dispatch file "../escaped.md" that is not a plain file name`) {
		t.Fatalf("a chain took the line in: %v", err)
	}
	top := t.TempDir()
	out := filepath.Join(top, "out")
	files := map[string][]byte{"manifest.jsonl": []byte(line + "\n"), "../escaped.md": []byte("planted\n")}
	names, err := WriteFiles(out, files, true)
	if err == nil {
		t.Errorf("export wrote %v", names)
	}
	if _, err := os.Stat(filepath.Join(top, "escaped.md")); err == nil {
		t.Fatalf("export wrote %s, outside %s", filepath.Join(top, "escaped.md"), out)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a refused export wrote %d files", len(entries))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
