package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestSettings: the size cap and the excludes file are read as git types
// them (units, ~), with the default cap when unset, and a cap git cannot
// read is git's error, not a silent default.
func TestSettings(t *testing.T) {
	s, dir := openShadow(t)
	ctx := context.Background()
	if st, err := s.settings(ctx); err != nil || st != (settings{maxFileSize: DefaultMaxFileSize}) {
		t.Fatalf("unset: %+v, %v", st, err)
	}
	gittest.Git(t, dir, "config", "crucible.checkpoint.maxFileSize", "2M")
	gittest.Git(t, dir, "config", "core.excludesFile", "~/ignore")
	want := settings{maxFileSize: 2 << 20, excludesFile: filepath.Join(os.Getenv("HOME"), "ignore")}
	if st, err := s.settings(ctx); err != nil || st != want {
		t.Fatalf("set: %+v, %v; want %+v", st, err, want)
	}
	gittest.Git(t, dir, "config", "crucible.checkpoint.maxFileSize", "1.5m")
	if _, err := s.settings(ctx); err == nil || !strings.Contains(err.Error(), "fatal: bad numeric config value '1.5m' for 'crucible.checkpoint.maxfilesize'") {
		t.Fatalf("bad cap: %v", err)
	}
	if _, err := s.Create(ctx, "r", "test", ""); err == nil || !strings.Contains(err.Error(), "bad numeric config value") {
		t.Fatalf("create with a bad cap: %v", err)
	}
}
