package gitext

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// fsckOrder is the header order git fsck requires of a commit, the one in
// which DecodeCommit promises a byte-identical round trip.
var fsckOrder = regexp.MustCompile(`^tree [0-9a-f]{40}(?:[0-9a-f]{24})?\n(parent [0-9a-f]{40}(?:[0-9a-f]{24})?\n)*author [^\n]*\ncommitter [^\n]*\n`)

// identity is an author or committer line git and we split alike.
var identity = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9 .]*[A-Za-z0-9])?) <([A-Za-z0-9@.]*)> ([1-9][0-9]{0,9} [+-][0-9]{4})$`)

// FuzzDecodeCommit: any bytes decode without a panic; a commit in fsck's
// header order encodes back to the same bytes, every header kept; and what
// git reads from the same object (written with hash-object --literally) —
// tree, parents, author, committer, encoding, message — is what we read.
func FuzzDecodeCommit(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzDecodeCommit (signed, merged tag, encoding, no body, out of order).
	gittest.Hermetic(f)
	dir := f.TempDir()
	gittest.Git(f, dir, "init", "-q")
	git := func(stdin []byte, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(stdin)
		out, err := cmd.Output()
		return string(out), err
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCommit(data)
		inOrder := fsckOrder.Match(data)
		if err != nil {
			if inOrder {
				t.Fatalf("a commit in fsck's order was refused: %v", err)
			}
			return
		}
		if inOrder && !bytes.Equal(c.Encode(), data) {
			t.Fatalf("round trip changed the commit:\n%q\n%q", data, c.Encode())
		}
		oid, err := git(data, "hash-object", "-t", "commit", "--literally", "-w", "--stdin")
		if err != nil {
			t.Fatalf("hash-object --literally: %v", err)
		}
		oid = strings.TrimSpace(oid)
		out, err := git(nil, "log", "-1", "--no-walk", "--date=raw", "--encoding=none",
			"--format=%T%x00%P%x00%an <%ae> %ad%x00%cn <%ce> %cd%x00%e%x00%B", oid)
		if err != nil {
			if inOrder && isOIDs(append([]string{c.Tree}, c.Parents...)) && !bytes.ContainsRune(data, 0) {
				t.Fatalf("git log cannot read a commit we can: %v", err)
			}
			return // git cannot parse it either (a bad tree or parent line)
		}
		f := strings.SplitN(strings.TrimSuffix(out, "\n"), "\x00", 6)
		if len(f) != 6 {
			t.Fatalf("git log printed %q", out)
		}
		if f[0] != c.Tree || f[1] != strings.Join(c.Parents, " ") {
			t.Fatalf("git reads tree %q parents %q; we read %q %q", f[0], f[1], c.Tree, c.Parents)
		}
		if identity.MatchString(c.Author) && f[2] != c.Author || identity.MatchString(c.Committer) && f[3] != c.Committer {
			t.Fatalf("git reads author %q committer %q; we read %q %q", f[2], f[3], c.Author, c.Committer)
		}
		encoding := ""
		for _, line := range strings.Split(c.Extra, "\n") {
			if v, ok := strings.CutPrefix(line, "encoding "); ok {
				encoding = v
				break
			}
		}
		if inOrder && f[4] != encoding {
			t.Fatalf("git reads encoding %q; we read %q", f[4], encoding)
		}
		// Without a blank line git has no message, and %B prints whatever
		// follows in its buffer.
		if inOrder && !c.NoBody && encoding == "" && !bytes.ContainsRune(data, 0) && f[5] != c.Message {
			t.Fatalf("git reads message %q; we read %q", f[5], c.Message)
		}
	})
}

func isOIDs(ids []string) bool {
	r := &Repo{Format: "sha1"}
	for _, id := range ids {
		if !r.ValidOID(id) {
			return false
		}
	}
	return true
}
