package gitext

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Packed objects are read in process from the repository's own packs, so
// that a hook whose tip a gc has packed still starts no git. Only what is
// needed is read — the idx's fan-out entry, a binary search of its names,
// the entry itself — never a whole file: packs reach gigabytes. What this
// reader does not handle (an idx other than version 2, a base in another
// pack, an alternate, an object too large) is ErrMissing, for the caller to
// ask git; damaged bytes are an error. Either way no object is returned
// whose content does not hash to its id: a pack is a file anyone who can
// write the git dir can forge.

const (
	// maxPacked is the largest object, or delta, an entry may claim: our
	// callers read commits and trees, and a larger one is git's to read.
	maxPacked = 256 << 20
	// maxDeltaDepth is git's own limit on pack-objects --depth.
	maxDeltaDepth = 4095
	// maxChainBytes bounds what one chain may inflate and rebuild in all, so
	// that a forged chain of large deltas cannot make a read endless.
	maxChainBytes = 1 << 30
)

// An idx of version 2 starts with its magic and version, then the fan-out
// table; constants, as the hook binary's packages allocate nothing at init.
const (
	idxMagic  = "\xfftOc\x00\x00\x00\x02"
	idxHeader = len(idxMagic) + 256*4
)

// notHere is a pack's answer for an object it does not hold, an error
// without allocation: a repository with many packs asks most in vain.
type notHere struct{}

func (notHere) Error() string { return "not in this pack" }
func (notHere) Unwrap() error { return ErrMissing }

// ReadStored reads object oid in process, loose or packed in the
// repository's object directory, and checks that its content hashes to oid.
// ErrMissing means it is not there or not stored in a way read here: git may
// still have it (an alternate, say), so ask an ObjectReader.
func (r *Repo) ReadStored(oid string) (kind string, data []byte, err error) {
	kind, data, err = r.ReadLoose(oid)
	if !errors.Is(err, ErrMissing) {
		return kind, data, err
	}
	dir := filepath.Join(r.ObjectDir(), "pack")
	d, err := fsutil.OpenNoPoll(dir)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", oid, ErrMissing)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", oid, ErrMissing)
	}
	raw, _ := hex.DecodeString(oid) // ReadLoose checked it
	var damaged error
	for _, name := range names {
		base, ok := strings.CutSuffix(name, ".idx")
		if !ok {
			continue
		}
		kind, data, err = r.readPack(filepath.Join(dir, base), oid, raw)
		if err == nil {
			return kind, data, nil
		}
		// The object may be whole in another pack, as git finds it there.
		if !errors.Is(err, ErrMissing) && damaged == nil {
			damaged = err
		}
	}
	if damaged != nil {
		return "", nil, damaged
	}
	return "", nil, fmt.Errorf("%s: %w", oid, ErrMissing)
}

// readPack reads oid from the pack whose files are base.idx and base.pack.
func (r *Repo) readPack(base, oid string, raw []byte) (string, []byte, error) {
	idx, err := fsutil.OpenNoPoll(base + ".idx") // a hook's hot path after a gc
	if err != nil {
		return "", nil, notHere{} // removed by a gc since
	}
	defer idx.Close()
	p := &pack{name: filepath.Base(base), idx: idx, hashLen: r.HashLen()}
	if err := p.readIndex(); err != nil {
		return "", nil, err
	}
	off, found, err := p.find(raw)
	if err != nil {
		return "", nil, err
	}
	if !found {
		return "", nil, notHere{}
	}
	data, err := fsutil.OpenNoPoll(base + ".pack")
	if err != nil {
		return "", nil, notHere{}
	}
	defer data.Close()
	p.data = data
	return r.packedObject(p, off, oid)
}

// packedObject reads oid, found in p at off, and checks it hashes to its name.
func (r *Repo) packedObject(p *pack, off int64, oid string) (string, []byte, error) {
	if err := p.readHeader(); err != nil {
		return "", nil, err
	}
	kind, data, err := p.object(off)
	if err != nil {
		return "", nil, err
	}
	if r.HashObject(kind, data) != oid {
		return "", nil, fmt.Errorf("packed object %s in %s does not match its name", oid, p.name)
	}
	return kind, data, nil
}

// pack is one pack and its version 2 index, read piecemeal.
type pack struct {
	name      string
	idx, data io.ReaderAt
	hashLen   int
	fanout    [256]uint32
}

func (p *pack) corrupt(what string) error {
	return fmt.Errorf("pack %s is corrupt: %s", p.name, what)
}

// readIndex reads the idx's header and fan-out table.
func (p *pack) readIndex() error {
	var b [8 + 256*4]byte
	if _, err := p.idx.ReadAt(b[:], 0); err != nil {
		return p.corrupt("short index")
	}
	if string(b[:8]) != idxMagic {
		return fmt.Errorf("pack %s: index version not read here: %w", p.name, ErrMissing)
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(b[8+4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return p.corrupt("fan-out table out of order")
		}
	}
	return nil
}

// readHeader checks the pack's header against its index.
func (p *pack) readHeader() error {
	var b [12]byte
	if _, err := p.data.ReadAt(b[:], 0); err != nil {
		return p.corrupt("short pack")
	}
	v := binary.BigEndian.Uint32(b[4:])
	if string(b[:4]) != "PACK" || v != 2 && v != 3 {
		return fmt.Errorf("pack %s: version not read here: %w", p.name, ErrMissing)
	}
	if binary.BigEndian.Uint32(b[8:]) != p.fanout[255] {
		return p.corrupt("object count differs from its index's")
	}
	return nil
}

// find returns the offset in the pack of the object whose raw id is raw,
// by a binary search of the index's names between its fan-out bounds.
func (p *pack) find(raw []byte) (int64, bool, error) {
	n := int64(p.fanout[255])
	lo, hi := int64(0), int64(p.fanout[raw[0]])
	if raw[0] > 0 {
		lo = int64(p.fanout[raw[0]-1])
	}
	var name [32]byte
	h := int64(p.hashLen)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(name[:h], int64(idxHeader)+mid*h); err != nil {
			return 0, false, p.corrupt("short index")
		}
		switch c := bytes.Compare(name[:h], raw); {
		case c < 0:
			lo = mid + 1
		case c > 0:
			hi = mid
		default:
			return p.offset(n, mid)
		}
	}
	return 0, false, nil
}

// offset reads the pack offset of the index's i-th object (of n): 31 bits,
// or with the high bit set, a place in the table of 64-bit offsets.
func (p *pack) offset(n, i int64) (int64, bool, error) {
	var b [8]byte
	table := int64(idxHeader) + n*int64(p.hashLen+4)
	if _, err := p.idx.ReadAt(b[:4], table+4*i); err != nil {
		return 0, false, p.corrupt("short index")
	}
	off := int64(binary.BigEndian.Uint32(b[:4]))
	if off&(1<<31) != 0 {
		if _, err := p.idx.ReadAt(b[:], table+4*n+8*(off&(1<<31-1))); err != nil {
			return 0, false, p.corrupt("short index")
		}
		u := binary.BigEndian.Uint64(b[:])
		if u > math.MaxInt64 {
			return 0, false, p.corrupt("offset out of range")
		}
		off = int64(u)
	}
	if off < 12 {
		return 0, false, p.corrupt("offset out of range")
	}
	return off, true, nil
}

// Pack entry types.
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

var kindNames = [...]string{objCommit: "commit", objTree: "tree", objBlob: "blob", objTag: "tag"}

// entry is a pack entry's header: its type, the size of its content (for a
// delta, the delta's), where its zlib stream starts, and a delta's base.
type entry struct {
	typ  byte
	size int64
	data int64
	base int64
}

// entryAt parses the header of the entry at off.
func (p *pack) entryAt(off int64) (entry, error) {
	var b [20 + 32]byte // the longest header: a size, then an offset or an id
	n, err := p.data.ReadAt(b[:], off)
	if n == 0 {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return entry{}, p.corrupt(fmt.Sprintf("entry at %d: %v", off, err))
	}
	bad := func() error { return p.corrupt(fmt.Sprintf("entry at %d", off)) }
	c := b[0]
	e := entry{typ: c >> 4 & 7, size: int64(c & 15)}
	i := 1
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i >= n || shift > 28 {
			return entry{}, bad()
		}
		c = b[i]
		i++
		e.size |= int64(c&0x7f) << shift
	}
	if e.size > maxPacked {
		return entry{}, fmt.Errorf("pack %s: entry at %d is too large to read here: %w", p.name, off, ErrMissing)
	}
	switch e.typ {
	case objCommit, objTree, objBlob, objTag:
	case objOfsDelta:
		// The base is that far before: big-endian 7-bit groups, each
		// group but the last counting from one (git's offset encoding).
		var rel int64
		for first := true; ; first = false {
			if i >= n || rel > math.MaxInt64>>8 {
				return entry{}, bad()
			}
			c = b[i]
			i++
			if !first {
				rel++
			}
			rel = rel<<7 | int64(c&0x7f)
			if c&0x80 == 0 {
				break
			}
		}
		if rel <= 0 || rel > off-12 {
			return entry{}, bad()
		}
		e.base = off - rel
	case objRefDelta:
		if i+p.hashLen > n {
			return entry{}, bad()
		}
		base, found, err := p.find(b[i : i+p.hashLen])
		if err != nil {
			return entry{}, err
		}
		if !found {
			return entry{}, fmt.Errorf("pack %s: the base of the entry at %d is not in it: %w", p.name, off, ErrMissing)
		}
		e.base = base
		i += p.hashLen
	default:
		return entry{}, bad()
	}
	e.data = off + int64(i)
	return e, nil
}

// object reads the entry at off, rebuilding it from its delta chain.
func (p *pack) object(off int64) (string, []byte, error) {
	var stack [16]entry
	deltas := stack[:0]
	e, err := p.entryAt(off)
	for err == nil && (e.typ == objOfsDelta || e.typ == objRefDelta) {
		if len(deltas) == maxDeltaDepth {
			return "", nil, fmt.Errorf("pack %s: delta chain at %d is too deep to read here: %w", p.name, off, ErrMissing)
		}
		deltas = append(deltas, e)
		e, err = p.entryAt(e.base)
	}
	if err != nil {
		return "", nil, err
	}
	data, err := p.inflate(e, nil)
	if err != nil {
		return "", nil, err
	}
	spent := e.size
	var delta []byte
	for i := len(deltas) - 1; i >= 0; i-- {
		if delta, err = p.inflate(deltas[i], delta); err != nil {
			return "", nil, err
		}
		if data, err = applyDelta(data, delta); err != nil {
			return "", nil, p.corrupt(fmt.Sprintf("delta at %d: %v", deltas[i].data, err))
		}
		if spent += deltas[i].size + int64(len(data)); spent > maxChainBytes {
			return "", nil, fmt.Errorf("pack %s: delta chain at %d is too large to read here: %w", p.name, off, ErrMissing)
		}
	}
	return kindNames[e.typ], data, nil
}

// packReaders are the buffers the zlib streams of entries are read through,
// recycled; ByteReaders, so that zlib adds no buffer of its own.
var packReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// inflate returns e's content, exactly e.size bytes ending its zlib stream,
// in buf when it is large enough.
func (p *pack) inflate(e entry, buf []byte) ([]byte, error) {
	br := packReaders.Get().(*bufio.Reader)
	defer packReaders.Put(br)
	br.Reset(io.NewSectionReader(p.data, e.data, math.MaxInt64-e.data))
	zr, _ := zlibReaders.Get().(io.ReadCloser)
	var err error
	if zr == nil {
		zr, err = zlib.NewReader(br)
	} else {
		err = zr.(zlib.Resetter).Reset(br, nil)
	}
	if err != nil {
		return nil, p.corrupt(fmt.Sprintf("entry data at %d: %v", e.data, err))
	}
	defer zlibReaders.Put(zr)
	// The buffer grows with what the stream gives, not with what the header
	// claims: a few forged bytes must not cost a large allocation.
	buf = buf[:0]
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(e.size, 64<<10))
	}
	for int64(len(buf)) < e.size {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := zr.Read(buf[len(buf):min(int64(cap(buf)), e.size)])
		buf = buf[:len(buf)+n]
		if err == io.EOF && int64(len(buf)) < e.size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return nil, p.corrupt(fmt.Sprintf("entry data at %d: %v", e.data, err))
		}
	}
	// The stream must end there; reading its end checks its checksum.
	var one [1]byte
	if _, err := io.ReadFull(zr, one[:]); err != io.EOF {
		return nil, p.corrupt(fmt.Sprintf("entry data at %d: longer than its size", e.data))
	}
	return buf, nil
}

// applyDelta rebuilds an object from its base and a delta: the two sizes,
// then instructions that copy a range of the base or insert bytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	src, delta, ok1 := deltaSize(delta)
	dst, delta, ok2 := deltaSize(delta)
	if !ok1 || !ok2 || src != uint64(len(base)) || dst > maxPacked {
		return nil, errors.New("bad sizes")
	}
	out := make([]byte, 0, dst)
	for len(delta) > 0 {
		c := delta[0]
		delta = delta[1:]
		switch {
		case c&0x80 != 0: // copy: the bits say which bytes of offset and size follow
			var off, n uint64
			for bit := range 7 {
				if c&(1<<bit) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errors.New("truncated copy")
				}
				if bit < 4 {
					off |= uint64(delta[0]) << (8 * bit)
				} else {
					n |= uint64(delta[0]) << (8 * (bit - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > dst {
				return nil, errors.New("copy out of range")
			}
			out = append(out, base[off:off+n]...)
		case c != 0: // insert the next c bytes
			if int(c) > len(delta) || uint64(len(out))+uint64(c) > dst {
				return nil, errors.New("insert out of range")
			}
			out = append(out, delta[:c]...)
			delta = delta[c:]
		default:
			return nil, errors.New("reserved instruction")
		}
	}
	if uint64(len(out)) != dst {
		return nil, errors.New("short result")
	}
	return out, nil
}

// deltaSize reads a delta's size: little-endian 7-bit groups.
func deltaSize(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i, shift := 0, 0; i < len(b) && shift <= 35; i, shift = i+1, shift+7 {
		v |= uint64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}
