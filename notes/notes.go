// Package notes reads and writes git notes in process: a commit's note read
// whatever the tree's fan-out, lines appended, notes copied to rewritten
// commits and notes refs merged, each write one notes commit moved into
// place with a compare-and-swap. Notes are handled as lines: a write adds
// the lines a note lacks and never removes one. The trees it writes are laid
// out as git lays them out, so git notes and git log --notes read and extend
// them as their own.
package notes

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// ProvenanceRef holds a provenance note for every commit made inside a
// pipeline (see Provenance).
const ProvenanceRef = "refs/notes/crucible/provenance"

// RewriteArgs make a git command carry provenance notes over to the
// commits it amends or rebases, as the hooks' notes.rewriteRef does,
// whatever the user's configuration; the post-rewrite hook's union of the
// same lines is idempotent.
var RewriteArgs = []string{"-c", "notes.rewriteRef=" + ProvenanceRef, "-c", "notes.rewriteMode=cat_sort_uniq",
	"-c", "notes.rewrite.amend=true", "-c", "notes.rewrite.rebase=true"}

// Who signs notes commits.
const (
	authorName  = "git-crucible"
	authorEmail = "notes@git-crucible"
)

// Read returns the note on object in notesRef and whether there is one.
func Read(ctx context.Context, repo *gitext.Repo, notesRef, object string) ([]byte, bool, error) {
	r, err := NewReader(ctx, repo, notesRef)
	if err != nil {
		return nil, false, err
	}
	note, ok, err := r.Read(ctx, object)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return note, ok, err
}

// Reader reads many notes from one state of a notes ref (say, every commit
// of a pushed range) with one object reader and the trees read once.
type Reader struct {
	o    *objects
	root string // the notes tree; "" when the ref does not exist
}

// NewReader reads notesRef's current commit; Close releases the reader.
func NewReader(ctx context.Context, repo *gitext.Repo, notesRef string) (*Reader, error) {
	if err := checkRef(notesRef); err != nil {
		return nil, err
	}
	tip, err := repo.ReadRef(notesRef)
	if err != nil {
		return nil, err
	}
	r := &Reader{o: newObjects(repo)}
	if tip != "" {
		if r.root, err = r.o.commitTree(ctx, tip); err != nil {
			r.o.close()
			return nil, fmt.Errorf("%s: %w", notesRef, err)
		}
	}
	return r, nil
}

// Close stops the object reader, if one was started.
func (r *Reader) Close() error { return r.o.close() }

// Read returns the note on object and whether there is one. A note stored
// at two depths of the tree (git reads both) comes back as one, the lines
// of the deeper first.
func (r *Reader) Read(ctx context.Context, object string) ([]byte, bool, error) {
	if err := checkObject(r.o.repo, object); err != nil {
		return nil, false, err
	}
	if r.root == "" {
		return nil, false, nil
	}
	var note []byte
	found := false
	err := r.walk(ctx, "", r.root, object, func(blob string) error {
		data, err := r.o.read(ctx, blob, "blob")
		switch {
		case err != nil:
			return err
		case found:
			note, _ = union(note, splitLines(data))
		default:
			note, found = data, true
		}
		return nil
	})
	return note, found, err
}

// walk calls fn with each note on key along the path to it, deepest first.
func (r *Reader) walk(ctx context.Context, prefix, tree, key string, fn func(blob string) error) error {
	entries, err := r.o.tree(ctx, tree)
	if err != nil {
		return err
	}
	hexLen := 2 * r.o.repo.HashLen()
	var here []string
	for _, e := range entries {
		k, isTree, ok := classify(prefix, e, hexLen)
		switch {
		case !ok || !strings.HasPrefix(key, k):
		case isTree:
			if err := r.walk(ctx, k, e.OID, key, fn); err != nil {
				return err
			}
		default:
			here = append(here, e.OID)
		}
	}
	for _, blob := range here {
		if err := fn(blob); err != nil {
			return err
		}
	}
	return nil
}

// Append adds lines to the note on object in notesRef, creating it, and
// skips lines the note already has (exact match) or that repeat. It makes
// one notes commit, or none when there is nothing to add. A line may not
// hold a newline.
func Append(ctx context.Context, repo *gitext.Repo, notesRef, object string, lines ...[]byte) error {
	return AppendEach(ctx, repo, notesRef, []Lines{{Object: object, Lines: lines}})
}

// Lines are lines to add to the note on Object.
type Lines struct {
	Object string
	Lines  [][]byte
}

// AppendEach is Append for many objects in one notes commit (none when
// every note has its lines already): a batch of results costs one
// compare-and-swap, not one per object.
func AppendEach(ctx context.Context, repo *gitext.Repo, notesRef string, batch []Lines) error {
	keys := make([]string, 0, len(batch))
	for _, b := range batch {
		if err := checkObject(repo, b.Object); err != nil {
			return err
		}
		for _, l := range b.Lines {
			if bytes.IndexByte(l, '\n') >= 0 {
				return fmt.Errorf("a note line may not hold a newline: %q", l)
			}
		}
		keys = append(keys, b.Object)
	}
	if len(batch) == 0 {
		return nil
	}
	return edit(ctx, repo, notesRef, func(v *view) (bool, error) {
		if err := v.load(ctx, keys...); err != nil {
			return false, err
		}
		changed := false
		for _, b := range batch {
			note, err := v.note(ctx, b.Object)
			if err != nil {
				return false, err
			}
			note, added := union(note, b.Lines)
			if !added {
				continue
			}
			if err := v.set(b.Object, note); err != nil {
				return false, err
			}
			changed = true
		}
		return changed, nil
	})
}

// Rewrite maps a commit to the commit that replaced it (amend, rebase).
type Rewrite struct{ Old, New string }

// Copy carries notes over rewritten commits, for post-rewrite: each New
// gets the lines of Old's note it lacks (as is when it has no note), so
// several Olds mapped to one New (squash, fixup) all land in it. The notes
// are read as they were before the copy; it all makes one notes commit,
// none when nothing changes. It returns how many notes changed.
func Copy(ctx context.Context, repo *gitext.Repo, notesRef string, pairs []Rewrite) (int, error) {
	var keys []string
	for _, p := range pairs {
		for _, id := range []string{p.Old, p.New} {
			if err := checkObject(repo, id); err != nil {
				return 0, err
			}
			keys = append(keys, id)
		}
	}
	changed := 0
	err := edit(ctx, repo, notesRef, func(v *view) (bool, error) {
		if err := v.load(ctx, keys...); err != nil {
			return false, err
		}
		before, next := map[string][]byte{}, map[string][]byte{} // by New
		var order []string
		for _, p := range pairs {
			if p.Old == p.New {
				continue
			}
			src, err := v.note(ctx, p.Old)
			if err != nil {
				return false, err
			}
			if src == nil {
				continue
			}
			dst, seen := next[p.New]
			if !seen {
				if dst, err = v.note(ctx, p.New); err != nil {
					return false, err
				}
				before[p.New] = dst
				order = append(order, p.New)
			}
			if dst == nil {
				dst = src
			} else {
				dst, _ = union(dst, splitLines(src))
			}
			next[p.New] = dst
		}
		changed = 0
		for _, key := range order {
			if bytes.Equal(before[key], next[key]) {
				continue
			}
			if err := v.set(key, next[key]); err != nil {
				return false, err
			}
			changed++
		}
		return changed > 0, nil
	})
	if err != nil {
		return 0, err
	}
	return changed, nil
}

// edit applies change to the notes tree at notesRef's tip and commits the
// result, moving the ref by compare-and-swap; on a lost race it starts over
// from the new tip. change reports whether it changed anything.
func edit(ctx context.Context, repo *gitext.Repo, notesRef string, change func(*view) (bool, error)) error {
	if err := checkRef(notesRef); err != nil {
		return err
	}
	o := newObjects(repo)
	defer o.close()
	sig, err := signature()
	if err != nil {
		return err
	}
	err = update(ctx, repo, notesRef, sig, func(tip string) (string, error) {
		tree := ""
		if tip != "" {
			var err error
			if tree, err = o.commitTree(ctx, tip); err != nil {
				return "", err
			}
		}
		v, err := newView(ctx, o, tree)
		if err != nil {
			return "", err
		}
		if changed, err := change(v); err != nil || !changed {
			return "", err
		}
		if tree, err = v.write(ctx); err != nil {
			return "", err
		}
		return o.commit(tree, sig, "Notes added by 'git crucible'\n", tip)
	})
	// No git gc --auto here: notes are written from the post-commit and
	// post-rewrite hooks, and the git command that runs them (commit,
	// rebase, am) runs auto maintenance itself; the next one packs the
	// few objects a note adds.
	return err
}

// update moves ref to the commit next makes of its current tip ("" leaves
// it alone) with a compare-and-swap, starting over when another writer
// moved it first. The move is made in process when git would do nothing
// more (gitext.MoveRef, its reflog entry signed sig); else git's start-up
// overlaps building the notes commit: a commit's post-commit hook waits
// for both.
func update(ctx context.Context, repo *gitext.Repo, ref, sig string, next func(tip string) (string, error)) error {
	const reason = "notes: crucible"
	return gitext.RetryCAS(ctx, func() error {
		var tx *gitext.RefTx
		if !repo.MovableHere(ref) {
			var err error
			if tx, err = repo.BeginRefs(ctx, reason); err != nil {
				return err
			}
			defer tx.Abort()
		}
		tip, err := repo.ReadRef(ref)
		if err != nil {
			return err
		}
		to, err := next(tip)
		if err != nil || to == "" {
			return err
		}
		u := gitext.RefUpdate{Name: ref, Old: tip, New: to}
		if tx != nil {
			return tx.Commit(u)
		}
		return repo.MoveRef(ctx, reason, sig, u)
	})
}

// signature signs a notes commit, and the move of the notes ref to it, as
// git-crucible's at gitext.Now().
func signature() (string, error) {
	now, err := gitext.Now()
	if err != nil {
		return "", err
	}
	return gitext.Signature(authorName, authorEmail, now), nil
}

// commit writes a notes commit signed sig, a gitext.Signature.
func (o *objects) commit(tree, sig, message string, parents ...string) (string, error) {
	c := gitext.Commit{Tree: tree, Author: sig, Committer: sig, Message: message}
	for _, p := range parents {
		if p != "" {
			c.Parents = append(c.Parents, p)
		}
	}
	return o.repo.WriteObject("commit", c.Encode())
}

// splitLines cuts a note into its lines, without their newlines.
func splitLines(note []byte) [][]byte {
	if len(note) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(note, []byte("\n")), []byte("\n"))
}

// union returns note with the lines it lacks appended, each once, and
// whether it added any.
func union(note []byte, lines [][]byte) ([]byte, bool) {
	have := map[string]bool{}
	for _, l := range splitLines(note) {
		have[string(l)] = true
	}
	out := note
	for _, l := range lines {
		if have[string(l)] {
			continue
		}
		have[string(l)] = true
		if len(out) == len(note) {
			out = append([]byte(nil), note...)
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
		}
		out = append(append(out, l...), '\n')
	}
	return out, len(out) != len(note)
}

// checkObject accepts a full lowercase object id of the repository's format.
func checkObject(repo *gitext.Repo, id string) error {
	if !repo.ValidOID(id) {
		return fmt.Errorf("not a full object id: %q", id)
	}
	return nil
}

// checkRef accepts a well-formed ref under refs/notes/ (git's rewrite and
// display rules only know notes there).
func checkRef(name string) error {
	if !strings.HasPrefix(name, "refs/notes/") {
		return fmt.Errorf("notes ref %q is not under refs/notes/", name)
	}
	return gitext.CheckRefName(name)
}
