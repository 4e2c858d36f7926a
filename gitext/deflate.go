package gitext

import (
	"encoding/binary"
	"hash/adler32"
	"math/bits"
)

// A loose object is a zlib stream. compress/flate's writer costs about
// 1.2 MB to set up at any level, its hash chains in the struct: a build of
// a long plan writes a task file of its state past storedMax at one append
// in five, and those writers were most of what its peak memory grew by
// (issue 24). zlibFixed compresses with deflate's fixed Huffman codes and
// one hash table of 64 KB instead: such a file of 100 rows (14.7 KB) to
// 1.27x of level 1's size, in a tenth of the time of a new level 1 writer.

const (
	hashBits = 14
	minMatch = 4   // the bytes a hash covers
	maxMatch = 258 // deflate's longest
	window   = 1 << 15
	// fixedMax bounds what zlibFixed compresses: positions are uint32.
	fixedMax = 1 << 30
)

// The bases and extra bits of deflate's length codes (257-285) and
// distance codes (0-29), RFC 1951 3.2.5.
var (
	lengthBase  = [...]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [...]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [...]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [...]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// zlibHeader is the zlib header git writes: deflate, a 32 KB window.
var zlibHeader = [2]byte{0x78, 0x01}

// zlibStored returns in as a zlib stream of stored (not compressed)
// deflate blocks.
func zlibStored(in []byte) []byte {
	sum := adler32.Checksum(in)
	out := make([]byte, 0, storedLen(len(in)))
	out = append(out, zlibHeader[:]...)
	for first := true; first || len(in) > 0; first = false {
		n := min(len(in), 0xffff)
		final := byte(0)
		if n == len(in) {
			final = 1
		}
		out = append(out, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8)) // BFINAL, BTYPE 00; LEN, NLEN
		out = append(out, in[:n]...)
		in = in[n:]
	}
	return binary.BigEndian.AppendUint32(out, sum)
}

// storedLen is the length of zlibStored's stream of n bytes.
func storedLen(n int) int { return 2 + max(1, (n+0xfffe)/0xffff)*5 + n + 4 }

// zlibFixed returns in as a zlib stream: one deflate block of the fixed
// Huffman codes, each match the one place the last 4 bytes hashed to;
// zlibStored's when that is no shorter.
func zlibFixed(in []byte) []byte {
	if len(in) >= fixedMax {
		return zlibStored(in)
	}
	w := bitWriter{out: make([]byte, 0, len(in)/4+16)}
	w.out = append(w.out, zlibHeader[:]...)
	w.bits(1|1<<1, 3)                    // BFINAL, BTYPE 01: fixed Huffman codes
	table := make([]uint32, 1<<hashBits) // a place + 1; 0: none
	hash := func(i int) uint32 { return binary.LittleEndian.Uint32(in[i:]) * 0x1e35a7bd >> (32 - hashBits) }
	for i := 0; i < len(in); {
		if i+minMatch <= len(in) {
			h := hash(i)
			cand := int(table[h]) - 1
			table[h] = uint32(i + 1)
			if cand >= 0 && i-cand <= window && binary.LittleEndian.Uint32(in[cand:]) == binary.LittleEndian.Uint32(in[i:]) {
				n := minMatch
				for n < maxMatch && i+n < len(in) && in[cand+n] == in[i+n] {
					n++
				}
				w.match(n, i-cand)
				for j := i + 1; j < i+n && j+minMatch <= len(in); j++ { // later matches may start inside it
					table[hash(j)] = uint32(j + 1)
				}
				i += n
				continue
			}
		}
		w.symbol(int(in[i]))
		i++
	}
	w.symbol(256) // end of block
	w.flush()
	if len(w.out)+4 > storedLen(len(in)) {
		return zlibStored(in)
	}
	return binary.BigEndian.AppendUint32(w.out, adler32.Checksum(in))
}

// bitWriter writes deflate's bits: least significant first, Huffman
// codes most significant bit first.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

// bits writes the n low bits of v.
func (w *bitWriter) bits(v uint32, n uint) {
	w.acc |= uint64(v) << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
	}
}

// code writes Huffman code c of n bits.
func (w *bitWriter) code(c int, n uint) { w.bits(uint32(bits.Reverse16(uint16(c))>>(16-n)), n) }

// symbol writes literal/length symbol s in the fixed codes.
func (w *bitWriter) symbol(s int) {
	switch {
	case s < 144:
		w.code(0x30+s, 8)
	case s < 256:
		w.code(0x190+s-144, 9)
	case s < 280:
		w.code(s-256, 7)
	default:
		w.code(0xc0+s-280, 8)
	}
}

// match writes a match of length bytes (3-258), dist bytes back (1-32768).
func (w *bitWriter) match(length, dist int) {
	i := len(lengthBase) - 1
	for int(lengthBase[i]) > length {
		i--
	}
	w.symbol(257 + i)
	w.bits(uint32(length-int(lengthBase[i])), uint(lengthExtra[i]))
	j := len(distBase) - 1
	for int(distBase[j]) > dist {
		j--
	}
	w.code(j, 5)
	w.bits(uint32(dist-int(distBase[j])), uint(distExtra[j]))
}

// flush writes the last bits, padded to a byte.
func (w *bitWriter) flush() {
	if w.n > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.n = 0, 0
	}
}
