package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/pipeline"
)

// Titles longer than the column widen it, up to a limit past which they
// are cut: the tier, status and duration columns stay aligned.
func TestWriteTasksAligned(t *testing.T) {
	at := "2026-11-22T10:00:00Z"
	row := func(n int, title string) pipeline.TaskProgress {
		return pipeline.TaskProgress{Task: n, Title: title, Role: "implementer", Tier: "opus", Status: "completed",
			Started: at, Finished: "2026-11-22T10:05:00Z"}
	}
	var b bytes.Buffer
	writeTasks(&b, []pipeline.TaskProgress{
		row(1, "short"),
		row(2, "status --json prints the state"),
		row(3, "a title far longer than any column should be allowed to grow to"),
		{Task: 4, Role: "implementer", Status: "dispatched", Started: at},
	}, "2026-11-22T10:01:00Z")
	want := strings.Join([]string{
		"",
		"Tasks:",
		"    1 short                                    opus     completed   5m",
		"    2 status --json prints the state           opus     completed   5m",
		"    3 a title far longer than any column shou… opus     completed   5m",
		"    4 implementer                                       dispatched  1m",
		"",
	}, "\n")
	if got := b.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
