package notes

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

// BenchmarkAppend is one provenance note added on a new object in a
// repository holding 10,000 notes (git's layout: 256 subtrees), packed as
// git gc leaves them, by Append and by git notes append:
//
//   - loose: every tree was rewritten since the gc, so the trees on the
//     path are loose and read in process: the one process started is
//     git update-ref, which moves the ref. Every note after the first since a gc has
//     a loose root; its subtree is loose when an earlier note went there.
//   - packed: the ref is put back on the packed commit before each
//     append, so every append reads packed trees (in process too): the
//     first note after a gc, or one in a subtree untouched since.
//   - git-notes-append: the same note added by git itself.
//
// Run with:
//
//	go test -run '^$' -bench Append -benchmem ./notes
func BenchmarkAppend(b *testing.B) {
	repo, dir := setup(b)
	const ref = "refs/notes/bench"
	start := noted(b, dir, "bench", 10000)
	next := 100000 // objects past the 10,000 noted ones
	line := func() (string, []byte) {
		next++
		return key(next), []byte(fmt.Sprintf(`{"pipeline":"bench","phase":3,"seq":%d}`, next))
	}

	b.Run("loose", func(b *testing.B) {
		// A note in every subtree rewrites them all: loose.
		for _, d := range strings.Fields(gittest.Git(b, dir, "ls-tree", "-r", "-d", "--name-only", ref)) {
			object, l := line()
			prefix := strings.ReplaceAll(d, "/", "")
			if err := Append(ctx, repo, ref, prefix+object[len(prefix):], l); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			object, l := line()
			if err := Append(ctx, repo, ref, object, l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("packed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			resetRef(b, repo, ref, start)
			object, l := line()
			b.StartTimer()
			if err := Append(ctx, repo, ref, object, l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-notes-append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			object, l := line()
			gittest.Git(b, dir, "notes", "--ref=bench", "append", "-m", string(l), object)
		}
	})
}

// noted gives n objects a note in refs/notes/<name>, packs the repository
// as git gc leaves it, and returns the notes commit.
func noted(b *testing.B, dir, name string, n int) string {
	b.Helper()
	gittest.Git(b, dir, "notes", "--ref="+name, "add", "-m", `{"pipeline":"bench","phase":3}`, key(0))
	var stdin strings.Builder
	for i := 1; i < n; i++ {
		fmt.Fprintf(&stdin, "%s %s\n", key(0), key(i))
	}
	cmd := exec.Command("git", "notes", "--ref="+name, "copy", "--stdin")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git notes copy: %v\n%s", err, out)
	}
	gittest.Git(b, dir, "gc", "-q", "--prune=now")
	if got := strings.Count(gittest.Git(b, dir, "notes", "--ref="+name, "list"), "\n") + 1; got != n {
		b.Fatalf("%d notes, want %d", got, n)
	}
	return gittest.Git(b, dir, "rev-parse", "refs/notes/"+name)
}

// BenchmarkAppendScale is one provenance note added among 10 and among
// 10,000, in the same run: with git's fan-out only the root and the
// subtree on the note's path are rewritten, so the two should cost about
// the same (compare their ns/op). Every append starts from the packed
// notes commit, as the first note after a gc does.
//
//	go test -run '^$' -bench AppendScale -benchmem ./notes
func BenchmarkAppendScale(b *testing.B) {
	repo, dir := setup(b)
	for _, n := range []int{10, 10000} {
		name := fmt.Sprintf("scale%d", n)
		ref := "refs/notes/" + name
		start := noted(b, dir, name, n)
		next := 200000
		b.Run(fmt.Sprintf("notes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				resetRef(b, repo, ref, start)
				next++
				b.StartTimer()
				if err := Append(ctx, repo, ref, key(next), []byte(`{"pipeline":"bench","phase":3}`)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// resetRef puts ref back on commit start.
func resetRef(b *testing.B, repo *gitext.Repo, ref, start string) {
	b.Helper()
	tip, err := repo.ReadRef(ref)
	if err == nil {
		err = repo.UpdateRefs(ctx, "bench", gitext.RefUpdate{Name: ref, Old: tip, New: start})
	}
	if err != nil {
		b.Fatal(err)
	}
}
