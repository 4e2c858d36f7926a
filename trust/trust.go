// Package trust keeps the user's consent to run commands named in a file
// the repository tracks: a file is trusted only in the exact content the
// user reviewed, so a pull request that edits it runs nothing on a
// teammate's machine until they look again. Consent lives in the
// repository's local state under the common git dir, which is never pushed
// and which linked worktrees share.
package trust

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
)

// Entry is one trusted file: its path from the top of the work tree, the
// SHA-256 of the content trusted, and when.
type Entry struct {
	Path string    `json:"path"`
	Hash string    `json:"sha256"`
	Time time.Time `json:"time"`
}

// Untrusted is a file whose content the user has not trusted. It names the
// hashes, never the content.
type Untrusted struct {
	Path     string `json:"path"`
	Hash     string `json:"sha256"`             // of the content found
	Recorded string `json:"recorded,omitempty"` // of the content trusted before, "" if never
}

func (u *Untrusted) Error() string {
	if u.Recorded == "" {
		return fmt.Sprintf("%s is not trusted: it names commands to run and nobody trusted it here", u.Path)
	}
	return fmt.Sprintf("%s changed since it was trusted (trusted sha256 %s, now %s)", u.Path, short(u.Recorded), short(u.Hash))
}

func short(h string) string { return h[:min(12, len(h))] }

// Hash is the hex SHA-256 of content, as entries record it.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// File is where a repository keeps its trust entries.
func File(repo *gitext.Repo) string { return filepath.Join(repo.CrucibleDir(), "trust") }

// Check says whether content, read from path (relative to the top of the
// work tree), is what the user trusted: nil, or an *Untrusted wrapped as a
// refusal.
func Check(repo *gitext.Repo, p string, content []byte) error {
	p, err := clean(p)
	if err != nil {
		return err
	}
	entries, err := List(repo)
	if err != nil {
		return err
	}
	u := &Untrusted{Path: p, Hash: Hash(content)}
	for _, e := range entries {
		if e.Path == p {
			if e.Hash == u.Hash {
				return nil
			}
			u.Recorded = e.Hash
		}
	}
	return &outcome.Refused{Err: u}
}

// Record trusts content at path, replacing what was trusted there before.
func Record(repo *gitext.Repo, p string, content []byte) (Entry, error) {
	p, err := clean(p)
	if err != nil {
		return Entry{}, err
	}
	now, err := gitext.Now()
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Path: p, Hash: Hash(content), Time: now.UTC().Truncate(time.Second)}
	return e, update(repo, func(entries []Entry) []Entry {
		entries = slices.DeleteFunc(entries, func(old Entry) bool { return old.Path == p })
		return append(entries, e)
	})
}

// Revoke forgets path's entry and says whether there was one.
func Revoke(repo *gitext.Repo, p string) (bool, error) {
	p, err := clean(p)
	if err != nil {
		return false, err
	}
	found := false
	err = update(repo, func(entries []Entry) []Entry {
		n := len(entries)
		entries = slices.DeleteFunc(entries, func(old Entry) bool { return old.Path == p })
		found = len(entries) < n
		return entries
	})
	return found, err
}

// List returns the entries, sorted by path.
func List(repo *gitext.Repo) ([]Entry, error) {
	b, err := os.ReadFile(File(repo))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", File(repo), err)
	}
	return entries, nil
}

const header = "# git-crucible trust: files whose exact content may name commands to run\n" +
	"# <sha256> <time> <path>; written by 'git crucible trust'\n"

// parse reads the entries file: one "<sha256> <RFC 3339 time> <path>" a
// line, the path last so that it may hold spaces.
func parse(b []byte) ([]Entry, error) {
	var entries []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 3)
		if len(fields) != 3 || len(fields[0]) != sha256.Size*2 || strings.Trim(fields[0], "0123456789abcdef") != "" {
			return nil, fmt.Errorf("line %d: not \"<sha256> <time> <path>\"", n)
		}
		t, err := time.Parse(time.RFC3339, fields[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: bad time %q", n, fields[1])
		}
		p, err := clean(fields[2])
		if err != nil || p != fields[2] {
			return nil, fmt.Errorf("line %d: bad path %q", n, fields[2])
		}
		entries = append(entries, Entry{Path: p, Hash: fields[0], Time: t})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return entries, nil
}

func format(entries []Entry) []byte {
	var b strings.Builder
	b.WriteString(header)
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %s %s\n", e.Hash, e.Time.UTC().Format(time.RFC3339), e.Path)
	}
	return []byte(b.String())
}

// update rewrites the entries under a lock, so that two trusting at once
// both count; the file is replaced atomically, so a reader or a kill never
// sees half of it. The lock is an flock, released by the kernel when its
// holder dies.
func update(repo *gitext.Repo, change func([]Entry) []Entry) error {
	if err := os.MkdirAll(repo.CrucibleDir(), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(File(repo)+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	entries, err := List(repo)
	if err != nil {
		return err
	}
	entries = change(entries)
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return fsutil.WriteAtomic(File(repo), format(entries), 0o644)
}

// clean makes p the canonical form entries keep: slash-separated, relative
// to the top of the work tree, inside it, on one line.
func clean(p string) (string, error) {
	c := path.Clean(filepath.ToSlash(p))
	if p == "" || c == "." || path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsAny(c, "\n\r") {
		return "", fmt.Errorf("%q is not a path inside the work tree", p)
	}
	return c, nil
}
