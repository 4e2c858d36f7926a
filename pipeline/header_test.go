package pipeline

import (
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// TestHeaderIsTOML: the hand-written pipeline.toml reads back, field for
// field, through a real TOML parser, whatever the goal holds.
func TestHeaderIsTOML(t *testing.T) {
	for _, goal := range []string{"plain", "quotes \" and \\ backslashes", "lines\nand\ttabs\r", "control \x01\x1f\x7f", "unicode é 🙂 \u2028", ""} {
		h := Header{ID: "build-1", Goal: goal, Mode: "feature", Branch: "feature/x", Baseline: "abc", Created: "2026-11-22T10:00:00Z", Writer: "w-1"}
		var back Header
		if _, err := toml.Decode(string(h.Encode()), &back); err != nil {
			t.Fatalf("goal %q: %v\n%s", goal, err, h.Encode())
		}
		if back != h {
			t.Fatalf("goal %q: read back %+v", goal, back)
		}
	}
}

func FuzzHeaderIsTOML(f *testing.F) {
	f.Add("goal", "main")
	f.Add("a\"b\\c\n", "x/y")
	f.Fuzz(func(t *testing.T, goal, branch string) {
		if !utf8.ValidString(goal) || !utf8.ValidString(branch) {
			t.Skip() // start refuses such a goal; TOML and JSON strings hold only text
		}
		h := Header{ID: "p", Goal: goal, Mode: "feature", Branch: branch}
		var back Header
		if _, err := toml.Decode(string(h.Encode()), &back); err != nil {
			t.Fatalf("%v\n%s", err, h.Encode())
		}
		if back != h {
			t.Fatalf("read back %+v from %s", back, h.Encode())
		}
	})
}
