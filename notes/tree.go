package notes

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// A notes tree names each note by the id of the object it annotates. As a
// tree grows, git splits the names into directories of two hex digits
// ("fan-out": ab12…, ab/12…, ab/cd/34…), and it reads any mix of them.
//
// Writes follow git's own rule (notes.c, determine_fanout) so that git and
// git-crucible lay out the same notes the same way. git holds the loaded
// part of a tree as a 16-ary trie over the hex digits, in which a subtree it
// has not read is a single leaf. At a trie node of depth 2k with k directory
// levels above it, git adds a level below it when each of the node's 16
// slots holds two leaves or more, or one unread subtree. Unread subtrees
// shallower than the levels so decided are kept as they are; the others are
// read and their notes laid out at the current level. git reads the root
// and the subtrees on the path to the notes it touches, and so does a view:
// only those trees are rewritten.

// item is a note (key: the annotated object's id, oid: the note's blob) or
// a subtree not read yet (key: the hex prefix its path spells, oid: a tree).
type item struct {
	key  string
	oid  string
	tree bool
}

// view is the loaded part of a notes tree, as git would hold it.
type view struct {
	o      *objects
	hexLen int
	items  []item             // sorted by key; no subtree's key prefixes another item's
	other  []gitext.TreeEntry // entries that are no note, Name being the full path
}

func newView(ctx context.Context, o *objects, tree string) (*view, error) {
	v := &view{o: o, hexLen: 2 * o.repo.HashLen()}
	if tree == "" {
		return v, nil
	}
	items, err := v.read(ctx, "", tree)
	if err != nil {
		return nil, err
	}
	v.items, err = v.normalize(ctx, items)
	return v, err
}

// classify tells what entry e of the directory spelling prefix holds, by
// git's rules: a note (a regular file completing the id), a subtree (a
// directory of two hex digits) or neither.
func classify(prefix string, e gitext.TreeEntry, hexLen int) (key string, tree, ok bool) {
	name := strings.ToLower(e.Name)
	if strings.Trim(name, "0123456789abcdef") != "" {
		return "", false, false
	}
	switch {
	case len(prefix)+len(name) == hexLen && strings.HasPrefix(e.Mode, "100"):
		return prefix + name, false, true
	case len(name) == 2 && e.IsTree() && len(prefix)+2 < hexLen:
		return prefix + name, true, true
	}
	return "", false, false
}

// read lists the subtree spelling prefix; its other entries go to v.other.
func (v *view) read(ctx context.Context, prefix, tree string) ([]item, error) {
	entries, err := v.o.tree(ctx, tree)
	if err != nil {
		return nil, err
	}
	items := make([]item, 0, len(entries))
	for _, e := range entries {
		if key, isTree, ok := classify(prefix, e, v.hexLen); ok {
			items = append(items, item{key: key, oid: e.OID, tree: isTree})
			continue
		}
		if prefix != "" {
			e.Name = fanoutPath(prefix, len(prefix)/2) + "/" + e.Name
		}
		v.other = append(v.other, e)
	}
	return items, nil
}

// normalize sorts items and reads every subtree that another item lies
// under, as git does when two leaves meet in one slot. The same object
// annotated at two depths becomes one note holding the lines of both.
func (v *view) normalize(ctx context.Context, items []item) ([]item, error) {
	for {
		sort.SliceStable(items, func(i, j int) bool { return items[i].key < items[j].key })
		out := make([]item, 0, len(items))
		expanded := false
		for i, it := range items {
			if it.tree && i+1 < len(items) && strings.HasPrefix(items[i+1].key, it.key) {
				sub, err := v.read(ctx, it.key, it.oid)
				if err != nil {
					return nil, err
				}
				out, expanded = append(out, sub...), true
				continue
			}
			if last := len(out) - 1; !it.tree && last >= 0 && out[last].key == it.key && !out[last].tree {
				oid, err := v.combine(ctx, out[last].oid, it.oid)
				if err != nil {
					return nil, err
				}
				out[last].oid = oid
				continue
			}
			out = append(out, it)
		}
		items = out
		if !expanded {
			return items, nil
		}
	}
}

// combine writes the note holding a's lines, then b's lines a lacks.
func (v *view) combine(ctx context.Context, a, b string) (string, error) {
	if a == b {
		return a, nil
	}
	da, err := v.o.read(ctx, a, "blob")
	if err != nil {
		return "", err
	}
	db, err := v.o.read(ctx, b, "blob")
	if err != nil {
		return "", err
	}
	merged, _ := union(da, splitLines(db))
	return v.o.repo.WriteObject("blob", merged)
}

// expand reads the subtrees whose keys are in keys; it reports whether
// there was any.
func (v *view) expand(ctx context.Context, keys map[string]bool) (bool, error) {
	out := make([]item, 0, len(v.items))
	found := false
	for _, it := range v.items {
		if !it.tree || !keys[it.key] {
			out = append(out, it)
			continue
		}
		sub, err := v.read(ctx, it.key, it.oid)
		if err != nil {
			return false, err
		}
		out, found = append(out, sub...), true
	}
	if !found {
		return false, nil
	}
	var err error
	v.items, err = v.normalize(ctx, out)
	return true, err
}

// load reads the subtrees on the paths to keys, as git does to find them.
func (v *view) load(ctx context.Context, keys ...string) error {
	prefixes := map[string]bool{}
	for _, k := range keys {
		for n := 2; n < len(k); n += 2 {
			prefixes[k[:n]] = true
		}
	}
	for {
		more, err := v.expand(ctx, prefixes)
		if err != nil || !more {
			return err
		}
	}
}

// find returns the index of the item with key, or -1.
func (v *view) find(key string) int {
	if i, found := slices.BinarySearchFunc(v.items, key, compareKey); found {
		return i
	}
	return -1
}

func compareKey(it item, key string) int { return strings.Compare(it.key, key) }

// note returns the content of key's note, or nil; load(key) comes first.
func (v *view) note(ctx context.Context, key string) ([]byte, error) {
	i := v.find(key)
	if i < 0 || v.items[i].tree {
		return nil, nil
	}
	return v.o.read(ctx, v.items[i].oid, "blob")
}

// set makes content key's note; load(key) comes first.
func (v *view) set(key string, content []byte) error {
	oid, err := v.o.repo.WriteObject("blob", content)
	if err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(v.items, key, compareKey)
	if found {
		v.items[i].oid = oid
	} else {
		v.items = slices.Insert(v.items, i, item{key: key, oid: oid})
	}
	return nil
}

// fanoutPath is where key lies at the given fan-out: "ab/cd/ef01…".
func fanoutPath(key string, fanout int) string {
	var b strings.Builder
	i := 0
	for ; fanout > 0 && i+2 < len(key); fanout-- {
		b.WriteString(key[i:i+2] + "/")
		i += 2
	}
	b.WriteString(key[i:])
	return b.String()
}

// write stores the view as trees laid out by git's rule and returns the
// root tree's id. Subtrees kept as they are cost nothing.
func (v *view) write(ctx context.Context) (string, error) {
	sort.Slice(v.items, func(i, j int) bool { return v.items[i].key < v.items[j].key })
	root := &dir{}
	if err := v.node(ctx, root, v.items, 0, 0); err != nil {
		return "", err
	}
	for _, e := range v.other {
		// As in git, a note takes precedence over a non-note of the same path.
		if err := root.place(e.Name, e.Mode, e.OID, true); err != nil {
			return "", err
		}
	}
	return root.write(v.o.repo)
}

// node lays out the trie node at depth n (in hex digits) holding items.
func (v *view) node(ctx context.Context, root *dir, items []item, n, fanout int) error {
	if n%2 == 0 && n == 2*fanout && full(items, n) {
		fanout++
	}
	for len(items) > 0 {
		j := 1
		for j < len(items) && items[j].key[n] == items[0].key[n] {
			j++
		}
		if err := v.slot(ctx, root, items[:j], n, fanout); err != nil {
			return err
		}
		items = items[j:]
	}
	return nil
}

// slot lays out the items of one slot of a node at depth n.
func (v *view) slot(ctx context.Context, root *dir, group []item, n, fanout int) error {
	for {
		switch it := group[0]; {
		case len(group) > 1:
			return v.node(ctx, root, group, n+1, fanout)
		case !it.tree:
			return root.place(fanoutPath(it.key, fanout), "100644", it.oid, false)
		case n < 2*fanout && len(it.key) <= 2*fanout+2:
			// Kept unread, as git does. (git would keep a subtree two
			// levels deeper too, under a name it cannot read back: such
			// a one is read and laid out instead.)
			return root.place(fanoutPath(it.key, fanout), "40000", it.oid, false)
		}
		sub, err := v.read(ctx, group[0].key, group[0].oid)
		if err != nil {
			return err
		}
		if group, err = v.normalize(ctx, sub); err != nil || len(group) == 0 {
			return err
		}
	}
}

// full reports whether each of the 16 slots of a node at depth n holds two
// leaves or more, or one unread subtree.
func full(items []item, n int) bool {
	var count [16]int
	var tree [16]bool
	for _, it := range items {
		d := strings.IndexByte("0123456789abcdef", it.key[n])
		count[d]++
		tree[d] = it.tree
	}
	for d := range count {
		if count[d] < 2 && !(count[d] == 1 && tree[d]) {
			return false
		}
	}
	return true
}

// dir is a directory of the tree being written.
type dir struct {
	entries map[string]gitext.TreeEntry
	subdirs map[string]*dir
}

// place puts an entry at path. A weak entry (a non-note) gives way to one
// already there.
func (d *dir) place(path, mode, oid string, weak bool) error {
	parts := strings.Split(path, "/")
	for _, name := range parts[:len(parts)-1] {
		if _, taken := d.entries[name]; taken {
			return fmt.Errorf("notes tree: %s is both a file and a directory", path)
		}
		if d.subdirs == nil {
			d.subdirs = map[string]*dir{}
		}
		sub := d.subdirs[name]
		if sub == nil {
			sub = &dir{}
			d.subdirs[name] = sub
		}
		d = sub
	}
	name := parts[len(parts)-1]
	_, isFile := d.entries[name]
	_, isDir := d.subdirs[name]
	if isFile || isDir {
		if weak {
			return nil
		}
		return fmt.Errorf("notes tree: two entries at %s", path)
	}
	if d.entries == nil {
		d.entries = map[string]gitext.TreeEntry{}
	}
	d.entries[name] = gitext.TreeEntry{Mode: mode, Name: name, OID: oid}
	return nil
}

// write stores d and its subdirectories, deepest first.
func (d *dir) write(repo *gitext.Repo) (string, error) {
	entries := make([]gitext.TreeEntry, 0, len(d.entries)+len(d.subdirs))
	for _, e := range d.entries {
		entries = append(entries, e)
	}
	for name, sub := range d.subdirs {
		oid, err := sub.write(repo)
		if err != nil {
			return "", err
		}
		entries = append(entries, gitext.TreeEntry{Mode: "40000", Name: name, OID: oid})
	}
	data, err := gitext.EncodeTree(entries)
	if err != nil {
		return "", err
	}
	return repo.WriteObject("tree", data)
}
