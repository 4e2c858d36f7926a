package refs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Layout of a chain commit's tree.
const (
	FormatFile = "format"
	EventsFile = "events.jsonl"
	// FormatV1 is the content of FormatFile of the chains earlier versions
	// wrote, whose state.json holds every task's entries.
	FormatV1 = "git-crucible pipeline 1\n"
	// FormatV2 is the content of FormatFile this version writes: state.json
	// leaves the entries of each task to the files of a directory beside it
	// (the pipeline package's state format 2). A chain begun in FormatV1
	// says FormatV2 from the first commit this version appends on.
	FormatV2 = "git-crucible pipeline 2\n"
)

// ErrNoPipeline says a pipeline id has no ref.
var ErrNoPipeline = errors.New("no such pipeline")

// Identity signs chain commits.
type Identity struct{ Name, Email string }

// Store reads and appends pipeline chains in one repository.
type Store struct {
	repo   *gitext.Repo
	reader *gitext.ObjectReader // started on first need
	// last is the head this store read or wrote last, kept in memory
	// besides the cache file: an engine reads the head it has just written
	// before every append, and the file costs as much as its state.json.
	last *Head
	// cacheBuf is where writeCache renders the cache file, reused: it is
	// as large as the state.
	cacheBuf bytes.Buffer
	// gc is what AutoGC read of the configuration at the first append
	// that needed it.
	gc gitext.GCConfig
}

// Open returns a store on repo; Close releases it.
func Open(repo *gitext.Repo) *Store { return &Store{repo: repo} }

// Close stops the object reader, if one was started.
func (s *Store) Close() error {
	if s.reader == nil {
		return nil
	}
	return s.reader.Close()
}

// Objects returns the store's object reader.
func (s *Store) Objects(ctx context.Context) (*gitext.ObjectReader, error) {
	if s.reader == nil {
		r, err := s.repo.NewObjectReader(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		s.reader = r
	}
	return s.reader, nil
}

// Head is the tip of a pipeline chain: its commit, top-level tree and the
// state.json carried in it. Commit is "" for a pipeline not yet created.
type Head struct {
	ID     string             `json:"id"`
	Commit string             `json:"commit"`
	Tree   []gitext.TreeEntry `json:"tree"`
	State  json.RawMessage    `json:"state"`
}

// StateFile is the derived summary every commit carries, and what hot paths
// read. It must be JSON: the cache embeds it as is.
const StateFile = "state.json"

// Head returns pipeline id's tip. It reads the local cache beside the ref
// and trusts it only while it names the ref's current commit and is that
// commit's content; otherwise it reads the commit with git and rewrites
// the cache.
func (s *Store) Head(ctx context.Context, id string) (*Head, error) {
	oid, err := s.Tip(id)
	if err != nil {
		return nil, err
	}
	return s.headAt(ctx, id, oid)
}

// Tip returns the commit pipeline id's ref names; ErrNoPipeline when there
// is none.
func (s *Store) Tip(id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	oid, err := s.repo.ReadRef(PipelineRef(id))
	if err != nil {
		return "", err
	}
	if oid == "" {
		return "", fmt.Errorf("%w: %s", ErrNoPipeline, id)
	}
	return oid, nil
}

func (s *Store) headAt(ctx context.Context, id, oid string) (*Head, error) {
	if h := s.last; h != nil && h.Commit == oid && h.ID == id {
		if _, err := os.Stat(s.cachePath(id)); err != nil {
			s.writeCache(h) // for the hooks, which read the file
		}
		return h, nil
	}
	if b, err := fsutil.ReadNoPoll(s.cachePath(id)); err == nil {
		if h := decodeCache(b); h != nil && h.Commit == oid && h.ID == id && s.sound(h) {
			s.last = h
			return h, nil
		}
	}
	h, err := s.readHead(ctx, id, oid)
	if err != nil {
		return nil, err
	}
	s.writeCache(h)
	return h, nil
}

func (s *Store) readHead(ctx context.Context, id, oid string) (*Head, error) {
	_, entries, err := s.ReadCommit(ctx, oid)
	if err != nil {
		return nil, err
	}
	state, err := s.ReadFile(ctx, entries, StateFile)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s at %s: %w", id, short(oid), err)
	}
	return &Head{ID: id, Commit: oid, Tree: entries, State: state}, nil
}

// ReadCommit reads a chain commit and its top-level tree.
func (s *Store) ReadCommit(ctx context.Context, oid string) (*gitext.Commit, []gitext.TreeEntry, error) {
	r, err := s.Objects(ctx)
	if err != nil {
		return nil, nil, err
	}
	data, err := r.ReadKind(oid, "commit")
	if err != nil {
		return nil, nil, err
	}
	c, err := gitext.DecodeCommit(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", short(oid), err)
	}
	tree, err := r.ReadKind(c.Tree, "tree")
	if err != nil {
		return nil, nil, err
	}
	entries, err := gitext.DecodeTree(tree, s.repo.HashLen())
	if err != nil {
		return nil, nil, fmt.Errorf("tree %s: %w", short(c.Tree), err)
	}
	return c, entries, nil
}

// ReadFile returns the blob named name among entries.
func (s *Store) ReadFile(ctx context.Context, entries []gitext.TreeEntry, name string) ([]byte, error) {
	for _, e := range entries {
		if e.Name == name {
			r, err := s.Objects(ctx)
			if err != nil {
				return nil, err
			}
			return r.ReadKind(e.OID, "blob")
		}
	}
	return nil, fmt.Errorf("no %s in the tree", name)
}

// ReadDir returns the blobs of directory dir among entries, by name;
// none when there is no such directory.
func (s *Store) ReadDir(ctx context.Context, entries []gitext.TreeEntry, dir string) (map[string][]byte, error) {
	i := slices.IndexFunc(entries, func(e gitext.TreeEntry) bool { return e.Name == dir })
	if i < 0 {
		return nil, nil
	}
	if !entries[i].IsTree() {
		return nil, fmt.Errorf("%s is a file, not a directory", dir)
	}
	r, err := s.Objects(ctx)
	if err != nil {
		return nil, err
	}
	data, err := r.ReadKind(entries[i].OID, "tree")
	if err != nil {
		return nil, err
	}
	list, err := gitext.DecodeTree(data, s.repo.HashLen())
	if err != nil {
		return nil, fmt.Errorf("tree %s (%s): %w", short(entries[i].OID), dir, err)
	}
	oids := make([]string, len(list))
	for j, e := range list {
		oids[j] = e.OID
	}
	files := make(map[string][]byte, len(list))
	err = r.ReadEach(oids, func(j int, kind string, data []byte, err error) (bool, error) {
		if err == nil {
			data, err = blobOf(dir+"/"+list[j].Name, kind, data)
		}
		files[list[j].Name] = data
		return err == nil, err
	})
	return files, err
}

// Batch is one append: the events it records (canonical JSON, one object
// each, no newline) and the files it (re)writes in the tree.
type Batch struct {
	Events  [][]byte
	Files   map[string][]byte
	Blobs   map[string]string // path -> id of a blob already written (large imports)
	Subject string
}

// Append adds a batch to pipeline id, creating the chain when it does not
// exist. build gets the current head (Commit "" when new) and returns the
// batch; on a lost compare-and-swap it is called again with the new head, so
// it must derive everything from the head it is given.
func (s *Store) Append(ctx context.Context, id string, who Identity, build func(*Head) (*Batch, error)) (*Head, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	ref := PipelineRef(id)
	var next *Head
	err := gitext.RetryCAS(ctx, func() error {
		// git's start-up overlaps reading the head and writing the commit.
		tx, err := s.repo.BeginRefs(ctx, "crucible: append")
		if err != nil {
			return err
		}
		defer tx.Abort()
		old, err := s.repo.ReadRef(ref)
		if err != nil {
			return err
		}
		head := &Head{ID: id}
		if old == "" {
			// A writer that read the pipeline before it was archived
			// must not start a new chain under its id.
			if archived, err := s.IsArchived(id); err != nil || archived {
				if err == nil {
					err = fmt.Errorf("%w: %s (%s)", ErrArchived, id, ArchiveRef(id))
				}
				return err
			}
		} else {
			if head, err = s.headAt(ctx, id, old); err != nil {
				return err
			}
		}
		batch, err := build(head)
		if err != nil {
			return err
		}
		n, tb, err := s.writeCommit(ctx, head, batch, who)
		if err != nil {
			return err
		}
		if err := tx.Commit(gitext.RefUpdate{Name: ref, Old: old, New: n.Commit}); err != nil {
			return err
		}
		s.writeCache(n)
		tb.saveListings()
		next = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Appends come from git-crucible's commands, one after another with no
	// git command of the user's between them to pack what they write.
	s.repo.AutoGC(ctx, &s.gc)
	return next, nil
}

// writeCommit writes the batch's blobs, the trees on their paths and the
// commit object, whose parents are head and merged. The returned builder
// holds the new subtree listings, to be cached once the ref has moved.
func (s *Store) writeCommit(ctx context.Context, head *Head, b *Batch, who Identity, merged ...string) (*Head, *treeBuilder, error) {
	files := map[string][]byte{EventsFile: joinLines(b.Events)}
	if !s.formatIs(head, FormatV2) {
		files[FormatFile] = []byte(FormatV2)
	}
	for name, content := range b.Files {
		files[name] = content
	}
	state, ok := files[StateFile]
	if !ok {
		return nil, nil, errors.New("an append must write " + StateFile)
	}
	tb := s.newTreeBuilder(head)
	entries, tree, err := tb.build(ctx, files, b.Blobs)
	if err != nil {
		return nil, nil, err
	}
	now, err := gitext.Now()
	if err != nil {
		return nil, nil, err
	}
	sig := gitext.Signature(who.Name, who.Email, now)
	c := gitext.Commit{Tree: tree, Author: sig, Committer: sig,
		Message: b.Subject + "\n\nCrucible-Pipeline: " + head.ID + "\n"}
	if head.Commit != "" {
		c.Parents = append([]string{head.Commit}, merged...)
	}
	oid, err := s.repo.WriteObject("commit", c.Encode())
	if err != nil {
		return nil, nil, err
	}
	return &Head{ID: head.ID, Commit: oid, Tree: entries, State: state}, tb, nil
}

// formatIs reports whether head's tree has FormatFile saying format.
func (s *Store) formatIs(head *Head, format string) bool {
	for _, e := range head.Tree {
		if e.Name == FormatFile {
			return e.OID == s.repo.HashObject("blob", []byte(format))
		}
	}
	return false
}

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// List returns every pipeline id, sorted.
func (s *Store) List(ctx context.Context) ([]string, error) {
	refs, err := s.repo.ListRefs(ctx, PipelinePrefix)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, strings.TrimPrefix(r.Name, PipelinePrefix))
	}
	return ids, nil
}

// Active returns the id of the pipeline active on branch, or "".
func (s *Store) Active(branch string) (string, error) {
	target, err := s.repo.ReadSymref(ActiveRef(branch))
	if err != nil || target == "" {
		return "", err
	}
	id, ok := strings.CutPrefix(target, PipelinePrefix)
	if !ok || ValidateID(id) != nil {
		return "", fmt.Errorf("%s points outside %s: %s", ActiveRef(branch), PipelinePrefix, target)
	}
	return id, nil
}

// SetActive makes id the active pipeline of branch, provided old ("" for
// none) still is.
func (s *Store) SetActive(branch, id, old string) error {
	oldTarget := ""
	if old != "" {
		oldTarget = PipelineRef(old)
	}
	return s.repo.SetSymref(ActiveRef(branch), PipelineRef(id), oldTarget)
}
