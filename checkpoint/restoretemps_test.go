package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// TestClearRestoreTempsFollowsNoLink: a killed restore's temporary files
// are cleared where they were written; a directory on the way that has
// since become a symbolic link is not followed, so a file of that name
// elsewhere stays.
func TestClearRestoreTempsFollowsNoLink(t *testing.T) {
	s, dir := openShadow(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, ".f.crucible-restore"), "not ours\n")
	writeFile(t, filepath.Join(dir, "kept", ".g.crucible-restore"), "ours\n")
	if err := os.Symlink(outside, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	journal := "moved/.f.crucible-restore\x00kept/.g.crucible-restore\x00"
	if err := os.WriteFile(s.journalPath(), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.clearRestoreTemps(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, ".f.crucible-restore")); err != nil {
		t.Errorf("a file was removed through a symbolic link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "kept", ".g.crucible-restore")); !os.IsNotExist(err) {
		t.Errorf("the restore's own temporary file stays: %v", err)
	}
	if _, err := os.Lstat(s.journalPath()); !os.IsNotExist(err) {
		t.Errorf("the journal stays: %v", err)
	}
}
