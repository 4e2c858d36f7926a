package refs

import (
	"context"
	"fmt"
	"slices"

	"github.com/git-crucible/git-crucible/gitext"
)

// ChainCommit is one commit of a chain, as Walk yields it.
type ChainCommit struct {
	OID     string
	Commit  *gitext.Commit
	Entries []gitext.TreeEntry
	// Children is how many of the walked commits name this one as a
	// parent: once that many were yielded, none to come refers to it.
	Children int
	files    map[string]blob // read ahead by WalkFrom
}

type blob struct {
	data []byte
	err  error
}

// File returns the content of the blob name at the top of the commit's
// tree, one of those the walk was asked to read ahead.
func (c *ChainCommit) File(name string) ([]byte, error) {
	b, ok := c.files[name]
	if !ok {
		return nil, fmt.Errorf("no %s read in commit %s", name, short(c.OID))
	}
	return b.data, b.err
}

// Walk yields pipeline id's commits oldest first, every parent before its
// children (both sides of a merge included), until fn returns false or an
// error.
func (s *Store) Walk(ctx context.Context, id string, fn func(*ChainCommit) (bool, error)) error {
	tip, err := s.Tip(id)
	if err != nil {
		return err
	}
	return s.WalkFrom(ctx, gitext.RevSet{Include: []string{tip}}, nil, fn)
}

// WalkFrom is Walk of the commits of set: from any commit (a chain fetched
// from a remote), and not into excluded ones. The blobs of the top-level
// files named in read come with each commit (ChainCommit.File). Objects
// are requested many at a time, ahead of their answers, and a blob the
// commit before had is not read again.
func (s *Store) WalkFrom(ctx context.Context, set gitext.RevSet, read []string, fn func(*ChainCommit) (bool, error)) error {
	// Each commit's tree comes with it, so that cat-file is asked for
	// object ids only and does not parse every commit again to peel it.
	list, err := s.repo.RevList(ctx, set, gitext.ParentsFirst)
	if err != nil {
		return err
	}
	r, err := s.Objects(ctx)
	if err != nil {
		return err
	}
	oids, trees := make([]string, len(list)), make([]string, len(list))
	children := map[string]int{}
	for i, c := range list {
		oids[i], trees[i] = c.ID, c.Tree
		for _, p := range c.Parents {
			children[p]++
		}
	}
	// The next commits are read while fn looks at these: git and the
	// caller each get a core.
	chunks := make(chan walkChunk, 1)
	done := make(chan struct{})
	go s.readAhead(r, oids, trees, children, read, chunks, done)
	defer func() {
		close(done)
		for range chunks { // wait for the reader to stop
		}
	}()
	for chunk := range chunks {
		if chunk.err != nil {
			return chunk.err
		}
		for _, c := range chunk.commits {
			if more, err := fn(c); err != nil || !more {
				return err
			}
		}
	}
	return nil
}

type walkChunk struct {
	commits []*ChainCommit
	err     error
}

// readAhead reads the commits oids, their trees (trees[i] is oids[i]'s)
// and the files named in read, walkAhead commits at a time, and sends them
// on chunks until done is closed.
func (s *Store) readAhead(r *gitext.ObjectReader, oids, trees []string, children map[string]int, read []string, chunks chan<- walkChunk, done <-chan struct{}) {
	defer close(chunks)
	var kept map[string]blob // by blob id: the last commit's files
	for len(oids) > 0 {
		n := min(len(oids), walkAhead)
		commits, err := s.readCommits(r, oids[:n], trees[:n])
		oids, trees = oids[n:], trees[n:]
		if err == nil {
			kept, err = readFiles(r, commits, read, kept)
		}
		for _, c := range commits {
			if c != nil {
				c.Children = children[c.OID]
			}
		}
		select {
		case chunks <- walkChunk{commits, err}:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// walkAhead is how many commits WalkFrom reads before yielding them.
const walkAhead = 64

// readCommits reads chain commits and their top-level trees, trees[i]
// being the tree of oids[i].
func (s *Store) readCommits(r *gitext.ObjectReader, oids, trees []string) ([]*ChainCommit, error) {
	revs := make([]string, 0, 2*len(oids))
	for i, oid := range oids {
		revs = append(revs, oid, trees[i])
	}
	commits := make([]*ChainCommit, len(oids))
	err := r.ReadEach(revs, func(i int, kind string, data []byte, err error) (bool, error) {
		oid := oids[i/2]
		want := "commit"
		if i%2 == 1 {
			want = "tree"
		}
		if err == nil && kind != want {
			err = fmt.Errorf("%s is a %s, not a %s", revs[i], kind, want)
		}
		if err != nil {
			return false, err
		}
		if i%2 == 0 {
			c, err := gitext.DecodeCommit(data)
			if err != nil {
				return false, fmt.Errorf("%s: %w", short(oid), err)
			}
			if c.Tree != revs[i+1] {
				return false, fmt.Errorf("%s: tree %s, but git rev-list said %s", short(oid), c.Tree, revs[i+1])
			}
			commits[i/2] = &ChainCommit{OID: oid, Commit: c}
			return true, nil
		}
		entries, err := gitext.DecodeTree(data, s.repo.HashLen())
		if err != nil {
			return false, fmt.Errorf("tree of %s: %w", short(oid), err)
		}
		commits[i/2].Entries = entries
		return true, nil
	})
	return commits, err
}

// readFiles gives each commit the blobs of its files named in names,
// reading each distinct blob once; kept holds blobs already read. It
// returns the blobs of the last commit, to keep for the next commits.
func readFiles(r *gitext.ObjectReader, commits []*ChainCommit, names []string, kept map[string]blob) (map[string]blob, error) {
	if len(names) == 0 {
		return nil, nil
	}
	have := map[string]blob{}
	for oid, b := range kept {
		have[oid] = b
	}
	var need []string
	for _, c := range commits {
		for _, e := range c.Entries {
			if !slices.Contains(names, e.Name) {
				continue
			}
			if _, ok := have[e.OID]; !ok {
				have[e.OID] = blob{}
				need = append(need, e.OID)
			}
		}
	}
	err := r.ReadEach(need, func(i int, kind string, data []byte, err error) (bool, error) {
		if err == nil && kind != "blob" {
			err = fmt.Errorf("%s is a %s, not a blob", need[i], kind)
		}
		have[need[i]] = blob{data: data, err: err}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	last := map[string]blob{}
	for _, c := range commits {
		c.files = map[string]blob{}
		for _, e := range c.Entries {
			if slices.Contains(names, e.Name) {
				c.files[e.Name] = have[e.OID]
			}
		}
	}
	for _, e := range commits[len(commits)-1].Entries {
		if slices.Contains(names, e.Name) {
			last[e.OID] = have[e.OID]
		}
	}
	return last, nil
}

// EventLog yields pipeline id's commits from the tip back to the root, each
// with its events.jsonl, until fn returns false or an error. Every commit
// comes before its parents and both sides of a merge are visited. It walks
// from the tip as it goes, so the first commits cost the same whatever the
// chain's length: only a merge asks git for the commits its other parents
// bring, and those come first, then the first parent's line.
func (s *Store) EventLog(ctx context.Context, id string, fn func(commit string, events []byte) (bool, error)) error {
	tip, err := s.Tip(id)
	if err != nil {
		return err
	}
	r, err := s.Objects(ctx)
	if err != nil {
		return err
	}
	for next := tip; next != ""; {
		oid := next
		var c *gitext.Commit
		var events []byte
		err := r.ReadEach([]string{oid, oid + ":" + EventsFile}, func(i int, kind string, data []byte, err error) (bool, error) {
			if err != nil {
				return false, fmt.Errorf("commit %s: %w", short(oid), err)
			}
			if i == 1 {
				events, err = blobOf(oid+":"+EventsFile, kind, data)
				return true, err
			}
			if kind != "commit" {
				return false, fmt.Errorf("%s is a %s, not a commit", oid, kind)
			}
			c, err = gitext.DecodeCommit(data)
			if err != nil {
				return false, fmt.Errorf("%s: %w", short(oid), err)
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		if more, err := fn(oid, events); err != nil || !more {
			return err
		}
		next = ""
		if len(c.Parents) > 0 {
			next = c.Parents[0]
		}
		if len(c.Parents) > 1 {
			sides := gitext.RevSet{Include: c.Parents[1:], Exclude: c.Parents[:1]}
			if more, err := s.eventLog(ctx, sides, gitext.ChildrenFirst, fn); err != nil || !more {
				return err
			}
		}
	}
	return nil
}

func blobOf(rev, kind string, data []byte) ([]byte, error) {
	if kind != "blob" {
		return nil, fmt.Errorf("%s is a %s, not a blob", rev, kind)
	}
	return data, nil
}

// eventLog reads the events.jsonl of each commit of set, in order; it
// reports whether fn asked for more.
func (s *Store) eventLog(ctx context.Context, set gitext.RevSet, order gitext.RevOrder, fn func(commit string, events []byte) (bool, error)) (bool, error) {
	commits, err := s.repo.RevListIDs(ctx, set, order)
	if err != nil {
		return false, err
	}
	r, err := s.Objects(ctx)
	if err != nil {
		return false, err
	}
	revs := make([]string, len(commits))
	for i, c := range commits {
		revs[i] = c + ":" + EventsFile
	}
	more := true
	err = r.ReadEach(revs, func(i int, kind string, data []byte, err error) (bool, error) {
		if err == nil {
			data, err = blobOf(revs[i], kind, data)
		}
		if err != nil {
			return false, fmt.Errorf("commit %s: %w", short(commits[i]), err)
		}
		more, err = fn(commits[i], data)
		return more, err
	})
	return more, err
}

// Events yields the events.jsonl of every commit of set (e.g. tip, without
// base's), in no particular order, until fn returns false or an error.
// Merge commits record none and yield an empty blob.
func (s *Store) Events(ctx context.Context, set gitext.RevSet, fn func(commit string, events []byte) (bool, error)) error {
	_, err := s.eventLog(ctx, set, gitext.NewestFirst, fn)
	return err
}

// EventsSince reads pipeline id's chain from its tip back along first
// parents to commit since, and returns the tip and the events.jsonl of
// each commit after since, newest first. found is false (and blobs nil)
// when since is "", is not on that line, or a merge stands between it and
// the tip: the caller reads the whole chain then (EventLog).
func (s *Store) EventsSince(ctx context.Context, id, since string) (tip string, blobs [][]byte, found bool, err error) {
	tip, err = s.Tip(id)
	if err != nil || since == "" || tip == since {
		return tip, nil, tip == since && since != "", err
	}
	r, err := s.Objects(ctx)
	if err != nil {
		return "", nil, false, err
	}
	for next := tip; next != since; {
		oid := next
		var c *gitext.Commit
		err := r.ReadEach([]string{oid, oid + ":" + EventsFile}, func(i int, kind string, data []byte, err error) (bool, error) {
			if err != nil {
				return false, fmt.Errorf("commit %s: %w", short(oid), err)
			}
			if i == 1 {
				b, err := blobOf(oid+":"+EventsFile, kind, data)
				blobs = append(blobs, b)
				return true, err
			}
			if kind != "commit" {
				return false, fmt.Errorf("%s is a %s, not a commit", oid, kind)
			}
			c, err = gitext.DecodeCommit(data)
			if err != nil {
				return false, fmt.Errorf("%s: %w", short(oid), err)
			}
			return true, nil
		})
		if err != nil {
			return "", nil, false, err
		}
		if len(c.Parents) != 1 {
			return tip, nil, false, nil // the root, or a merge: read it all
		}
		next = c.Parents[0]
	}
	return tip, blobs, true, nil
}
