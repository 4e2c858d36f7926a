package gitext

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Objects reads a repository's trees and commits for a run of work that
// makes many: loose objects in process, the rest through one git cat-file
// started when first needed (Close ends it; it starts again if needed).
// Trees are kept decoded by id, as a tree's content never changes, so the
// tasks of one level read their common base once. Every object read is
// checked to hash to its id. Safe for concurrent use.
type Objects struct {
	repo   *Repo
	mu     sync.Mutex
	batch  *ObjectReader
	trees  map[string][]TreeEntry
	peeled map[string]string // a commit's tree, by the commit's id
}

// NewObjects is an Objects of r.
func (r *Repo) NewObjects() *Objects {
	return &Objects{repo: r, trees: map[string][]TreeEntry{}, peeled: map[string]string{}}
}

// Close ends the cat-file process, if one was started.
func (o *Objects) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.batch == nil {
		return nil
	}
	err := o.batch.Close()
	o.batch = nil
	return err
}

// read returns object oid's type and content.
func (o *Objects) read(ctx context.Context, oid string) (string, []byte, error) {
	if !o.repo.ValidOID(oid) {
		return "", nil, fmt.Errorf("invalid object id %q", oid)
	}
	kind, data, err := o.repo.ReadLoose(oid)
	if !errors.Is(err, ErrMissing) {
		return kind, data, err
	}
	o.mu.Lock()
	batch := o.batch
	if batch == nil {
		if batch, err = o.repo.NewObjectReader(context.WithoutCancel(ctx)); err != nil {
			o.mu.Unlock()
			return "", nil, err
		}
		o.batch = batch
	}
	o.mu.Unlock()
	if kind, data, err = batch.Read(oid); err != nil {
		return "", nil, err
	}
	if o.repo.HashObject(kind, data) != oid {
		return "", nil, fmt.Errorf("object %s does not match its name", oid)
	}
	return kind, data, nil
}

// Tree returns the entries of tree oid, or of commit oid's tree. The slice
// is shared: the caller must not change it.
func (o *Objects) Tree(ctx context.Context, oid string) ([]TreeEntry, error) {
	return o.tree(ctx, oid, true)
}

// tree is Tree; peel: a commit may stand for its tree.
func (o *Objects) tree(ctx context.Context, oid string, peel bool) ([]TreeEntry, error) {
	o.mu.Lock()
	if tree, ok := o.peeled[oid]; ok && peel {
		oid, peel = tree, false
	}
	entries, ok := o.trees[oid]
	o.mu.Unlock()
	if ok {
		return entries, nil
	}
	kind, data, err := o.read(ctx, oid)
	if err != nil {
		return nil, err
	}
	if kind == "commit" && peel {
		c, err := DecodeCommit(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", oid, err)
		}
		o.mu.Lock()
		o.peeled[oid] = c.Tree
		o.mu.Unlock()
		return o.tree(ctx, c.Tree, false)
	}
	if kind != "tree" {
		return nil, fmt.Errorf("%s is a %s, not a tree", oid, kind)
	}
	if entries, err = DecodeTree(data, o.repo.HashLen()); err != nil {
		return nil, fmt.Errorf("tree %s: %w", oid, err)
	}
	o.mu.Lock()
	o.trees[oid] = entries
	o.mu.Unlock()
	return entries, nil
}

// treeOf is the id of tree treeish, or of commit treeish's tree.
func (o *Objects) treeOf(ctx context.Context, treeish string) (string, error) {
	if _, err := o.Tree(ctx, treeish); err != nil {
		return "", err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if tree, ok := o.peeled[treeish]; ok {
		return tree, nil
	}
	return treeish, nil
}

// ChangedPaths are the paths of the files (blobs, symbolic links,
// submodules) that differ between trees, or commits, a and b, in their
// mode or content, sorted: what git diff-tree -r --name-only --no-renames
// lists, found in process. Subtrees with the same id are not read.
func (o *Objects) ChangedPaths(ctx context.Context, a, b string) ([]string, error) {
	var out []string
	if err := o.diff(ctx, a, b, "", &out); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// diff adds to out the paths, under prefix, that differ between trees a
// and b ("" for none).
func (o *Objects) diff(ctx context.Context, a, b, prefix string, out *[]string) error {
	if a == b {
		return nil
	}
	side := func(oid string) (map[string]TreeEntry, error) {
		m := map[string]TreeEntry{}
		if oid == "" {
			return m, nil
		}
		entries, err := o.Tree(ctx, oid)
		for _, e := range entries {
			m[e.Name] = e
		}
		return m, err
	}
	as, err := side(a)
	if err != nil {
		return err
	}
	bs, err := side(b)
	if err != nil {
		return err
	}
	for name, ea := range as {
		eb, ok := bs[name]
		switch {
		case !ok:
			eb = TreeEntry{}
		case ea.IsTree() && eb.IsTree():
			if err := o.diff(ctx, ea.OID, eb.OID, prefix+name+"/", out); err != nil {
				return err
			}
			continue
		case !ea.IsTree() && !eb.IsTree():
			if ea.Mode != eb.Mode || ea.OID != eb.OID {
				*out = append(*out, prefix+name)
			}
			continue
		}
		// Only one side has it, or it is a file on one side and a
		// directory on the other: each side's files are changed.
		if err := o.onlyIn(ctx, ea, prefix, out); err != nil {
			return err
		}
		if err := o.onlyIn(ctx, eb, prefix, out); err != nil {
			return err
		}
	}
	for name, eb := range bs {
		if _, ok := as[name]; !ok {
			if err := o.onlyIn(ctx, eb, prefix, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// onlyIn adds e's files to out: e itself, or every file below it.
func (o *Objects) onlyIn(ctx context.Context, e TreeEntry, prefix string, out *[]string) error {
	switch {
	case e.Name == "":
		return nil
	case e.IsTree():
		return o.diff(ctx, "", e.OID, prefix+e.Name+"/", out)
	}
	*out = append(*out, prefix+e.Name)
	return nil
}

// Entry is the entry at path (from the top, with "/") in tree or commit
// treeish; false when there is none.
func (o *Objects) Entry(ctx context.Context, treeish, path string) (TreeEntry, bool, error) {
	tree := treeish
	for dir, rest, more := strings.Cut(path, "/"); ; dir, rest, more = strings.Cut(rest, "/") {
		entries, err := o.Tree(ctx, tree)
		if err != nil {
			return TreeEntry{}, false, err
		}
		i := slices.IndexFunc(entries, func(e TreeEntry) bool { return e.Name == dir })
		switch {
		case i < 0:
			return TreeEntry{}, false, nil
		case !more:
			return entries[i], true, nil
		case !entries[i].IsTree():
			return TreeEntry{}, false, nil
		}
		tree = entries[i].OID
	}
}

// TreeEdit is a change EditTree makes: the file at Path (from the top,
// with "/") becomes Entry (its Name is ignored), or goes when Entry's
// Mode is "".
type TreeEdit struct {
	Path  string
	Entry TreeEntry
}

// EditTree writes the tree that is tree (or commit) treeish's with edits
// made in order, as git update-index --index-info makes them in an index
// of treeish that git write-tree then writes: a file put where a directory
// was replaces it, and a directory put where a file was replaces that; a
// removal of a path that is no file changes nothing; a directory left
// empty goes; a path git would not put in an index (a ".git" component,
// an empty or dot one) is ignored, as git ignores it. Only the trees on
// the edits' paths are written, in process.
func (o *Objects) EditTree(ctx context.Context, treeish string, edits []TreeEdit) (string, error) {
	tree, err := o.treeOf(ctx, treeish)
	if err != nil {
		return "", err
	}
	root := &editNode{oid: tree}
	for _, ed := range edits {
		parts := strings.Split(ed.Path, "/")
		if slices.ContainsFunc(parts, func(p string) bool { return !indexablePathPart(p) }) {
			continue
		}
		if ed.Entry.Mode == "" {
			err = root.remove(ctx, o, parts)
		} else {
			e := ed.Entry
			if e.Mode, err = indexMode(e.Mode); err == nil {
				err = root.put(ctx, o, parts, e)
			}
		}
		if err != nil {
			return "", err
		}
	}
	oid, err := root.write(o)
	if err == nil && oid == "" {
		oid, err = o.repo.WriteObject("tree", nil) // an index with no entry writes the empty tree
	}
	return oid, err
}

// editNode is a tree EditTree is changing: oid until it is read; then
// its entries, and the nodes of the subtrees it goes into.
type editNode struct {
	oid     string
	entries map[string]TreeEntry
	subs    map[string]*editNode
	changed bool
}

func (n *editNode) load(ctx context.Context, o *Objects) error {
	if n.entries != nil {
		return nil
	}
	n.entries, n.subs = map[string]TreeEntry{}, map[string]*editNode{}
	if n.oid == "" {
		return nil
	}
	entries, err := o.Tree(ctx, n.oid)
	for _, e := range entries {
		n.entries[e.Name] = e
	}
	return err
}

// sub is the node of directory name in n, made (replacing a file there)
// when create is set; nil when there is none.
func (n *editNode) sub(name string, create bool) *editNode {
	if s, ok := n.subs[name]; ok {
		return s
	}
	e, ok := n.entries[name]
	switch {
	case ok && e.IsTree():
		n.subs[name] = &editNode{oid: e.OID}
	case create:
		n.entries[name] = TreeEntry{Mode: "40000", Name: name}
		n.subs[name] = &editNode{}
	default:
		return nil
	}
	return n.subs[name]
}

func (n *editNode) put(ctx context.Context, o *Objects, parts []string, e TreeEntry) error {
	if err := n.load(ctx, o); err != nil {
		return err
	}
	n.changed = true
	if len(parts) > 1 {
		return n.sub(parts[0], true).put(ctx, o, parts[1:], e)
	}
	e.Name = parts[0]
	n.entries[e.Name] = e
	delete(n.subs, e.Name)
	return nil
}

func (n *editNode) remove(ctx context.Context, o *Objects, parts []string) error {
	if err := n.load(ctx, o); err != nil {
		return err
	}
	if len(parts) > 1 {
		s := n.sub(parts[0], false)
		if s == nil {
			return nil
		}
		err := s.remove(ctx, o, parts[1:])
		n.changed = n.changed || s.changed
		return err
	}
	if e, ok := n.entries[parts[0]]; ok && !e.IsTree() {
		delete(n.entries, parts[0])
		n.changed = true
	}
	return nil
}

// write writes n's tree if it changed, and returns its id: "" for a
// tree left empty.
func (n *editNode) write(o *Objects) (string, error) {
	if !n.changed {
		return n.oid, nil
	}
	for name, s := range n.subs {
		oid, err := s.write(o)
		if err != nil {
			return "", err
		}
		if oid == "" {
			delete(n.entries, name)
			continue
		}
		e := n.entries[name]
		e.OID = oid
		n.entries[name] = e
	}
	if len(n.entries) == 0 {
		return "", nil
	}
	entries := make([]TreeEntry, 0, len(n.entries))
	for _, e := range n.entries {
		entries = append(entries, e)
	}
	data, err := EncodeTree(entries)
	if err != nil {
		return "", err
	}
	return o.repo.WriteObject("tree", data)
}

// indexablePathPart reports whether git would take p as a part of a path
// in its index: not empty, not . or .., and not .git in any spelling a
// case-insensitive or NTFS file system takes for it.
func indexablePathPart(p string) bool {
	if p == "" || p == "." || p == ".." || strings.ContainsRune(p, 0) {
		return false
	}
	trimmed := strings.TrimRight(p, ". ")
	return !strings.EqualFold(trimmed, ".git") && !strings.EqualFold(trimmed, "git~1")
}

// indexMode is mode as git puts it in an index (canonMode). A directory
// is no file: it is refused.
func indexMode(mode string) (string, error) {
	m, err := strconv.ParseUint(mode, 8, 32)
	switch c := canonMode(m); {
	case err != nil:
		return "", fmt.Errorf("invalid mode %q", mode)
	case c == 0o40000:
		return "", fmt.Errorf("mode %s is a directory's, not a file's", mode)
	default:
		return strconv.FormatUint(c, 8), nil
	}
}

// canonMode is the mode git's tree walk and index take for a stored one:
// a regular file 100644 or 100755 (by its owner's execute bit), a
// symbolic link, a directory or a submodule.
func canonMode(m uint64) uint64 {
	switch m & 0o170000 {
	case 0o100000:
		if m&0o100 != 0 {
			return 0o100755
		}
		return 0o100644
	case 0o120000:
		return 0o120000
	case 0o40000:
		return 0o40000
	}
	return 0o160000
}
