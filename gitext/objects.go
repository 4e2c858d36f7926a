package gitext

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

func (r *Repo) newHash() hash.Hash {
	if r.Format == "sha256" {
		return sha256.New()
	}
	return sha1.New()
}

// HashObject returns the object id git would give data of the given type.
func (r *Repo) HashObject(kind string, data []byte) string {
	h := r.newHash()
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// EmptyTree is the id of the tree with no entries, which git knows without
// storing it: what an unborn branch's work is measured against. It differs
// between SHA-1 and SHA-256 repositories.
func (r *Repo) EmptyTree() string { return r.HashObject("tree", nil) }

// storedMax is the size up to which a loose object is stored uncompressed
// (git's core.looseCompression=0): a few hundred bytes more on disk until gc
// packs it, where even zlibFixed's table would cost more than most of a
// hook's provenance note's four small objects.
const storedMax = 16 << 10

// WriteObject stores data as a loose object, as git does: compressed into a
// temporary file in the fan-out directory, then renamed into place, so a
// reader (or a kill) never sees half an object.
func (r *Repo) WriteObject(kind string, data []byte) (string, error) {
	oid := r.HashObject(kind, data)
	dir := filepath.Join(r.ObjectDir(), oid[:2])
	final := filepath.Join(dir, oid[2:])
	if _, err := os.Stat(final); err == nil {
		// Freshen it so a concurrent prune of old loose objects spares it.
		now := time.Now()
		_ = os.Chtimes(final, now, now)
		return oid, nil
	}
	// Compress in memory first: one write, and nothing on disk if it fails.
	in := fmt.Appendf(make([]byte, 0, len(data)+32), "%s %d\x00", kind, len(data))
	in = append(in, data...)
	var z []byte
	if len(in) <= storedMax {
		z = zlibStored(in)
	} else {
		z = zlibFixed(in)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := createTemp(dir, "tmp_obj_", 0o444) // read-only, as git leaves objects
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(z)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return oid, nil
}

// zlibReaders recycles decompressors for ReadLoose.
var zlibReaders sync.Pool

// ReadLoose reads object oid in process when it is stored loose, and checks
// that its content hashes to oid. It returns ErrMissing when it is not loose
// (it may be packed or in an alternate: ask an ObjectReader), so that a hook
// reading objects it has just written starts no git process.
func (r *Repo) ReadLoose(oid string) (kind string, data []byte, err error) {
	if !r.ValidOID(oid) {
		return "", nil, fmt.Errorf("invalid object id %q", oid)
	}
	raw, err := fsutil.ReadNoPoll(filepath.Join(r.ObjectDir(), oid[:2], oid[2:]))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("%s: %w", oid, ErrMissing)
	}
	if err != nil {
		return "", nil, err
	}
	zr, _ := zlibReaders.Get().(io.ReadCloser)
	if zr == nil {
		zr, err = zlib.NewReader(bytes.NewReader(raw))
	} else {
		err = zr.(zlib.Resetter).Reset(bytes.NewReader(raw), nil)
	}
	if err != nil {
		return "", nil, fmt.Errorf("loose object %s: %w", oid, err)
	}
	defer zlibReaders.Put(zr)
	var buf bytes.Buffer
	buf.Grow(4 * len(raw))
	if _, err := buf.ReadFrom(zr); err != nil {
		return "", nil, fmt.Errorf("loose object %s: %w", oid, err)
	}
	header, body, ok := bytes.Cut(buf.Bytes(), []byte{0})
	k, size, ok2 := strings.Cut(string(header), " ")
	if n, err := strconv.Atoi(size); !ok || !ok2 || err != nil || n != len(body) {
		return "", nil, fmt.Errorf("loose object %s is corrupt", oid)
	}
	if r.HashObject(k, body) != oid {
		return "", nil, fmt.Errorf("loose object %s does not match its name", oid)
	}
	return k, body, nil
}

// createTemp is os.CreateTemp with a mode, so no chmod is needed after.
func createTemp(dir, prefix string, mode os.FileMode) (*os.File, error) {
	for {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
}

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Mode string // "100644", "100755", "120000", "40000", "160000"
	Name string
	OID  string
}

// IsTree reports whether the entry names a subtree.
func (e TreeEntry) IsTree() bool { return e.Mode == "40000" }

// EncodeTree serialises entries in git's order (a tree sorts as if its name
// ended in '/').
func EncodeTree(entries []TreeEntry) ([]byte, error) {
	sorted := append([]TreeEntry(nil), entries...)
	key := func(e TreeEntry) string {
		if e.IsTree() {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	var b bytes.Buffer
	for i, e := range sorted {
		if e.Name == "" || strings.ContainsAny(e.Name, "/\x00") || e.Name == "." || e.Name == ".." {
			return nil, fmt.Errorf("invalid tree entry name %q", e.Name)
		}
		if i > 0 && sorted[i-1].Name == e.Name {
			return nil, fmt.Errorf("duplicate tree entry %q", e.Name)
		}
		raw, err := hex.DecodeString(e.OID)
		if err != nil || (len(raw) != 20 && len(raw) != 32) {
			return nil, fmt.Errorf("invalid object id %q for %q", e.OID, e.Name)
		}
		b.WriteString(e.Mode + " " + e.Name + "\x00")
		b.Write(raw)
	}
	return b.Bytes(), nil
}

// DecodeTree parses a tree object; hashLen is 20 (sha1) or 32 (sha256).
// It refuses what git's tree walk refuses: a mode that is not octal
// digits, an empty name, an entry cut short.
func DecodeTree(data []byte, hashLen int) ([]TreeEntry, error) {
	var out []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul < sp+2 || len(data) < nul+1+hashLen || strings.Trim(string(data[:sp]), "01234567") != "" {
			return nil, errors.New("malformed tree object")
		}
		out = append(out, TreeEntry{Mode: string(data[:sp]), Name: string(data[sp+1 : nul]),
			OID: hex.EncodeToString(data[nul+1 : nul+1+hashLen])})
		data = data[nul+1+hashLen:]
	}
	return out, nil
}

// HashLen is the raw length of the repository's object ids.
func (r *Repo) HashLen() int {
	if r.Format == "sha256" {
		return 32
	}
	return 20
}

// Commit is a commit object. Decoding then encoding one gives back its
// bytes, whatever headers it carries, for any commit git fsck accepts
// (tree, parents, author and committer in that order).
type Commit struct {
	Tree      string
	Parents   []string
	Author    string // "Name <email> 1700000000 +0000"
	Committer string
	// Extra holds the header lines after committer verbatim — encoding,
	// mergetag, gpgsig or any other, continuation lines (" ...") included —
	// so that a signature still verifies after a round trip.
	Extra   string
	Message string
	// NoBody marks a commit that ends with its headers: no blank line
	// and no message, which git accepts.
	NoBody bool
}

// Encode serialises c as a commit object body.
func (c *Commit) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("tree " + c.Tree + "\n")
	for _, p := range c.Parents {
		b.WriteString("parent " + p + "\n")
	}
	b.WriteString("author " + c.Author + "\ncommitter " + c.Committer + "\n" + c.Extra)
	if !c.NoBody {
		b.WriteString("\n" + c.Message)
	}
	return b.Bytes()
}

// DecodeCommit parses a commit object body. It reads as git reads: the
// headers end at the first blank line, the tree comes first and parent
// lines follow it; a commit out of fsck's order still yields its tree and
// message, the headers it could not place going to Extra.
func DecodeCommit(data []byte) (*Commit, error) {
	head, msg, body := strings.Cut(string(data), "\n\n")
	if body {
		head += "\n"
	}
	c := &Commit{Message: msg, NoBody: !body}
	// next takes the whole line "key value\n" off the front of head.
	next := func(key string) (string, bool) {
		rest, ok := strings.CutPrefix(head, key+" ")
		if !ok {
			return "", false
		}
		value, after, ok := strings.Cut(rest, "\n")
		if ok {
			head = after
		}
		return value, ok
	}
	tree, ok := next("tree")
	if !ok || tree == "" {
		return nil, errors.New("malformed commit object: no tree")
	}
	// The ids go on to git as arguments and batch requests: one git would
	// not write (a "--option", a name like HEAD) must stop here.
	if !hexOID(tree) {
		return nil, fmt.Errorf("malformed commit object: tree %q", tree)
	}
	c.Tree = tree
	for {
		p, ok := next("parent")
		if !ok {
			break
		}
		if !hexOID(p) {
			return nil, fmt.Errorf("malformed commit object: parent %q", p)
		}
		c.Parents = append(c.Parents, p)
	}
	c.Author, _ = next("author")
	c.Committer, _ = next("committer")
	c.Extra = head
	return c, nil
}

// ErrMissing is returned for an object the repository does not have.
var ErrMissing = errors.New("object not found")

// ObjectReader reads objects through one long-lived `git cat-file --batch`.
// Safe for use by one goroutine at a time.
type ObjectReader struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// NewObjectReader starts the batch process; Close ends it.
func (r *Repo) NewObjectReader(ctx context.Context) (*ObjectReader, error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Env = Env(r)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run git cat-file: %w", err)
	}
	return &ObjectReader{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 64<<10)}, nil
}

// Read returns the type and content of the object named by rev (an id or any
// revision git accepts, such as "<commit>:state.json").
func (o *ObjectReader) Read(rev string) (kind string, data []byte, err error) {
	if strings.ContainsAny(rev, "\n") {
		return "", nil, fmt.Errorf("invalid object name %q", rev)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := io.WriteString(o.stdin, rev+"\n"); err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	return o.answer(rev)
}

// answer reads cat-file's answer to the request rev.
func (o *ObjectReader) answer(rev string) (kind string, data []byte, err error) {
	header, err := o.stdout.ReadString('\n')
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	fields := strings.Fields(header)
	if len(fields) == 2 && fields[1] == "missing" || len(fields) >= 2 && fields[len(fields)-1] == "ambiguous" {
		return "", nil, fmt.Errorf("%s: %w", rev, ErrMissing)
	}
	if len(fields) != 3 {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	data = make([]byte, size+1)
	if _, err := io.ReadFull(o.stdout, data); err != nil {
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	return fields[1], data[:size], nil
}

// ReadKind is Read that insists on the object's type.
func (o *ObjectReader) ReadKind(rev, kind string) ([]byte, error) {
	k, data, err := o.Read(rev)
	if err != nil {
		return nil, err
	}
	if k != kind {
		return nil, fmt.Errorf("%s is a %s, not a %s", rev, k, kind)
	}
	return data, nil
}

// Close ends the batch process.
func (o *ObjectReader) Close() error {
	o.stdin.Close()
	return o.cmd.Wait()
}
