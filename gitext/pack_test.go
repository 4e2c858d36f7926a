package gitext

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// packedRepo makes a repository in format with a history whose files change
// a little at each commit, so that a repack deltifies them in chains, and
// returns it with its path.
func packedRepo(t testing.TB, format string) (*Repo, string) {
	t.Helper()
	gittest.Hermetic(t)
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main", "--object-format="+format)
	// Each commit changes one line of the last version, so that the best
	// base of a version is the one before: chains as deep as git allows.
	big := make([]string, 1500)
	for i := range big {
		big[i] = fmt.Sprintf("line %d of a file large enough for copies of 64 KiB and more\n", i)
	}
	for i := range 30 {
		big[i*997%len(big)] = fmt.Sprintf("line changed by commit %d\n", i)
		files := map[string]string{
			"big.txt":       strings.Join(big, ""),
			"notes.md":      strings.Join(big[:i*7+1], ""),
			"dir/state.txt": fmt.Sprintf("state %d\n%s", i, strings.Repeat("x", 500)),
		}
		for name, content := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gittest.Git(t, dir, "add", ".")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprintf("commit %d", i))
	}
	gittest.Git(t, dir, "tag", "-a", "-m", "a tag", "v1")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "after the tag")
	git := filepath.Join(dir, ".git")
	return &Repo{GitDir: git, CommonDir: git, WorkTree: dir, Format: format}, dir
}

// allObjects returns every object git knows in dir, with its type and
// content as git cat-file --batch gives them.
func allObjects(t testing.TB, r *Repo, dir string) map[string]stored {
	t.Helper()
	ids := strings.Fields(gittest.Git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	or, err := r.NewObjectReader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer or.Close()
	out := map[string]stored{}
	for _, id := range ids {
		kind, data, err := or.Read(id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = stored{kind, data}
	}
	return out
}

type stored struct {
	kind string
	data []byte
}

// packEntryTypes counts the entries of the repository's packs by type, and
// the deepest delta chain, as this reader walks them.
func packEntryTypes(t *testing.T, r *Repo, want map[string]stored) (types map[byte]int, depth int) {
	t.Helper()
	types = map[byte]int{}
	idxs, _ := filepath.Glob(filepath.Join(r.ObjectDir(), "pack", "*.idx"))
	for _, idx := range idxs {
		p := openTestPack(t, r, strings.TrimSuffix(idx, ".idx"))
		for id := range want {
			raw, _ := hex.DecodeString(id)
			off, found, err := p.find(raw)
			if err != nil || !found {
				continue
			}
			e, err := p.entryAt(off)
			if err != nil {
				t.Fatal(err)
			}
			types[e.typ]++
			d := 0
			for ; e.typ >= objOfsDelta; d++ {
				if e, err = p.entryAt(e.base); err != nil {
					t.Fatal(err)
				}
			}
			depth = max(depth, d)
		}
	}
	return types, depth
}

// reindex rewrites the index of the repository's one pack with git
// index-pack --index-version=version, and returns its path.
func reindex(t testing.TB, r *Repo, dir, version string) string {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(r.ObjectDir(), "pack", "*.pack"))
	idx := strings.TrimSuffix(packs[0], ".pack") + ".idx"
	os.Chmod(idx, 0o644)
	gittest.Git(t, dir, "index-pack", "--index-version="+version, "-o", idx+".new", packs[0])
	if err := os.Rename(idx+".new", idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

// openTestPack reads base.idx and base.pack whole, for tests that poke at them.
func openTestPack(t testing.TB, r *Repo, base string) *pack {
	t.Helper()
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(base + ".pack")
	if err != nil {
		t.Fatal(err)
	}
	p := &pack{name: filepath.Base(base), idx: bytes.NewReader(idx), data: bytes.NewReader(data), hashLen: r.HashLen()}
	if err := p.readIndex(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadStoredMatchesGit: every object of a repository repacked with deep
// delta chains — offset deltas, then reference deltas, in SHA-1 and SHA-256,
// one pack or several — reads in process as git cat-file reads it.
func TestReadStoredMatchesGit(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		for _, c := range []struct {
			name    string
			repack  []string
			entries byte // the delta type the packs must hold
		}{
			{"offset deltas", []string{"repack", "-adf", "--depth=50", "--window=250"}, objOfsDelta},
			{"reference deltas", []string{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adf", "--depth=50", "--window=250"}, objRefDelta},
			{"64-bit offsets", []string{"repack", "-adf", "--depth=50", "--window=250"}, objOfsDelta},
			{"several packs", nil, objOfsDelta},
		} {
			t.Run(format+"/"+c.name, func(t *testing.T) {
				r, dir := packedRepo(t, format)
				if c.repack != nil {
					gittest.Git(t, dir, c.repack...)
				} else {
					gittest.Git(t, dir, "repack", "-adf")
					gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "in a second pack")
					gittest.Git(t, dir, "repack", "-d")
				}
				if c.name == "64-bit offsets" {
					// index-pack puts every offset past 0x40 in the 64-bit table.
					b, _ := os.ReadFile(reindex(t, r, dir, "2,0x40"))
					n := int(binary.BigEndian.Uint32(b[idxHeader-4:]))
					table := b[idxHeader+n*(r.HashLen()+4):]
					if large := binary.BigEndian.Uint32(table[4*(n-1):]); large&(1<<31) == 0 {
						t.Fatalf("the index's last offset %#x is not in the 64-bit table", large)
					}
				}
				if n := gittest.LooseObjects(t, dir); n != 0 {
					t.Fatalf("%d loose objects after the repack", n)
				}
				want := allObjects(t, r, dir)
				types, depth := packEntryTypes(t, r, want)
				t.Logf("entries by type %v, chains up to %d deep", types, depth)
				if types[c.entries] == 0 || depth < 5 {
					t.Fatalf("the packs hold %v, chains %d deep: not the deltas this test is about", types, depth)
				}
				packs, _ := filepath.Glob(filepath.Join(r.ObjectDir(), "pack", "*.idx"))
				if c.repack == nil && len(packs) != 2 {
					t.Fatalf("%d packs", len(packs))
				}
				for id, w := range want {
					kind, data, err := r.ReadStored(id)
					if err != nil || kind != w.kind || !bytes.Equal(data, w.data) {
						t.Fatalf("ReadStored(%s) = %s, %d bytes, %v; git: %s, %d bytes", id, kind, len(data), err, w.kind, len(w.data))
					}
				}
				missing := strings.Repeat("0", 2*r.HashLen())
				if _, _, err := r.ReadStored(missing); !errors.Is(err, ErrMissing) {
					t.Fatalf("ReadStored of no object: %v", err)
				}
			})
		}
	}
}

// TestReadStoredLeavesToGit: what is not read here is ErrMissing, for the
// caller to ask git: an index of version 1, an object in an alternate, a
// reference delta whose base is in no pack of ours, a claim past maxPacked.
func TestReadStoredLeavesToGit(t *testing.T) {
	r, dir := packedRepo(t, "sha1")
	gittest.Git(t, dir, "repack", "-adf")
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	if _, _, err := r.ReadStored(head); err != nil {
		t.Fatal(err)
	}

	other := t.TempDir()
	gittest.Git(t, other, "init", "-q")
	if err := os.WriteFile(filepath.Join(other, ".git", "objects", "info", "alternates"), []byte(r.ObjectDir()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alt := &Repo{CommonDir: filepath.Join(other, ".git"), Format: "sha1"}
	if _, _, err := alt.ReadStored(head); !errors.Is(err, ErrMissing) {
		t.Errorf("an object in an alternate: %v", err)
	}
	gittest.Git(t, other, "cat-file", "-e", head) // which git reads

	reindex(t, r, dir, "1")
	if _, _, err := r.ReadStored(head); !errors.Is(err, ErrMissing) {
		t.Errorf("an index of version 1: %v", err)
	}

	blob := []byte("a blob\n")
	id := r.HashObject("blob", blob)
	raw, _ := hex.DecodeString(id)
	base, _ := hex.DecodeString(r.HashObject("blob", []byte("elsewhere\n")))
	for name, entry := range map[string][]byte{
		"a base in no pack": append(append([]byte{objRefDelta<<4 | 4}, base...), deflate(t, []byte{10, 7, 0x90, 7})...),
		"a claim too large": append([]byte{objBlob<<4 | 0x80, 0x80, 0x80, 0x80, 0x09}, deflate(t, blob)...),
	} {
		p := testPack(r.HashLen(), [][]byte{raw}, [][]byte{entry})
		if _, _, err := r.packedObject(p, 12, id); !errors.Is(err, ErrMissing) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReadStoredRefusesDamage: damaged packs and indexes are errors and
// forged ones never yield an object that does not hash to its name,
// whatever byte is changed; truncated files are errors, not ErrMissing.
func TestReadStoredRefusesDamage(t *testing.T) {
	r, dir := packedRepo(t, "sha1")
	gittest.Git(t, dir, "repack", "-adf", "--depth=50", "--window=250")
	want := allObjects(t, r, dir)
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	packs, _ := filepath.Glob(filepath.Join(r.ObjectDir(), "pack", "*.pack"))
	base := strings.TrimSuffix(packs[0], ".pack")
	good := openTestPack(t, r, base)
	idxBytes, _ := os.ReadFile(base + ".idx")
	packBytes, _ := os.ReadFile(base + ".pack")

	// check reads every object through p: each is what git read, or an error.
	check := func(what string, p *pack) (failed int) {
		if err := p.readIndex(); err != nil {
			return len(ids)
		}
		for _, id := range ids {
			raw, _ := hex.DecodeString(id)
			off, found, err := p.find(raw)
			if err != nil || !found {
				failed++
				continue
			}
			kind, data, err := r.packedObject(p, off, id)
			if err != nil {
				failed++
				continue
			}
			if w := want[id]; kind != w.kind || !bytes.Equal(data, w.data) {
				t.Fatalf("%s: %s read as %s %q", what, id, kind, data)
			}
		}
		return failed
	}
	if n := check("intact", good); n != 0 {
		t.Fatalf("%d objects unread from the intact pack", n)
	}
	damaged := 0
	for i := 0; i < len(packBytes); i += 1 + len(packBytes)/200 {
		b := bytes.Clone(packBytes)
		b[i] ^= 0x5a
		damaged += min(check(fmt.Sprintf("pack byte %d", i), &pack{idx: bytes.NewReader(idxBytes), data: bytes.NewReader(b), hashLen: 20}), 1)
	}
	for i := 0; i < len(idxBytes); i += 1 + len(idxBytes)/100 {
		b := bytes.Clone(idxBytes)
		b[i] ^= 0x5a
		check(fmt.Sprintf("idx byte %d", i), &pack{idx: bytes.NewReader(b), data: bytes.NewReader(packBytes), hashLen: 20})
	}
	if damaged == 0 {
		t.Fatal("no change to the pack was noticed")
	}

	// Truncated files, through ReadStored.
	for _, c := range []struct {
		file string
		keep int
	}{{".pack", len(packBytes) / 2}, {".pack", 200}, {".idx", len(idxBytes) / 2}, {".idx", 1000}} {
		full := idxBytes
		if c.file == ".pack" {
			full = packBytes
		}
		os.Chmod(base+c.file, 0o644)
		if err := os.WriteFile(base+c.file, full[:c.keep], 0o644); err != nil {
			t.Fatal(err)
		}
		errs := 0
		for _, id := range ids {
			kind, data, err := r.ReadStored(id)
			switch {
			case err == nil && (kind != want[id].kind || !bytes.Equal(data, want[id].data)):
				t.Fatalf("%s cut to %d: %s read as %s %q", c.file, c.keep, id, kind, data)
			case err != nil && errors.Is(err, ErrMissing):
				t.Fatalf("%s cut to %d: %s is ErrMissing: %v", c.file, c.keep, id, err)
			case err != nil:
				errs++
			}
		}
		if errs == 0 {
			t.Errorf("%s cut to %d: every object read", c.file, c.keep)
		}
		if err := os.WriteFile(base+c.file, full, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A pack whose entry is whole but not the object its index names.
	id := r.HashObject("blob", []byte("hello\n"))
	raw, _ := hex.DecodeString(id)
	p := testPack(20, [][]byte{raw}, [][]byte{append([]byte{objBlob<<4 | 6}, deflate(t, []byte("jello\n"))...)})
	if _, _, err := r.packedObject(p, 12, id); err == nil || !strings.Contains(err.Error(), "does not match its name") {
		t.Fatalf("forged pack: %v", err)
	}
	// The same written among the repository's packs, beside a pack that
	// holds the object whole: that one is read, as git would find it.
	forged := filepath.Join(r.ObjectDir(), "pack", "pack-forged")
	writeTestPack(t, forged, p)
	if _, _, err := r.ReadStored(id); err == nil || !strings.Contains(err.Error(), "does not match its name") {
		t.Fatalf("forged pack in the repository: %v", err)
	}
	whole := testPack(20, [][]byte{raw}, [][]byte{append([]byte{objBlob<<4 | 6}, deflate(t, []byte("hello\n"))...)})
	writeTestPack(t, filepath.Join(r.ObjectDir(), "pack", "pack-whole"), whole)
	if kind, data, err := r.ReadStored(id); err != nil || kind != "blob" || string(data) != "hello\n" {
		t.Fatalf("beside a forged pack: %s %q %v", kind, data, err)
	}
}

// TestApplyDelta: git's delta instructions, and refusals of any that reach
// outside the base or the declared result.
func TestApplyDelta(t *testing.T) {
	base := []byte("0123456789abcdef")
	for _, c := range []struct {
		name  string
		delta []byte
		want  string // "" for an error
	}{
		{"copy and insert", []byte{16, 7, 0x91, 2, 4, 3, 'x', 'y', 'z'}, "2345xyz"},
		{"copy with an omitted offset", []byte{16, 3, 0x90, 3}, "012"},
		{"whole base", []byte{16, 16, 0x90, 16}, "0123456789abcdef"},
		{"insert only", []byte{16, 2, 2, 'h', 'i'}, "hi"},
		{"empty result", []byte{16, 0}, "\x00"},
		{"source size differs", []byte{15, 1, 1, 'a'}, ""},
		{"copy past the base", []byte{16, 4, 0x91, 14, 4}, ""},
		{"copy of 64 KiB from a short base", []byte{16, 1, 0x80}, ""},
		{"result longer than declared", []byte{16, 1, 2, 'a', 'b'}, ""},
		{"result shorter than declared", []byte{16, 3, 1, 'a'}, ""},
		{"reserved instruction", []byte{16, 1, 0, 'a'}, ""},
		{"truncated insert", []byte{16, 3, 3, 'a'}, ""},
		{"truncated copy", []byte{16, 3, 0x91, 1}, ""},
		{"truncated size", []byte{0x90}, ""},
		{"size too large", []byte{16, 0xff, 0xff, 0xff, 0xff, 0x7f}, ""},
	} {
		got, err := applyDelta(base, c.delta)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: %q, want an error", c.name, got)
		case c.want == "\x00" && (err != nil || len(got) != 0):
			t.Errorf("%s: %q, %v", c.name, got, err)
		case c.want != "" && c.want != "\x00" && (err != nil || string(got) != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestDeltaChainLimits: a chain deeper than git writes is left to git, and
// an entry that is its own base is not followed for ever.
func TestDeltaChainLimits(t *testing.T) {
	r := &Repo{Format: "sha1"}
	blob := []byte("base\n")
	baseEntry := append([]byte{objBlob<<4 | 5}, deflate(t, blob)...)
	copyAll := deflate(t, []byte{5, 5, 0x90, 5})
	entries := [][]byte{baseEntry}
	offs := []int{12}
	at := 12 + len(baseEntry)
	for range maxDeltaDepth + 1 {
		e := append([]byte{objOfsDelta<<4 | 4}, ofsEncode(at-offs[len(offs)-1])...)
		e = append(e, copyAll...)
		entries = append(entries, e)
		offs = append(offs, at)
		at += len(e)
	}
	id := r.HashObject("blob", blob)
	raw, _ := hex.DecodeString(id)
	p := testPack(20, nil, entries)
	for _, depth := range []int{1, 50, maxDeltaDepth} {
		if kind, data, err := r.packedObject(p, int64(offs[depth]), id); err != nil || kind != "blob" || !bytes.Equal(data, blob) {
			t.Fatalf("depth %d: %s %q %v", depth, kind, data, err)
		}
	}
	if _, _, err := r.packedObject(p, int64(offs[maxDeltaDepth+1]), id); !errors.Is(err, ErrMissing) {
		t.Fatalf("a chain deeper than git's limit: %v", err)
	}
	self := append(append([]byte{objRefDelta<<4 | 4}, raw...), copyAll...)
	if _, _, err := r.packedObject(testPack(20, [][]byte{raw}, [][]byte{self}), 12, id); !errors.Is(err, ErrMissing) {
		t.Fatalf("an entry that is its own base: %v", err)
	}
}

// ofsEncode writes an offset delta's distance to its base as git does.
func ofsEncode(rel int) []byte {
	b := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		b = append([]byte{0x80 | byte(rel&0x7f)}, b...)
	}
	return b
}

func deflate(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testPack builds a pack of entries, one after the other from offset 12,
// and its index naming the first len(names) of them.
func testPack(hashLen int, names, entries [][]byte) *pack {
	idx, data := buildPack(hashLen, names, entries)
	p := &pack{name: "test", idx: bytes.NewReader(idx), data: bytes.NewReader(data), hashLen: hashLen}
	if err := p.readIndex(); err != nil {
		panic(err)
	}
	return p
}

// buildPack returns the index and pack testPack reads; the checksums are
// zeros, which this reader does not look at.
func buildPack(hashLen int, names, entries [][]byte) (idx, data []byte) {
	data = binary.BigEndian.AppendUint32([]byte("PACK\x00\x00\x00\x02"), uint32(len(names)))
	offs := make([]uint32, len(entries))
	for i, e := range entries {
		offs[i] = uint32(len(data))
		data = append(data, e...)
	}
	data = append(data, make([]byte, hashLen)...)
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return bytes.Compare(names[order[a]], names[order[b]]) < 0 })
	idx = append([]byte(nil), idxMagic...)
	for b := range 256 {
		n := 0
		for _, name := range names {
			if int(name[0]) <= b {
				n++
			}
		}
		idx = binary.BigEndian.AppendUint32(idx, uint32(n))
	}
	for _, i := range order {
		idx = append(idx, names[i]...)
	}
	idx = append(idx, make([]byte, 4*len(names))...)
	for _, i := range order {
		idx = binary.BigEndian.AppendUint32(idx, offs[i])
	}
	return append(idx, make([]byte, 2*hashLen)...), data
}

// writeTestPack writes p's files as base.idx and base.pack.
func writeTestPack(t testing.TB, base string, p *pack) {
	t.Helper()
	for ext, r := range map[string]*bytes.Reader{".idx": p.idx.(*bytes.Reader), ".pack": p.data.(*bytes.Reader)} {
		b := make([]byte, r.Size())
		r.ReadAt(b, 0)
		if err := os.WriteFile(base+ext, b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkReadStored reads a packed commit in process against its floor,
// a loose commit read by ReadLoose, interleaved in the same loop; x-loose
// is their ratio. x-cat-file puts a git cat-file of the packed commit, what
// a hook started before, against the same floor.
//
//	go test -run '^$' -bench ReadStored -benchmem ./gitext
func BenchmarkReadStored(b *testing.B) {
	r, dir := packedRepo(b, "sha1")
	gittest.Git(b, dir, "repack", "-adf", "--depth=50", "--window=250")
	packed := gittest.Git(b, dir, "rev-parse", "HEAD")
	gittest.Git(b, dir, "commit", "-q", "--allow-empty", "-m", "loose")
	loose := gittest.Git(b, dir, "rev-parse", "HEAD")
	var inPack, alone, catFile time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, _, err := r.ReadLoose(loose); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, _, err := r.ReadStored(packed); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		alone, inPack = alone+t1.Sub(t0), inPack+t2.Sub(t1)
	}
	for range 20 {
		t0 := time.Now()
		gittest.Git(b, dir, "cat-file", "commit", packed)
		catFile += time.Since(t0)
	}
	b.ReportMetric(float64(inPack)/float64(alone), "x-loose")
	b.ReportMetric(float64(catFile)/20/(float64(alone)/float64(b.N)), "x-cat-file")
}
