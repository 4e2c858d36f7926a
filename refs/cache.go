package refs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// The cache beside the refs holds a copy of each pipeline's tip, so that a
// hook reads one small file instead of starting git. It is a plain-text
// record, parsed without reflection:
//
//	git-crucible cache 1
//	<pipeline id>
//	<commit>
//	<mode> <object id> <name>     one line per top-level tree entry
//	state <length>
//	<state.json, exactly length bytes>
//
// A copy is trusted only when it is complete, names the ref's current
// commit, and is that commit's content (sound); anything else falls back
// to git and is rewritten.
const cacheMagic = "git-crucible cache 1"

func (s *Store) cachePath(id string) string {
	return filepath.Join(s.repo.CrucibleDir(), "cache", id)
}

// CacheFile is the file beside pipeline id's cache that keeps what ext
// names (cost: its dispatches' cost so far), local and rebuilt from the
// chain when lost.
func (s *Store) CacheFile(id, ext string) string { return s.cachePath(id) + "." + ext }

// encodeCache renders the cache file of h into b, which it resets first.
func encodeCache(b *bytes.Buffer, h *Head) []byte {
	b.Reset()
	fmt.Fprintf(b, "%s\n%s\n%s\n", cacheMagic, h.ID, h.Commit)
	for _, e := range h.Tree {
		fmt.Fprintf(b, "%s %s %s\n", e.Mode, e.OID, e.Name)
	}
	fmt.Fprintf(b, "state %d\n", len(h.State))
	b.Write(h.State)
	return b.Bytes()
}

// decodeCache returns the cached head, or nil when the copy is not complete.
func decodeCache(b []byte) *Head {
	line := func() string {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			b = nil
			return ""
		}
		l := string(b[:i])
		b = b[i+1:]
		return l
	}
	if line() != cacheMagic {
		return nil
	}
	h := &Head{ID: line(), Commit: line()}
	for {
		l := line()
		if n, ok := strings.CutPrefix(l, "state "); ok {
			// Only the length encodeCache writes: "03" or "+3" is not a copy of ours.
			if n != strconv.Itoa(len(b)) || h.ID == "" || h.Commit == "" {
				return nil
			}
			h.State = b
			return h
		}
		mode, rest, ok1 := strings.Cut(l, " ")
		oid, name, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 {
			return nil
		}
		h.Tree = append(h.Tree, gitext.TreeEntry{Mode: mode, OID: oid, Name: name})
	}
}

// sound says whether the cached head h is its commit as the object store
// holds it: its tree entries hash to the commit's tree, and its state to
// the tree's state.json. The cache is a file that anyone who can write the
// git dir can write, an agent with a shell among them: a copy that merely
// names the current commit would let it choose the state a hook judges.
// The commit is read in process, loose or packed (after a gc); one stored
// where only git reads it (an alternate) is not judged here (false): git
// reads the head then.
func (s *Store) sound(h *Head) bool {
	kind, data, err := s.repo.ReadStored(h.Commit) // its content hashes to h.Commit
	if err != nil || kind != "commit" {
		return false
	}
	c, err := gitext.DecodeCommit(data)
	if err != nil {
		return false
	}
	tree, err := gitext.EncodeTree(h.Tree)
	if err != nil || s.repo.HashObject("tree", tree) != c.Tree {
		return false
	}
	for _, e := range h.Tree {
		if e.Name == StateFile {
			return s.repo.HashObject("blob", h.State) == e.OID
		}
	}
	return false
}

// writeCache is best effort: a missing or stale cache only costs a git read.
// The copy is written in place, not renamed in: a reader that catches it
// half-written sees a wrong length and falls back, and a new file on every
// append would cost more than the write.
func (s *Store) writeCache(h *Head) {
	s.last = h
	writeInPlace(s.cachePath(h.ID), encodeCache(&s.cacheBuf, h))
}

// writeInPlace overwrites a cache file, best effort.
func writeInPlace(path string, data []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if os.IsNotExist(err) && os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return
	}
	f.Write(data)
	f.Close()
}

// verifiedPath holds the newest commit of pipeline id's chain that a full
// replay found sound, so that later audits replay only what came after.
func (s *Store) verifiedPath(id string) string { return s.cachePath(id) + ".verified" }

// Verified returns the commit SetVerified recorded for pipeline id, or "".
func (s *Store) Verified(id string) string {
	b, err := os.ReadFile(s.verifiedPath(id))
	if err != nil {
		return ""
	}
	oid := strings.TrimSpace(string(b))
	if !s.repo.ValidOID(oid) {
		return ""
	}
	return oid
}

// SetVerified records that pipeline id's chain is sound up to commit.
func (s *Store) SetVerified(id, commit string) error {
	return fsutil.WriteAtomic(s.verifiedPath(id), []byte(commit+"\n"), 0o644)
}
