package interop

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-crucible/git-crucible/pipeline"
)

var update = flag.Bool("update", false, "rewrite testdata/docs.golden")

// TestDocsGolden renders the status document and a handoff for the state and
// events pinned by pipeline's TestEventsGolden, and compares them with the
// bytes these documents had when pipeline rendered them.
func TestDocsGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "pipeline", "testdata", "events.golden"))
	if err != nil {
		t.Fatal(err)
	}
	events, rest, _ := bytes.Cut(b, []byte("-- state.json --\n"))
	state, _, _ := bytes.Cut(rest, []byte("-- state.json (format 2) --\n")) // format 1: all in one file
	st, err := pipeline.DecodeState(state)
	if err != nil {
		t.Fatal(err)
	}
	list, err := pipeline.DecodeEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	var hd pipeline.HandoffData
	if err := pipeline.DecodeData(list[3], &hd); err != nil || list[3].Type != pipeline.TypeHandoff {
		t.Fatalf("%s: %v", list[3].Type, err)
	}
	got := append(StatusOf(st, "2026-11-22T12:34:56Z").Render(), RenderHandoff(hd, st, "2026-11-22T10:00:00Z")...)
	golden := filepath.Join("testdata", "docs.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("documents changed:\n--- got\n%s\n--- want\n%s", got, want)
	}
}
