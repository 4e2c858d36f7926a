package checkpoint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestSafetyCheckpointRecordsHeadNow: a work tree that matches the newest
// checkpoint but sits on another branch or commit gets a checkpoint of its
// own, so that the safety checkpoint of a restore names where HEAD is now
// (its undo restores on this branch, not on the one the older was taken on).
func TestSafetyCheckpointRecordsHeadNow(t *testing.T) {
	s, dir := openShadow(t)
	writeFile(t, filepath.Join(dir, "f.txt"), "one\n")
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	onMain := mustCreate(t, s, "on main")
	gittest.Git(t, dir, "switch", "-q", "-c", "feature")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	safety := mustCreate(t, s, "pre-restore-safety")
	if safety.Branch != "feature" || safety.Head != head || safety.ID == onMain.ID {
		t.Fatalf("safety checkpoint %s on branch %q at %s; HEAD is feature at %s (the older one: %s)",
			safety.ID[:12], safety.Branch, safety.Head, head, onMain.ID[:12])
	}
	if again := mustCreate(t, s, "again"); !again.Unchanged || again.ID != safety.ID {
		t.Fatalf("nothing changed, yet a new checkpoint %s", again.ID[:12])
	}
}
