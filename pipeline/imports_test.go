package pipeline

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoFileCodecs keeps the event schema apart from the crucible file
// codecs: a format change in interop must never change how a stored chain
// replays.
func TestNoFileCodecs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "/interop") {
			t.Fatalf("pipeline depends on %s", dep)
		}
	}
}
