package gitext

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzPacked: any index and pack bytes are read without a panic, and every
// object read from them hashes to the name the index gives it.
func FuzzPacked(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzPacked, packs git wrote with chains of
	// offset and reference deltas, and with 64-bit offsets, in both formats.
	f.Fuzz(func(t *testing.T, idx, data []byte, sha256 bool) {
		r := &Repo{Format: "sha1"}
		if sha256 {
			r.Format = "sha256"
		}
		p := &pack{name: "fuzz", idx: bytes.NewReader(idx), data: bytes.NewReader(data), hashLen: r.HashLen()}
		if p.readIndex() != nil {
			return
		}
		raw := make([]byte, r.HashLen())
		for i := range min(int(p.fanout[255]), 32) {
			if _, err := p.idx.ReadAt(raw, int64(idxHeader+i*len(raw))); err != nil {
				return
			}
			off, found, err := p.find(raw)
			if err != nil || !found {
				continue
			}
			oid := hex.EncodeToString(raw)
			if kind, obj, err := r.packedObject(p, off, oid); err == nil && r.HashObject(kind, obj) != oid {
				t.Fatalf("%s read as a %s that does not hash to it", oid, kind)
			}
		}
	})
}
