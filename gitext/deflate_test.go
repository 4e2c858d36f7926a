package gitext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// inflate reads zlib stream z back, as git would.
func inflate(t testing.TB, z []byte) []byte {
	t.Helper()
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rows is JSON like a task file of the state: n rows of a few fields.
func rows(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n \"tasks\": [\n")
	for i := range n {
		fmt.Fprintf(&b, "  {\n   \"task\": %d,\n   \"title\": \"task %d\",\n   \"role\": \"reviewer\",\n   \"status\": \"completed\",\n   \"seq\": %d,\n   \"started\": \"2026-11-28T18:%02d:%02dZ\"\n  },\n", i, i, 2*i+7, i/60%60, i%60)
	}
	b.WriteString(" ]\n}\n")
	return b.Bytes()
}

// randomBytes is n bytes no compressor shortens, the same every run.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestZlibFixed: what zlibFixed and zlibStored write reads back the same;
// repetitive data is compressed, incompressible data stored.
func TestZlibFixed(t *testing.T) {
	random := randomBytes(150_000)
	long := bytes.Repeat([]byte("abc"), 40_000) // matches of 258 bytes, distance 3
	far := append(append(bytes.Clone(random[:window]), random[:window]...), random[:300]...)
	for _, c := range []struct {
		name string
		in   []byte
		most int // the longest zlibFixed may write
	}{
		{"empty", nil, storedLen(0)},
		{"a byte", []byte{0xff}, storedLen(1)},
		{"short", []byte("abcd"), storedLen(4)},
		{"task file", rows(100), len(rows(100)) / 4},
		{"repeated", long, len(long) / 50},
		{"random", random, storedLen(len(random))},
		{"a match a window back", far, storedLen(len(far))},
		{"every byte", bytes.Repeat(func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(), 3), 3 * 256},
	} {
		t.Run(c.name, func(t *testing.T) {
			z := zlibFixed(c.in)
			if got := inflate(t, z); !bytes.Equal(got, c.in) {
				t.Errorf("zlibFixed read back %d bytes, want the %d written", len(got), len(c.in))
			}
			if len(z) > c.most {
				t.Errorf("zlibFixed wrote %d bytes of %d, want at most %d", len(z), len(c.in), c.most)
			}
			s := zlibStored(c.in)
			if got := inflate(t, s); !bytes.Equal(got, c.in) || len(s) != storedLen(len(c.in)) {
				t.Errorf("zlibStored read back %d bytes of %d, in %d (want %d)", len(got), len(c.in), len(s), storedLen(len(c.in)))
			}
		})
	}
}

func FuzzZlibFixed(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("blob 5\x00hello"))
	f.Add(rows(3))
	f.Add(bytes.Repeat([]byte{0, 1, 2, 3, 0, 1, 2}, 100))
	f.Fuzz(func(t *testing.T, in []byte) {
		if got := inflate(t, zlibFixed(in)); !bytes.Equal(got, in) {
			t.Fatalf("zlibFixed read back %q, want %q", got, in)
		}
		if got := inflate(t, zlibStored(in)); !bytes.Equal(got, in) {
			t.Fatalf("zlibStored read back %q, want %q", got, in)
		}
	})
}
