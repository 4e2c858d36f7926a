package refs

import (
	"bytes"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
)

func TestCacheRoundTrip(t *testing.T) {
	h := &Head{ID: "p1", Commit: "c0ffee", Tree: []gitext.TreeEntry{{Mode: "100644", OID: "abc", Name: "state.json"}}, State: []byte("{\"a\":\n1}\n")}
	got := decodeCache(encodeCache(new(bytes.Buffer), h))
	if got == nil || got.ID != h.ID || got.Commit != h.Commit || len(got.Tree) != 1 || got.Tree[0] != h.Tree[0] || !bytes.Equal(got.State, h.State) {
		t.Fatalf("round trip gave %+v", got)
	}
	for _, bad := range []string{"", "git-crucible cache 1\n", "git-crucible cache 2\np\nc\nstate 0\n", "git-crucible cache 1\np\nc\nstate 5\nabc", "git-crucible cache 1\np\nc\n100644 x\nstate 0\n"} {
		if decodeCache([]byte(bad)) != nil {
			t.Errorf("decodeCache(%q) accepted it", bad)
		}
	}
}

// FuzzDecodeCache: the cache is a file anyone can damage; decoding never
// panics, and what it accepts it re-encodes to the same bytes.
func FuzzDecodeCache(f *testing.F) {
	f.Add(encodeCache(new(bytes.Buffer), &Head{ID: "p", Commit: "c", Tree: []gitext.TreeEntry{{Mode: "100644", OID: "o", Name: "n"}}, State: []byte("{}\n")}))
	f.Add([]byte("git-crucible cache 1\np\nc\nstate 3\n{}\n"))
	f.Add([]byte("git-crucible cache 1\n\n\nstate -1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := decodeCache(append([]byte(nil), b...))
		if h != nil && !bytes.Equal(encodeCache(new(bytes.Buffer), h), b) {
			t.Fatalf("accepted %q but re-encodes as %q", b, encodeCache(new(bytes.Buffer), h))
		}
	})
}
