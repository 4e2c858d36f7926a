package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNewest: the newest result of each tree asked for, across every
// gate's index file; a line of another spec than its file's, a torn line
// and trees not asked for are skipped.
func TestNewest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := strings.Repeat("a", 32), strings.Repeat("b", 32)
	tree := func(c string) string { return strings.Repeat(c, 40) }
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	line := func(tr, spec string, exit int, s int64) string {
		return tr + " " + Result{Spec: spec, Status: StatusOf(exit), Exit: exit, Time: at(s)}.Line() + "\n"
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, line(tree("1"), a, 0, 100)+line(tree("2"), a, 1, 100)+line(tree("3"), b, 0, 500)+line(tree("4"), a, 0, 100)+tree("4")+" gate1 "+a+" fa")
	write(b, line(tree("1"), b, 1, 50)+line(tree("2"), b, 0, 200)+line(tree("5"), b, 0, 100))
	got, err := Newest(dir, []string{tree("1"), tree("2"), tree("3"), tree("4")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{tree("1"): Pass, tree("2"): Pass, tree("4"): Pass}
	if len(got) != len(want) {
		t.Errorf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for tr, st := range want {
		if got[tr].Status != st {
			t.Errorf("%s: %+v, want %s", tr[:1], got[tr], st)
		}
	}
	if none, err := Newest(filepath.Join(dir, "missing"), []string{tree("1")}); err != nil || len(none) != 0 {
		t.Errorf("no index: %v, %v", none, err)
	}
}
