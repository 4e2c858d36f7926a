package remote

import (
	"strings"
	"testing"
	"time"
)

func TestParsePorcelain(t *testing.T) {
	out := "To ../server.git\n*\trefs/crucible/pipelines/p1:refs/crucible/pipelines/p1\t[new reference]\n" +
		"=\trefs/notes/crucible/provenance:refs/notes/crucible/provenance\t[up to date]\n" +
		"!\trefs/crucible/pipelines/p2:refs/crucible/pipelines/p2\t[rejected] (fetch first)\nDone\n"
	got, err := parsePorcelain([]byte(out))
	if err != nil || len(got) != 3 {
		t.Fatalf("%+v %v", got, err)
	}
	if got[0] != (porcelainLine{'*', "refs/crucible/pipelines/p1", "[new reference]"}) ||
		got[1].flag != '=' || got[2] != (porcelainLine{'!', "refs/crucible/pipelines/p2", "[rejected] (fetch first)"}) {
		t.Fatalf("%+v", got)
	}
	if _, err := parsePorcelain([]byte("nonsense line\n")); err == nil {
		t.Fatal("a line git does not write was accepted")
	}
}

func TestCheckName(t *testing.T) {
	for _, good := range []string{"origin", "upstream", "team/one", "a-b.c", "notes", "pipelines/a", "a/notes-b"} {
		if err := CheckName(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"", "-x", "a b", "a..b", "a:b", "a/", "a//b", "a*", "a/notes", "a/pipelines", "a/b/notes/c", "/tmp/server.git", "../server.git", "https://host/r.git"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParsePorcelain: git push output of any shape parses or is refused,
// never panics, and every line it returns names a ref.
func FuzzParsePorcelain(f *testing.F) {
	f.Add("To x\n*\ta:b\t[new reference]\nDone\n")
	f.Add("!\ta:b\n")
	f.Add("\t:\t\n")
	f.Fuzz(func(t *testing.T, out string) {
		lines, err := parsePorcelain([]byte(out))
		if err != nil {
			return
		}
		for _, l := range lines {
			if strings.Contains(l.ref, "\n") {
				t.Fatalf("ref %q from %q", l.ref, out)
			}
		}
	})
}

func TestDefaultName(t *testing.T) {
	for upstream, want := range map[string]string{"": "origin", ".": "origin", "upstream": "upstream", "origin": "origin"} {
		if got := defaultName(upstream); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", upstream, got, want)
		}
	}
}

func TestBackOffCeiling(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 20 * time.Millisecond},
		{2, 40 * time.Millisecond},
		{6, 640 * time.Millisecond},
		{7, 1280 * time.Millisecond},
		{8, maxBackOff},
		{60, maxBackOff},
	} {
		if got := backOffCeiling(tc.attempt); got != tc.want {
			t.Errorf("backOffCeiling(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
}
