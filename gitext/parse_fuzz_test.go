package gitext

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// FuzzDecodeTree: any bytes decode without a panic, in either hash length;
// a tree git's own walk reads (git ls-tree of the same object, written with
// hash-object --literally) we read entry for entry; and a tree in git's
// order encodes back to its bytes.
func FuzzDecodeTree(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzDecodeTree (both hash lengths, every kind of entry, refused ones).
	repos := fuzzRepos(f)
	f.Fuzz(func(t *testing.T, data []byte, sha256 bool) {
		hashLen := map[bool]int{false: 20, true: 32}[sha256]
		entries, err := DecodeTree(data, hashLen)
		if err == nil && len(entries) > 0 {
			if enc, err := EncodeTree(entries); err == nil && len(enc) == len(data) && !bytes.Equal(enc, data) && inGitOrder(entries) {
				t.Fatalf("round trip changed the tree:\n%q\n%q", data, enc)
			}
		}
		cmd := exec.Command("git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
		cmd.Dir, cmd.Stdin = repos[sha256], bytes.NewReader(data)
		oid, herr := cmd.Output()
		if herr != nil {
			t.Fatalf("hash-object --literally: %v", herr)
		}
		cmd = exec.Command("git", "ls-tree", "-z", strings.TrimSpace(string(oid)))
		cmd.Dir = repos[sha256]
		out, gerr := cmd.Output()
		if gerr != nil {
			return // git refuses it; we may be no stricter than we are
		}
		if err != nil {
			t.Fatalf("git reads %q, we refuse it: %v", out, err)
		}
		var got strings.Builder
		for _, e := range entries {
			mode, _ := strconv.ParseUint(e.Mode, 8, 32)
			kind := "blob"
			switch canonMode(mode) {
			case 0o40000:
				kind = "tree"
			case 0o160000:
				kind = "commit"
			}
			got.WriteString(strconv.FormatUint(canonMode(mode)|1<<30, 8)[5:] + " " + kind + " " + e.OID + "\t" + e.Name + "\x00")
		}
		if got.String() != string(out) {
			t.Fatalf("git reads\n%q\nwe read\n%q", out, got.String())
		}
	})
}

// fuzzRepos are a hermetic repository of each object format, by whether
// it is SHA-256's.
func fuzzRepos(f *testing.F) map[bool]string {
	gittest.Hermetic(f)
	repos := map[bool]string{}
	for _, sha256 := range []bool{false, true} {
		dir := f.TempDir()
		gittest.Git(f, dir, "init", "-q", "--object-format="+map[bool]string{false: "sha1", true: "sha256"}[sha256])
		repos[sha256] = dir
	}
	return repos
}

func inGitOrder(entries []TreeEntry) bool {
	key := func(e TreeEntry) string {
		if e.IsTree() {
			return e.Name + "/"
		}
		return e.Name
	}
	for i := 1; i < len(entries); i++ {
		if key(entries[i-1]) >= key(entries[i]) {
			return false
		}
	}
	return true
}

// FuzzCheckRefName: CheckRefName never accepts a name git check-ref-format
// refuses, and refuses a full name under refs/ git accepts only for the
// reasons it documents.
func FuzzCheckRefName(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzCheckRefName.
	f.Fuzz(func(t *testing.T, name string) {
		ours := CheckRefName(name) == nil
		if strings.ContainsRune(name, 0) {
			if ours {
				t.Fatalf("%q accepted", name)
			}
			return
		}
		theirs := exec.Command("git", "check-ref-format", name).Run() == nil
		if ours && !theirs {
			t.Fatalf("%q: we accept it, git refuses it", name)
		}
		if theirs && !ours && strings.HasPrefix(name, "refs/") && !strings.HasSuffix(name, "/") {
			t.Fatalf("%q: git accepts it, we refuse it", name)
		}
	})
}

// FuzzParseDate: ParseDate never panics, and any date it reads, git reads
// as the same instant and zone (git var GIT_COMMITTER_IDENT, which parses
// GIT_COMMITTER_DATE as a commit would).
func FuzzParseDate(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzParseDate, with what the fuzzer found Go and git read apart.
	gittest.Hermetic(f)
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseDate(s)
		if err != nil || strings.ContainsRune(s, 0) {
			return
		}
		cmd := exec.Command("git", "var", "GIT_COMMITTER_IDENT")
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+s)
		out, gerr := cmd.Output()
		if gerr != nil {
			t.Fatalf("%q: we read %v, git refuses it: %v", s, tm, gerr)
		}
		fields := strings.Fields(string(out))
		want := fields[len(fields)-2] + " " + fields[len(fields)-1]
		if got := strconv.FormatInt(tm.Unix(), 10) + " " + tm.Format("-0700"); got != want {
			t.Fatalf("%q: we read %s (%v), git %s", s, got, tm.Format(time.RFC3339), want)
		}
	})
}

// TestDecodeTreeRefuses what git's tree walk refuses.
func TestDecodeTreeRefuses(t *testing.T) {
	oid := string(bytes.Repeat([]byte{1}, 20))
	for _, bad := range []string{"100644 \x00" + oid, " a\x00" + oid, "10064x a\x00" + oid, "100644 a\x00" + oid[:19]} {
		if e, err := DecodeTree([]byte(bad), 20); err == nil {
			t.Errorf("%q read as %v", bad, e)
		}
	}
}
