package enforce

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

var crucible = []Trailer{{TrailerPipeline, "p1"}, {TrailerPhase, "3"}}

func TestAddTrailers(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"subject only", "fix it\n", "fix it\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"},
		{"no final newline", "fix it", "fix it\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"},
		{"body", "fix it\n\nbecause.\n", "fix it\n\nbecause.\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"},
		{"existing block", "fix it\n\nbody\n\nSigned-off-by: A <a@x>\n",
			"fix it\n\nbody\n\nSigned-off-by: A <a@x>\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"},
		{"amend replaces ours", "fix it\n\nCrucible-Pipeline: old\nCrucible-Phase: 2\nSigned-off-by: A <a@x>\n",
			"fix it\n\nSigned-off-by: A <a@x>\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"},
		{"subject looks like a trailer", "fix: it\n", "fix: it\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"},
		{"comments after the text", "fix it\n\n# Please enter the commit message\n#\n",
			"fix it\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n\n# Please enter the commit message\n#\n"},
		{"scissors", "fix it\n#" + scissors + "\n# Do not modify\ndiff --git a/x b/x\nKey: v\n",
			"fix it\n\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n#" + scissors + "\n# Do not modify\ndiff --git a/x b/x\nKey: v\n"},
		{"sign-off only", "\nSigned-off-by: A <a@x>\n# comment\n", "\nSigned-off-by: A <a@x>\n# comment\n"},
		{"empty", "", ""},
		{"only comments", "\n# Please enter the commit message\n", "\n# Please enter the commit message\n"},
		{"only blank lines", "\n\n  \n", "\n\n  \n"},
	}
	for _, c := range cases {
		got, ok := AddTrailers([]byte(c.in), crucible, Style{})
		if string(got) != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if wantOK := c.in != c.want; ok != wantOK {
			t.Errorf("%s: ok %v", c.name, ok)
		}
	}
}

// TestTrailersAsGitReadsThem: what AddTrailers writes, git's own trailer
// parser reads back, after git's message clean-up.
func TestTrailersAsGitReadsThem(t *testing.T) {
	for _, in := range []string{"fix it\n", "fix it\n\nbody text\n", "fix it\n\nbody\n\nSigned-off-by: A <a@x>\n",
		"fix it\n\n# comment\n", "subject\n\nCrucible-Phase: 1\n"} {
		out, _ := AddTrailers([]byte(in), crucible, Style{})
		cmd := exec.Command("git", "interpret-trailers", "--parse")
		cmd.Stdin = bytes.NewReader(out)
		got, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(got), "Crucible-Pipeline: p1\nCrucible-Phase: 3\n") || strings.Count(string(got), "Crucible-Phase") != 1 {
			t.Errorf("%q: git reads trailers %q", in, got)
		}
	}
}

func TestCrucibleLines(t *testing.T) {
	got := CrucibleLines("subject\n\nbody\n\nCrucible-Pipeline: p1\nCrucible-Phase:  3 \nSigned-off-by: A <a@x>\n")
	if len(got) != 2 || got[0] != (Trailer{"Crucible-Pipeline", "p1"}) || got[1] != (Trailer{"Crucible-Phase", "3"}) {
		t.Fatalf("%+v", got)
	}
	// Anywhere in the message, so an odd layout cannot hide a claim.
	if got := CrucibleLines("crucible-pipeline: p2\n\nbody\n"); len(got) != 1 || got[0].Value != "p2" {
		t.Fatalf("in the subject: %+v", got)
	}
	for _, msg := range []string{"Key: subject only\n", "subject\n\nCrucible Pipeline: p1\n", ""} {
		if got := CrucibleLines(msg); got != nil {
			t.Errorf("%q: %+v", msg, got)
		}
	}
}

// FuzzAddTrailers: never panics; a message without text is left alone;
// adding twice is adding once; git reads them back.
func FuzzAddTrailers(f *testing.F) {
	for _, s := range []string{"fix it\n", "a\n\nb\n\nK: v\n", "# c\n", "x\n#" + scissors + "\ny\n", "a\r\n\r\nK: v\r\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		once, ok := AddTrailers([]byte(in), crucible, Style{})
		if !ok {
			if string(once) != in {
				t.Fatalf("changed a message without text: %q", once)
			}
			return
		}
		twice, _ := AddTrailers(once, crucible, Style{})
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent:\n%q\n%q", once, twice)
		}
	})
}

// TestEmptyAsGitSeesIt: the messages git aborts on stay untouched, whatever
// the comment character (hooks_enforce.txtar has git itself abort them).
func TestEmptyAsGitSeesIt(t *testing.T) {
	cases := []struct {
		name  string
		style Style
		msg   string
		empty bool
	}{
		{"semicolon comments", Style{CommentChars: ";"}, "\n; Please enter the commit message\n", true},
		{"semicolon, text", Style{CommentChars: ";"}, "real\n; comment\n", false},
		{"hash is text under ;", Style{CommentChars: ";"}, "# not a comment\n", false},
		{"auto", Style{CommentChars: AutoCommentChars}, "\n@ comment\n", true},
		{"sign-off", Style{}, "\nSigned-off-by: A <a@x>\n", true},
		{"template untouched", Style{Template: "Subject here\n\n# why\n"}, "Subject here\n\n# Please enter\n", true},
		{"template edited", Style{Template: "Subject here\n"}, "Subject there\n", false},
		{"scissors under ;", Style{CommentChars: ";"}, "\n;" + scissors + "\nreal diff text\n", true},
	}
	for _, c := range cases {
		if got := c.style.Empty([]byte(c.msg)); got != c.empty {
			t.Errorf("%s: Empty = %v", c.name, got)
		}
		out, ok := AddTrailers([]byte(c.msg), crucible, c.style)
		if ok == c.empty || (c.empty && string(out) != c.msg) {
			t.Errorf("%s: AddTrailers ok=%v out=%q", c.name, ok, out)
		}
	}
}

// gitTrailers runs git's trailer code on msg: `interpret-trailers` with
// args, in a hermetic environment.
func gitTrailers(t *testing.T, msg []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "trailer.ifexists=replace", "interpret-trailers"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent")
	cmd.Stdin = bytes.NewReader(msg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git interpret-trailers %v: %v", args, err)
	}
	return out
}

// sameTrailersAsGit: on msg, AddTrailers and `git interpret-trailers
// --no-divider` (what `git commit --trailer` runs) leave trailer blocks
// that git reads as the same trailers. Git replaces only the last of
// several lines with one key, and takes a key that starts another ("C"
// for Crucible-Phase) as the same key, deleting the user's line; such
// messages are not compared.
func sameTrailersAsGit(t *testing.T, msg string) {
	if !strings.HasSuffix(msg, "\n") || strings.ContainsRune(msg, 0) {
		return // git ends a message it writes with a newline; NUL ends its strings
	}
	for _, tr := range crucible {
		n := 0
		for _, l := range strings.SplitAfter(msg, "\n") {
			k, _, ok := cutTrailer(l)
			k, key := strings.ToLower(k), strings.ToLower(tr.Key)
			if ok && k == key {
				n++
			}
			if ok && k != key && (strings.HasPrefix(k, key) || strings.HasPrefix(key, k)) {
				return
			}
		}
		if n > 1 {
			return
		}
	}
	ours, ok := AddTrailers([]byte(msg), crucible, Style{})
	if !ok {
		return
	}
	var args []string
	for _, tr := range crucible {
		args = append(args, "--trailer", tr.Key+": "+tr.Value)
	}
	theirs := gitTrailers(t, []byte(msg), append([]string{"--no-divider"}, args...)...)
	if a, b := gitTrailers(t, ours, "--parse", "--no-divider"), gitTrailers(t, theirs, "--parse", "--no-divider"); !bytes.Equal(a, b) {
		t.Fatalf("%q:\nours %q, git reads %q\ngit's %q, git reads %q", msg, ours, a, theirs, b)
	}
}

func TestTrailersMatchGit(t *testing.T) {
	for _, msg := range []string{
		"fix it\n",
		"fix it\n\nbody\n",
		"fix it\n\nKey: v\n  continued\n", // continuation lines belong to the trailer
		"fix it\n\nCrucible-Phase: 2\n  old\nKey: v\n",                // ours goes with its continuation
		"fix it\n\nKey : v\n",                                         // white space before the separator
		"fix it\n\nbody\nSigned-off-by: A <a@x>\nmore\nthings\n",      // a quarter, with one git wrote
		"fix it\n\nbody\nmore\nthings\nand\nKey: v\n",                 // a few trailers among text are text
		"fix it\n\n(cherry picked from commit 0123)\nnot a trailer\n", // git's own line
		"fix it\n\nKey: v\n# comment\nOther: w\n",
		"fix it\n\nbody\n\n# comment\n\n",
		"fix it\n\n  \nbody\n",
		"fix it\n# c\nKey: v\n",
		"fix it\n\nConflicts:\n\ta.txt\n",
		"fix it\n\nbody\n\nConflicts:\n\ta.txt\n# c\n",
		"fix it\n\nKey:v\nother-key:\n",
		"fix it\n\n:not\n",
		"fix it\r\n\r\nKey: v\r\n",
	} {
		sameTrailersAsGit(t, msg)
	}
}

// FuzzTrailersMatchGit compares AddTrailers with git's own trailer code.
func FuzzTrailersMatchGit(f *testing.F) {
	for _, s := range []string{"a\n\nK: v\n w\n", "a\n\nb\nSigned-off-by: x\nc\n", "a\n\nK : v\n", "a\n\n# c\nK: v\n\n#d\n"} {
		f.Add(s)
	}
	f.Fuzz(sameTrailersAsGit)
}

// TestWriteTrailersUnderTrailerConfig: with trailer.separators or a
// configured key, git reads blocks its own way, and git's code writes.
func TestWriteTrailersUnderTrailerConfig(t *testing.T) {
	dir := gittest.Init(t)
	t.Chdir(dir)
	repo, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("fix it\n\nReviewed= Bo\n")
	if out, _, _ := WriteTrailers(context.Background(), repo, msg, crucible, Style{}); !bytes.Contains(out, []byte("Bo\n\nCrucible")) {
		t.Fatalf("default separators: %q is not a trailer, so ours start a block: got %q", "Reviewed= Bo", out)
	}
	gittest.Git(t, dir, "config", "trailer.separators", ":=")
	out, ok, err := WriteTrailers(context.Background(), repo, msg, crucible, Style{})
	want := "fix it\n\nReviewed: Bo\nCrucible-Pipeline: p1\nCrucible-Phase: 3\n"
	if err != nil || !ok || string(out) != want {
		t.Fatalf("with trailer.separators: %q %v %v, want %q", out, ok, err, want)
	}
	if out, ok, _ := WriteTrailers(context.Background(), repo, []byte("\n# only a comment\n"), crucible, Style{}); ok || string(out) != "\n# only a comment\n" {
		t.Fatalf("an empty message must stay empty: %q", out)
	}
}
