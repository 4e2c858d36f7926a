package enforce

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
)

// TestEngineMarker: a marker is read only while its engine runs (one an
// engine of an earlier boot left is stale), and admits the engine's own
// token alone, not its digest, another token, or none; a commit with the
// token is the engine's, stale marker or not.
func TestEngineMarker(t *testing.T) {
	token, other := strings.Repeat("1f", 32), strings.Repeat("2e", 32)
	digest := TokenDigest(token)
	stale := strings.Replace(gitext.Owner(), "boot "+gitext.BootID(), "boot an-earlier-one", 1)
	for _, c := range []struct {
		name   string
		owner  string // "" writes no marker
		live   bool
		admits map[string]bool
	}{
		{name: "none"},
		{name: "running", owner: gitext.Owner(), live: true,
			admits: map[string]bool{token: true, other: false, digest: false, "": false}},
		{name: "stale", owner: stale},
	} {
		dir := t.TempDir()
		if c.owner != "" {
			b, _ := json.Marshal(EngineMarker{Owner: c.owner, Command: "build", Pipeline: "p", Digest: digest})
			if err := os.MkdirAll(filepath.Join(dir, "crucible"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(EngineMarkerPath(dir), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m, err := ReadEngineMarker(dir)
		if err != nil || (m != nil) != c.live {
			t.Fatalf("%s: marker %+v, %v; want one: %v", c.name, m, err, c.live)
		}
		for tok, want := range c.admits {
			if got := m.Admits(tok); got != want {
				t.Errorf("%s: admits %q: %v, want %v", c.name, tok, got, want)
			}
		}
		// Its own commit is the engine's, even when it was killed meanwhile.
		t.Setenv(EnvEngineCommit, token)
		if got := EngineCommitting(dir); got != (c.owner != "") {
			t.Errorf("%s: its token's commit is the engine's: %v", c.name, got)
		}
		t.Setenv(EnvEngineCommit, other)
		if EngineCommitting(dir) {
			t.Errorf("%s: another token's commit is the engine's", c.name)
		}
		if m != nil && m.Name() != fmt.Sprintf("git crucible build (pid %d)", os.Getpid()) {
			t.Errorf("%s: named %q", c.name, m.Name())
		}
	}
}
