package enforce

import (
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/notes"
)

// FuzzAuditInput: a commit object and a provenance note of any shape, as a
// push or a fetch delivers them, decode without panicking, and what the
// audit takes from them is consistent: a subject of one line, Crucible-*
// trailers of one line each with trimmed values, every pipeline named
// once, each from a trailer or a record.
func FuzzAuditInput(f *testing.F) {
	tree := "tree " + strings.Repeat("1", 40) + "\n"
	who := "author A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n"
	f.Add([]byte(tree+who+"\nsubject\n\nbody\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"),
		[]byte(`{"pipeline":"p1","phase":3,"ledger_head":"0123"}`+"\n"))
	f.Add([]byte(tree+"parent "+strings.Repeat("2", 40)+"\n"+who+"gpgsig -----BEGIN PGP SIGNATURE-----\n x\n -----END PGP SIGNATURE-----\n\nmsg\n\ncrucible-pipeline:  p2 \nCRUCIBLE-PIPELINE: p2\n"),
		[]byte("{\"pipeline\":\"p3\",\"phase\":1}\r\nnot json\n"))
	f.Add([]byte(tree+who+"\nCrucible-Pipeline: ../../etc\n"), []byte(`{"pipeline":"a b","phase":9}`))
	f.Add([]byte("no headers at all"), []byte{})
	f.Add([]byte(tree+who+"\n"), []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, commit, note []byte) {
		c, err := decodeCommit("c0ffee", commit, note)
		if err != nil {
			return
		}
		if strings.Contains(c.subject, "\n") {
			t.Fatalf("subject of several lines: %q", c.subject)
		}
		for _, tr := range c.trailers {
			if !strings.HasPrefix(strings.ToLower(tr.Key), "crucible-") || strings.ContainsAny(tr.Key+tr.Value, "\n") ||
				tr.Value != strings.TrimSpace(tr.Value) {
				t.Fatalf("trailer %+v", tr)
			}
		}
		ids, trailerIDs, records, _ := c.named()
		for i, id := range ids {
			if slices.Contains(ids[:i], id) {
				t.Fatalf("pipeline %q named twice in %q", id, ids)
			}
			fromRecord := slices.ContainsFunc(records, func(r notes.Provenance) bool { return r.Pipeline == id })
			if !slices.Contains(trailerIDs, id) && !fromRecord {
				t.Fatalf("pipeline %q named by neither a trailer nor a record", id)
			}
		}
		for _, id := range trailerIDs {
			if !slices.Contains(ids, id) {
				t.Fatalf("trailer pipeline %q missing from %q", id, ids)
			}
		}
	})
}
