package cliexit

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/git-crucible/git-crucible/internal/outcome"
)

// TestPrinter: each kind of line in git's words, one line a call, and a
// refusal of several problems as one "error: " line each, with its hints.
func TestPrinter(t *testing.T) {
	for _, c := range []struct {
		print func(w io.Writer)
		want  string
	}{
		{func(w io.Writer) { Hint(w, "go on with: %s", "git crucible build --resume") }, "hint: go on with: git crucible build --resume\n"},
		{func(w io.Writer) { Warn(w, "%d%% left", 5) }, "warning: 5% left\n"},
		{func(w io.Writer) { Error(w, "task %s failed", "t1") }, "error: task t1 failed\n"},
		{func(w io.Writer) { Hints(w, []string{"a", "b"}) }, "hint: a\nhint: b\n"},
		{func(w io.Writer) { Hints(w, nil) }, ""},
		{func(w io.Writer) {
			Report(w, outcome.WithHints(&outcome.Refused{Err: errors.New(JoinErrors("a:1: x", "b:2: y"))}, "fix them"))
		}, "error: a:1: x\nerror: b:2: y\nhint: fix them\n"},
	} {
		var b bytes.Buffer
		c.print(&b)
		if b.String() != c.want {
			t.Errorf("%q, want %q", b.String(), c.want)
		}
	}
	if got := WarnLine("w") + "|" + HintLine("h") + "|" + ErrorLine("e"); got != "warning: w|hint: h|error: e" {
		t.Errorf("lines: %q", got)
	}
}
