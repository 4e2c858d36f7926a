package checkpoint

import "testing"

// FuzzDecodeRecords: the records file is a file anyone can damage;
// decoding never panics, and what it accepts survives being written back
// (as saveRecords writes it) and read again.
func FuzzDecodeRecords(f *testing.F) {
	c := Checkpoint{Reason: "pre-wave-1", Source: "build", Branch: "main", Head: "abc", Time: "2026-11-22T10:00:00Z", Seq: 3}
	f.Add(encodeRecords([]record{{id: "a1", tree: "t1", message: c.message()}, {id: "b2", tree: "t2", message: ""}}))
	f.Add([]byte(recordsMagic + "a t 0\n"))
	f.Add([]byte(recordsMagic + "a t 5\nab"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs := decodeRecords(b)
		if recs == nil {
			return
		}
		list := make([]record, 0, len(recs))
		for _, r := range recs {
			list = append(list, r)
		}
		sortRecords(list)
		again := decodeRecords(encodeRecords(list))
		if len(again) != len(recs) {
			t.Fatalf("%q: %d records, %d after writing back", b, len(recs), len(again))
		}
		for id, r := range recs {
			if again[id] != r {
				t.Fatalf("%q: record %q became %+v", b, id, again[id])
			}
		}
	})
}

func TestRecordsRoundTrip(t *testing.T) {
	c := Checkpoint{ID: "a1", Tree: "t1", Reason: "r: with colon", Source: "s", Branch: "main", Head: "h",
		Time: "2026-11-22T10:00:00Z", Seq: 7, Pipeline: "build-20261122-100000-abcdef"}
	recs := decodeRecords(encodeRecords([]record{{id: c.ID, tree: c.Tree, message: c.message()}}))
	if got := parse(recs["a1"]); got != c {
		t.Fatalf("round trip gave %+v", got)
	}
	for _, bad := range []string{"", "git-crucible checkpoints 2\n", recordsMagic + "a t 01\nx", recordsMagic + "a t -1\n",
		recordsMagic + "a t 3\nab", recordsMagic + "a  3\nabc", recordsMagic + "a t 0\na t 0\n"} {
		if decodeRecords([]byte(bad)) != nil {
			t.Errorf("decodeRecords(%q) accepted it", bad)
		}
	}
}
