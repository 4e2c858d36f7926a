package gitext

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// WriteIndexTree writes the index as a tree and returns it, as WriteTree
// does, in process when the index is one indexTree reads (git's own
// otherwise). Unlike git write-tree it leaves the index as it is: its
// cache of trees is not brought up to date; and it refuses an index that
// holds a path git would not check out (a RefusedPathError), which only
// an index written by hand can hold: an agent's, in its slot.
func (r *Repo) WriteIndexTree(ctx context.Context) (string, error) {
	path := filepath.Join(r.GitDir, "index")
	if r.via != nil && r.via.Index != "" {
		path = r.via.Index
	}
	checked := false
	if os.Getenv("GIT_INDEX_FILE") == "" {
		if data, err := fsutil.ReadNoPoll(path); err == nil {
			var tree string
			var ok bool
			if tree, ok, checked, err = r.indexTree(data, r.WriteObject); ok || err != nil {
				return tree, err
			}
		}
	}
	tree, err := r.WriteTree(ctx)
	if err != nil || checked {
		return tree, err
	}
	// An index not read here (split, sparse, ...): its paths from the tree.
	files, err := r.ListTree(ctx, tree)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if err := checkoutablePath(f.Path); err != nil {
			return "", err
		}
	}
	return tree, nil
}

// RefusedPathError is a path in an index that git refuses to check out:
// .git in any spelling, "." or "..". git add never stages one, but git
// write-tree takes one from an index written by hand, and every checkout
// of its commit would then fail.
type RefusedPathError struct{ Path string }

func (e *RefusedPathError) Error() string {
	return fmt.Sprintf("the index holds %q, a path git refuses to check out", e.Path)
}

// checkoutablePath is a RefusedPathError when a part of path is one
// indexablePathPart refuses.
func checkoutablePath(path string) error {
	for part := range strings.SplitSeq(path, "/") {
		if !indexablePathPart(part) {
			return &RefusedPathError{Path: path}
		}
	}
	return nil
}

// indexEntry is an entry of an index, as a tree takes it.
type indexEntry struct{ mode, oid, path string }

// indexTree writes, with write, the trees of index file data, and returns
// the top one. ok is false for an index it leaves to git: one of another
// version, split or sparse, with an unmerged entry, an extension it would
// have to understand, a checksum that does not match, or malformed in any
// way — or one of more than indexTreeMax entries. Entries added with intent
// to add are left out, as git leaves them. A path git would not check out
// is a RefusedPathError; checked says the index's paths were read and
// checked, as they are in every index but one that cannot be read here.
func (r *Repo) indexTree(data []byte, write func(kind string, data []byte) (string, error)) (tree string, ok, checked bool, err error) {
	entries, ok := r.parseIndex(data)
	if !ok {
		return "", false, false, nil
	}
	for _, e := range entries {
		if err := checkoutablePath(e.path); err != nil {
			return "", false, true, err
		}
	}
	if len(entries) > indexTreeMax {
		return "", false, true, nil
	}
	tree, ok, err = buildTree(entries, write)
	return tree, ok, true, err
}

// indexTreeMax is the most entries indexTree makes trees of: it hashes
// every tree of the index, where git write-tree reuses those its cache of
// trees holds, which in a larger one costs more than a process. It reads
// the paths of a larger one all the same: a check of its paths costs less
// than git ls-tree of the tree git writes.
const indexTreeMax = 2000

// minIndexEntry is the fewest bytes an index entry takes (stat data, a
// SHA-1 id, flags, a name and its end): a header's count of entries
// that could not fit is no index read here.
const minIndexEntry = 62

// parseIndex reads the entries of index file data (see indexTree).
func (r *Repo) parseIndex(data []byte) ([]indexEntry, bool) {
	n := r.HashLen()
	if len(data) < 12+n {
		return nil, false
	}
	body, sum := data[:len(data)-n], data[len(data)-n:]
	h := r.newHash()
	h.Write(body)
	if !bytes.Equal(h.Sum(nil), sum) || string(body[:4]) != "DIRC" {
		return nil, false
	}
	version, count := binary.BigEndian.Uint32(body[4:]), binary.BigEndian.Uint32(body[8:])
	if version < 2 || version > 4 || uint64(count) > uint64(len(body)/minIndexEntry) {
		return nil, false
	}
	entries := make([]indexEntry, 0, count)
	off, prev := 12, ""
	for range count {
		// ctime, mtime, dev, ino (32 bytes), then mode, uid, gid, size,
		// the object id and the flags.
		start := off
		if off+40+n+2 > len(body) {
			return nil, false
		}
		mode := binary.BigEndian.Uint32(body[off+24:])
		oid := hex.EncodeToString(body[off+40 : off+40+n])
		flags := binary.BigEndian.Uint16(body[off+40+n:])
		off += 40 + n + 2
		intent := false
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || off+2 > len(body) {
				return nil, false
			}
			ext := binary.BigEndian.Uint16(body[off:])
			if ext&^0x6000 != 0 {
				return nil, false // a flag besides skip-worktree and intent-to-add
			}
			intent = ext&0x2000 != 0
			off += 2
		}
		if flags&0x3000 != 0 {
			return nil, false // unmerged: git write-tree says so
		}
		var path string
		if version == 4 {
			// The path is the previous one less its last strip bytes,
			// and what follows.
			strip, k := binary.Uvarint(body[off:])
			if k <= 0 || strip > uint64(len(prev)) {
				return nil, false
			}
			off += k
			nul := bytes.IndexByte(body[off:], 0)
			if nul < 0 {
				return nil, false
			}
			path = prev[:len(prev)-int(strip)] + string(body[off:off+nul])
			off += nul + 1
		} else {
			nul := bytes.IndexByte(body[off:], 0)
			if nul < 0 {
				return nil, false
			}
			path = string(body[off : off+nul])
			// The entry ends with one to eight NULs, at a multiple of 8.
			off = start + (off-start+nul+8)&^7
			if off > len(body) {
				return nil, false
			}
		}
		nameLen := int(flags & 0xfff)
		if nameLen != min(len(path), 0xfff) || path <= prev && start > 12 {
			return nil, false // a length that disagrees, or out of git's order
		}
		prev = path
		var m string
		switch mode {
		case 0o100644, 0o100755, 0o120000, 0o160000:
			m = strconv.FormatUint(uint64(mode), 8)
		default:
			return nil, false // a sparse index's directory, or no mode git writes
		}
		if !intent {
			entries = append(entries, indexEntry{m, oid, path})
		}
	}
	// Extensions: one whose name starts with a capital letter is optional;
	// the others (a split index's link, a sparse index's sdir) are not.
	for off < len(body) {
		if off+8 > len(body) || body[off] < 'A' || body[off] > 'Z' {
			return nil, false
		}
		size := binary.BigEndian.Uint32(body[off+4:])
		if uint64(size) > uint64(len(body)-off-8) {
			return nil, false
		}
		off += 8 + int(size)
	}
	return entries, true
}

// buildTree writes, with write, the trees of entries (in the index's
// order) and returns the top one; false when they make no tree git would
// write (an empty or duplicate name).
func buildTree(entries []indexEntry, write func(kind string, data []byte) (string, error)) (string, bool, error) {
	var tree []TreeEntry
	names := map[string]bool{}
	for i := 0; i < len(entries); {
		name, _, isDir := strings.Cut(entries[i].path, "/")
		if names[name] {
			return "", false, nil // a file and a directory of one name
		}
		names[name] = true
		if !isDir {
			tree = append(tree, TreeEntry{Mode: entries[i].mode, Name: name, OID: entries[i].oid})
			i++
			continue
		}
		var sub []indexEntry
		for ; i < len(entries) && strings.HasPrefix(entries[i].path, name+"/"); i++ {
			e := entries[i]
			sub = append(sub, indexEntry{e.mode, e.oid, e.path[len(name)+1:]})
		}
		oid, ok, err := buildTree(sub, write)
		if !ok || err != nil {
			return "", ok, err
		}
		tree = append(tree, TreeEntry{Mode: "40000", Name: name, OID: oid})
	}
	data, err := EncodeTree(tree)
	if err != nil {
		return "", false, nil
	}
	oid, err := write("tree", data)
	return oid, err == nil, err
}
