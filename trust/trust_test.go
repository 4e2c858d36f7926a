package trust

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/repotest"
)

// TestCheckRecordRevoke: never trusted, trusted, changed (naming the hash
// trusted before), trusted again, revoked.
func TestCheckRecordRevoke(t *testing.T) {
	r := repotest.Open(t)
	v1, v2 := []byte("[roles]\ndefault = \"a\"\n"), []byte("[roles]\ndefault = \"b\"\n")
	untrusted := func(content []byte) *Untrusted {
		t.Helper()
		var u *Untrusted
		if err := Check(r, ".crucible/agents.toml", content); !errors.As(err, &u) {
			t.Fatalf("Check = %v, want *Untrusted", err)
		}
		return u
	}
	if u := untrusted(v1); u.Recorded != "" || u.Hash != Hash(v1) {
		t.Errorf("never trusted: %+v", u)
	}
	e, err := Record(r, "./.crucible//agents.toml", v1)
	if err != nil || e.Path != ".crucible/agents.toml" || e.Hash != Hash(v1) || e.Time.Format("2006-01-02T15:04:05Z07:00") != "2026-11-22T10:00:00Z" {
		t.Fatalf("Record = %+v, %v", e, err)
	}
	if err := Check(r, ".crucible/agents.toml", v1); err != nil {
		t.Errorf("trusted content refused: %v", err)
	}
	u := untrusted(v2)
	if u.Recorded != Hash(v1) || u.Hash != Hash(v2) || strings.Contains(u.Error(), "default") {
		t.Errorf("changed: %+v %q", u, u.Error())
	}
	if _, err := Record(r, ".crucible/agents.toml", v2); err != nil {
		t.Fatal(err)
	}
	if err := Check(r, ".crucible/agents.toml", v2); err != nil {
		t.Errorf("re-trusted content refused: %v", err)
	}
	if list, _ := List(r); len(list) != 1 {
		t.Errorf("one path, one entry: %+v", list)
	}
	if found, err := Revoke(r, ".crucible/agents.toml"); !found || err != nil {
		t.Fatalf("Revoke = %v, %v", found, err)
	}
	if found, err := Revoke(r, ".crucible/agents.toml"); found || err != nil {
		t.Fatalf("second Revoke = %v, %v", found, err)
	}
	if u := untrusted(v2); u.Recorded != "" {
		t.Errorf("revoked: %+v", u)
	}
}

// TestWorktreesShare: a linked worktree sees the main one's trust.
func TestWorktreesShare(t *testing.T) {
	r := repotest.Open(t)
	if _, err := Record(r, "a.toml", []byte("x")); err != nil {
		t.Fatal(err)
	}
	wt := t.TempDir() + "/wt"
	gittest.Git(t, r.WorkTree, "worktree", "add", "-q", wt)
	t.Chdir(wt)
	linked, err := gitext.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(linked, "a.toml", []byte("x")); err != nil {
		t.Errorf("linked worktree: %v", err)
	}
}

// TestConcurrentRecords: trusting many files at once loses none.
func TestConcurrentRecords(t *testing.T) {
	r := repotest.Open(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if _, err := Record(r, "f"+string(rune('a'+i)), []byte{byte(i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if list, err := List(r); len(list) != 16 || err != nil {
		t.Errorf("List = %d entries, %v", len(list), err)
	}
}

// TestBadPathsAndFile: paths outside the work tree are refused; a damaged
// entries file fails closed, naming its line.
func TestBadPathsAndFile(t *testing.T) {
	r := repotest.Open(t)
	for _, p := range []string{"", ".", "..", "../x", "/etc/passwd", "a\nb"} {
		if _, err := Record(r, p, nil); err == nil {
			t.Errorf("Record(%q) accepted", p)
		}
	}
	if err := os.MkdirAll(r.CrucibleDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(File(r), []byte(header+"nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Check(r, "a", nil)
	if err == nil || !strings.HasSuffix(err.Error(), "trust: line 3: not \"<sha256> <time> <path>\"") {
		t.Errorf("Check = %v", err)
	}
}
