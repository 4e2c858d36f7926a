package gitext

import (
	"regexp"
	"strconv"
	"testing"
)

// The regexps that read git's messages before they were read by hand (the
// hook binary links no regexp package): the fuzz tests hold the hand-made
// readers to them.
var (
	lostRaceRE  = regexp.MustCompile(`cannot lock ref '[^']*': (reference already exists|is at [0-9a-f]+ but expected [0-9a-f]+|unable to resolve reference '[^']*')`)
	heldLockRE  = regexp.MustCompile(`Unable to create '([^']*\.lock)': File exists`)
	shortStatRE = regexp.MustCompile(`^\s*(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?`)
)

// gitSays are messages of git's, and near misses.
var gitSays = []string{
	"fatal: cannot lock ref 'refs/heads/main': is at 1234abcd but expected 99ff00aa\n",
	"error: cannot lock ref 'refs/crucible/pipelines/p': reference already exists\n",
	"error: cannot lock ref 'refs/x': unable to resolve reference 'refs/x'\n",
	"error: cannot lock ref 'refs/x': unable to resolve reference 'refs/x\n",
	"error: cannot lock ref 'refs/x': is at ABC but expected def\n",
	"error: cannot lock ref 'refs/x': is at abc but expected \n",
	"error: cannot lock ref 'a': no\nerror: cannot lock ref 'b': reference already exists",
	"error: cannot lock ref 'refs/x: reference already exists",
	"fatal: Unable to create '/r/.git/refs/heads/main.lock': File exists.\n\nAnother git process seems to be running",
	"fatal: Unable to create '/r/.git/index': File exists.\nfatal: Unable to create '/r/x.lock': File exists.",
	"fatal: Unable to create '/r/.git/x.lock': Permission denied",
	"Unable to create '.lock': File exists",
}

func TestGitSays(t *testing.T) {
	for _, s := range gitSays {
		checkGitSays(t, s)
	}
	if got := (&Error{Stderr: gitSays[0]}).Is(ErrRefChanged); !got {
		t.Error("a lost race is no ErrRefChanged")
	}
	if got := (&Error{Stderr: gitSays[8]}).HeldLock(); got != "/r/.git/refs/heads/main.lock" {
		t.Errorf("HeldLock = %q", got)
	}
	for line, want := range map[string]DiffStat{
		" 3 files changed, 10 insertions(+), 2 deletions(-)\n": {3, 10, 2},
		" 1 file changed, 1 insertion(+)\n":                    {1, 1, 0},
		" 1 file changed, 4 deletions(-)\n":                    {1, 0, 4},
		" 2 files changed\n":                                   {2, 0, 0},
		"":                                                     {},
		" x files changed\n":                                   {},
	} {
		if got := parseShortStat(line); got != want {
			t.Errorf("parseShortStat(%q) = %+v, want %+v", line, got, want)
		}
	}
}

// FuzzGitSays: the hand-made readers of git's messages say what the
// regexps said.
func FuzzGitSays(f *testing.F) {
	for _, s := range gitSays {
		f.Add(s)
	}
	f.Add(" 3 files changed, 10 insertions(+), 2 deletions(-)\n")
	f.Fuzz(checkGitSays)
}

func checkGitSays(t *testing.T, s string) {
	e := &Error{Stderr: s}
	if got, want := lostRace(s), lostRaceRE.MatchString(s); got != want {
		t.Errorf("lostRace(%q) = %v, the regexp says %v", s, got, want)
	}
	want := ""
	if m := heldLockRE.FindStringSubmatch(s); m != nil {
		want = m[1]
	}
	if got := e.HeldLock(); got != want {
		t.Errorf("HeldLock(%q) = %q, the regexp says %q", s, got, want)
	}
	var stat DiffStat
	if m := shortStatRE.FindStringSubmatch(s); m != nil {
		stat.Files, _ = strconv.Atoi(m[1])
		stat.Insertions, _ = strconv.Atoi(m[2])
		stat.Deletions, _ = strconv.Atoi(m[3])
	}
	if got := parseShortStat(s); got != stat {
		t.Errorf("parseShortStat(%q) = %+v, the regexp says %+v", s, got, stat)
	}
}
