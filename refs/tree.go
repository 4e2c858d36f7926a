package refs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// A batch may write files below the top level ("dispatch/0001/12-plan.md").
// Rebuilding a directory needs its current listing. Listings are cached by
// tree id in cache/<id>.trees: a tree's content never changes, so an entry
// can only be missing, never stale; one that does not hash to its id is
// not taken. The file keeps the subtrees the last
// append wrote, which are what the next append on the same path needs.

const treesMagic = "git-crucible trees 1"

func (s *Store) treesPath(id string) string { return s.cachePath(id) + ".trees" }

// treeBuilder rebuilds the directories a batch touches, bottom-up.
type treeBuilder struct {
	s       *Store
	head    *Head
	known   map[string][]gitext.TreeEntry // listings by tree id
	written map[string][]gitext.TreeEntry // listings of trees this batch wrote
}

func (s *Store) newTreeBuilder(head *Head) *treeBuilder {
	b := &treeBuilder{s: s, head: head, known: map[string][]gitext.TreeEntry{}, written: map[string][]gitext.TreeEntry{}}
	if head.Commit != "" {
		if data, err := os.ReadFile(s.treesPath(head.ID)); err == nil {
			for oid, entries := range decodeTrees(data) {
				// Only a listing that is the tree: the file is anyone's
				// who can write the git dir.
				if tree, err := gitext.EncodeTree(entries); err == nil && s.repo.HashObject("tree", tree) == oid {
					b.known[oid] = entries
				}
			}
		}
	}
	return b
}

// listing returns the current entries of directory dir ("" is the root),
// or nil when it does not exist yet.
func (b *treeBuilder) listing(ctx context.Context, dir string) ([]gitext.TreeEntry, error) {
	if dir == "" {
		return b.head.Tree, nil
	}
	parentDir, name := splitPath(dir)
	parent, err := b.listing(ctx, parentDir)
	if err != nil {
		return nil, err
	}
	for _, e := range parent {
		if e.Name != name {
			continue
		}
		if !e.IsTree() {
			return nil, fmt.Errorf("%s is a file, not a directory", dir)
		}
		if entries, ok := b.known[e.OID]; ok {
			return entries, nil
		}
		r, err := b.s.Objects(ctx)
		if err != nil {
			return nil, err
		}
		data, err := r.ReadKind(e.OID, "tree")
		if err != nil {
			return nil, err
		}
		entries, err := gitext.DecodeTree(data, b.s.repo.HashLen())
		if err != nil {
			return nil, fmt.Errorf("tree %s (%s): %w", short(e.OID), dir, err)
		}
		b.known[e.OID] = entries
		return entries, nil
	}
	return nil, nil
}

// build writes files (path to content) and places blobs (path to the id
// of a blob already written) over the head's tree, and returns the new
// root's entries and id.
func (b *treeBuilder) build(ctx context.Context, files map[string][]byte, blobs map[string]string) ([]gitext.TreeEntry, string, error) {
	changes := map[string][]gitext.TreeEntry{"": nil} // directory -> entries to set in it
	paths := make(map[string]string, len(files)+len(blobs))
	for p, content := range files {
		oid, err := b.s.repo.WriteObject("blob", content)
		if err != nil {
			return nil, "", err
		}
		paths[p] = oid
	}
	for p, oid := range blobs {
		paths[p] = oid
	}
	for p, oid := range paths {
		if err := checkPath(p); err != nil {
			return nil, "", err
		}
		dir, name := splitPath(p)
		changes[dir] = append(changes[dir], gitext.TreeEntry{Mode: "100644", Name: name, OID: oid})
		for d := dir; d != ""; {
			d, _ = splitPath(d)
			if _, ok := changes[d]; !ok {
				changes[d] = nil
			}
		}
	}
	dirs := make([]string, 0, len(changes))
	for d := range changes {
		dirs = append(dirs, d)
	}
	// Deepest first, so every subtree exists before its parent is written.
	sort.Slice(dirs, func(i, j int) bool { return depth(dirs[i]) > depth(dirs[j]) })
	var root []gitext.TreeEntry
	var rootOID string
	for _, d := range dirs {
		current, err := b.listing(ctx, d)
		if err != nil {
			return nil, "", err
		}
		merged := map[string]gitext.TreeEntry{}
		for _, e := range current {
			merged[e.Name] = e
		}
		for _, e := range changes[d] {
			if old, ok := merged[e.Name]; ok && old.IsTree() != e.IsTree() {
				return nil, "", fmt.Errorf("%s: a file and a directory would share the name", path.Join(d, e.Name))
			}
			merged[e.Name] = e
		}
		entries := make([]gitext.TreeEntry, 0, len(merged))
		for _, e := range merged {
			entries = append(entries, e)
		}
		data, err := gitext.EncodeTree(entries)
		if err != nil {
			return nil, "", err
		}
		oid, err := b.s.repo.WriteObject("tree", data)
		if err != nil {
			return nil, "", err
		}
		if entries, err = gitext.DecodeTree(data, b.s.repo.HashLen()); err != nil { // git's order
			return nil, "", err
		}
		if d == "" {
			root, rootOID = entries, oid
			continue
		}
		b.written[oid] = entries
		parent, name := splitPath(d)
		changes[parent] = append(changes[parent], gitext.TreeEntry{Mode: "40000", Name: name, OID: oid})
	}
	return root, rootOID, nil
}

// saveListings records the subtrees this batch wrote, best effort.
func (b *treeBuilder) saveListings() {
	if len(b.written) > 0 {
		writeInPlace(b.s.treesPath(b.head.ID), encodeTrees(b.written))
	}
}

func splitPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

func depth(dir string) int {
	if dir == "" {
		return -1
	}
	return strings.Count(dir, "/")
}

// checkPath accepts relative slash-separated paths of plain names.
func checkPath(p string) error {
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "\x00\n") {
			return fmt.Errorf("invalid path %q in a batch", p)
		}
	}
	return nil
}

func encodeTrees(trees map[string][]gitext.TreeEntry) []byte {
	var b bytes.Buffer
	b.WriteString(treesMagic + "\n")
	for oid, entries := range trees {
		fmt.Fprintf(&b, "tree %s %d\n", oid, len(entries))
		for _, e := range entries {
			fmt.Fprintf(&b, "%s %s %s\n", e.Mode, e.OID, e.Name)
		}
	}
	b.WriteString("end\n")
	return b.Bytes()
}

// decodeTrees returns the listings of a complete trees file, or nil.
func decodeTrees(data []byte) map[string][]gitext.TreeEntry {
	lines := strings.Split(string(data), "\n")
	if len(lines) < 3 || lines[0] != treesMagic || lines[len(lines)-2] != "end" || lines[len(lines)-1] != "" {
		return nil
	}
	out := map[string][]gitext.TreeEntry{}
	for i := 1; i < len(lines)-2; {
		f := strings.Fields(lines[i])
		n, err := 0, error(nil)
		if len(f) == 3 {
			n, err = strconv.Atoi(f[2])
		}
		if len(f) != 3 || f[0] != "tree" || err != nil || n < 0 || i+1+n > len(lines)-2 {
			return nil
		}
		entries := make([]gitext.TreeEntry, 0, n)
		for _, l := range lines[i+1 : i+1+n] {
			mode, rest, ok1 := strings.Cut(l, " ")
			oid, name, ok2 := strings.Cut(rest, " ")
			if !ok1 || !ok2 {
				return nil
			}
			entries = append(entries, gitext.TreeEntry{Mode: mode, OID: oid, Name: name})
		}
		out[f[1]] = entries
		i += 1 + n
	}
	return out
}
