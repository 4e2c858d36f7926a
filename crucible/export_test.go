package crucible

import (
	"context"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestExportReadsBack: every file export writes is read back by the
// crucible codecs, with the content the pipeline holds.
func TestExportReadsBack(t *testing.T) {
	t.Chdir(gittest.Init(t))
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	svc := pipeline.Open(context.Background(), repo)
	defer svc.Close()
	st, _, err := svc.Start(pipeline.StartOptions{Goal: "Add x\nand y", Mode: "refactor", ID: "build-1"})
	if err != nil {
		t.Fatal(err)
	}
	task := 2
	seq, err := svc.StartDispatch(st.ID, pipeline.DispatchRequest{Role: "implementer", Phase: ledger.Execute, Task: &task,
		ModelTier: "sonnet", Prompt: []byte("do it\n---\nreally\n")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.FinishDispatch(st.ID, seq, pipeline.FinishRequest{Status: "failed", Summary: "red"}); err != nil {
		t.Fatal(err)
	}
	files, err := Export(svc, st.ID, "/scratch", "2026-11-22T11:00:00Z")
	if err != nil {
		t.Fatal(err)
	}

	lines, problems := interop.ParseManifest(files["manifest.jsonl"])
	if len(problems) != 0 || len(lines) != 2 {
		t.Fatalf("manifest: %d lines, problems %v", len(lines), problems)
	}
	last := interop.Latest(lines)
	if len(last) != 1 || last[0].Status != "failed" || *last[0].Summary != "red" || *last[0].Task != 2 || last[0].Phase != "3" {
		t.Fatalf("latest entry %+v", last[0])
	}
	df, err := interop.ParseDispatchFile(files["1-implementer.md"])
	if err != nil || string(df.Prompt) != "do it\n---\nreally\n" || df.Task != "2" || df.DispatchDir != "/scratch" {
		t.Fatalf("dispatch file %+v, %v", df, err)
	}
	l, err := ledger.Parse(files["build-gate-ledger.md"])
	if err != nil || l.PipelineID != "build-1" || l.Goal != "Add x and y" || l.Mode != "refactor" {
		t.Fatalf("ledger %+v, %v", l, err)
	}
	status, err := interop.ParseStatus(files["pipeline-status.md"])
	if err != nil || status.Compression.Goal != "Add x\nand y" || len(status.Tasks) != 1 || status.Elapsed == "" {
		t.Fatalf("status %+v, %v", status, err)
	}
	active, err := interop.ParseActive(files[".pipeline-active"])
	if err != nil || active.PipelineID != "build-1" || active.ScratchDir != "/scratch" {
		t.Fatalf("active %+v, %v", active, err)
	}
}
