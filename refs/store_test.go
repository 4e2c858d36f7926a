package refs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
)

var who = Identity{Name: "Ada Tester", Email: "ada@example.com"}

func openStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := gittest.Init(t)
	t.Chdir(dir)
	r, err := gitext.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := Open(r)
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// batchOf returns a build function that appends one event whose state is
// the number of events so far.
func batchOf(event string) func(*Head) (*Batch, error) {
	return func(h *Head) (*Batch, error) {
		n := 0
		if h.Commit != "" {
			n = strings.Count(string(h.State), "x")
		}
		return &Batch{Events: [][]byte{[]byte(`{"e":"` + event + `"}`)},
			Files: map[string][]byte{StateFile: []byte(`"` + strings.Repeat("x", n+1) + `"` + "\n")}, Subject: event}, nil
	}
}

func TestAppendBuildsAChain(t *testing.T) {
	s, dir := openStore(t)
	for _, e := range []string{"a", "b", "c"} {
		if _, err := s.Append(t.Context(), "p1", who, batchOf(e)); err != nil {
			t.Fatal(err)
		}
	}
	if got := gittest.Git(t, dir, "log", "--format=%s", PipelineRef("p1")); got != "c\nb\na" {
		t.Fatalf("chain subjects %q", got)
	}
	if got := gittest.Git(t, dir, "show", PipelineRef("p1")+":"+StateFile); got != `"xxx"` {
		t.Fatalf("state %q", got)
	}
	if got := gittest.Git(t, dir, "show", PipelineRef("p1")+":"+EventsFile); got != `{"e":"c"}` {
		t.Fatalf("events.jsonl holds only its own batch: %q", got)
	}
	if got := gittest.Git(t, dir, "show", PipelineRef("p1")+"~2:"+FormatFile); got+"\n" != FormatV2 {
		t.Fatalf("format %q", got)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--format=%an <%ae>%n%b", PipelineRef("p1")); got != "Ada Tester <ada@example.com>\nCrucible-Pipeline: p1" {
		t.Fatalf("commit %q", got)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

// TestAppendRetriesALostRace moves the ref behind the builder's back once:
// the append must rebuild on the new tip rather than overwrite it.
func TestAppendRetriesALostRace(t *testing.T) {
	s, dir := openStore(t)
	if _, err := s.Append(t.Context(), "p1", who, batchOf("a")); err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err := s.Append(t.Context(), "p1", who, func(h *Head) (*Batch, error) {
		calls++
		if calls == 1 {
			if _, err := Open(s.repo).Append(t.Context(), "p1", who, batchOf("rival")); err != nil {
				t.Fatal(err)
			}
		}
		return batchOf("mine")(h)
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("build called %d times, want 2", calls)
	}
	if got := gittest.Git(t, dir, "log", "--format=%s", PipelineRef("p1")); got != "mine\nrival\na" {
		t.Fatalf("chain %q", got)
	}
}

func TestAppendBuildErrorChangesNothing(t *testing.T) {
	s, dir := openStore(t)
	if _, err := s.Append(t.Context(), "p1", who, batchOf("a")); err != nil {
		t.Fatal(err)
	}
	before := gittest.Git(t, dir, "rev-parse", PipelineRef("p1"))
	boom := errors.New("refused")
	if _, err := s.Append(t.Context(), "p1", who, func(*Head) (*Batch, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if after := gittest.Git(t, dir, "rev-parse", PipelineRef("p1")); after != before {
		t.Fatal("a refused append moved the ref")
	}
}

// TestHeadCache: the cache is used only while it names the ref's commit
// and is its content; stale, foreign, damaged or forged copies fall back
// to git and are rewritten.
func TestHeadCache(t *testing.T) {
	s, _ := openStore(t)
	h1, err := s.Append(t.Context(), "p1", who, batchOf("a"))
	if err != nil {
		t.Fatal(err)
	}
	cache := s.cachePath("p1")
	stale, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := s.Append(t.Context(), "p1", who, batchOf("b"))
	if err != nil {
		t.Fatal(err)
	}
	forgedState := []byte(strings.Replace(string(h2.State), "{", `{"forged":1,`, 1))
	forgedTree := append([]gitext.TreeEntry(nil), h2.Tree...)
	for i := range forgedTree {
		if forgedTree[i].Name == StateFile {
			forgedTree[i].OID = s.repo.HashObject("blob", forgedState)
		}
	}
	for name, content := range map[string][]byte{
		// An agent's: the commit's name and tree, another state.
		"forged state": encodeCache(new(bytes.Buffer), &Head{ID: "p1", Commit: h2.Commit, Tree: h2.Tree, State: forgedState}),
		// The same with the tree's entry made to match it.
		"forged tree": encodeCache(new(bytes.Buffer), &Head{ID: "p1", Commit: h2.Commit, Tree: forgedTree, State: forgedState}),
		"stale":       stale,
		"damaged":     []byte("{not json"),
		// Another pipeline's copy naming this commit (a renamed file, say).
		"foreign": []byte(strings.Replace(strings.Replace(string(stale), h1.Commit, h2.Commit, 1), "\np1\n", "\np9\n", 1)),
		// Caught half-written: the right commit, but not all of the state.
		"torn": []byte(strings.Replace(string(stale), h1.Commit, h2.Commit, 1)[:len(stale)-2]),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(cache, content, 0o644); err != nil {
				t.Fatal(err)
			}
			// Another process's store: s keeps the head it wrote in memory.
			other := Open(s.repo)
			defer other.Close()
			got, err := other.Head(t.Context(), "p1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Commit != h2.Commit || string(got.State) != string(h2.State) {
				t.Fatalf("Head = %s %q, want %s %q", got.Commit, got.State, h2.Commit, h2.State)
			}
		})
	}
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(t.Context(), "p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatal("a missing cache was not rewritten")
	}
}

// TestHeadKeptInMemory: a store reads the head it wrote last from memory,
// not from the cache file, whatever the file says meanwhile; a head it did
// not write comes from the file again.
func TestHeadKeptInMemory(t *testing.T) {
	s, _ := openStore(t)
	h1, err := s.Append(t.Context(), "p1", who, batchOf("a"))
	if err != nil {
		t.Fatal(err)
	}
	forged := encodeCache(new(bytes.Buffer), &Head{ID: "p1", Commit: h1.Commit, Tree: h1.Tree, State: []byte(`{"forged":true}`)})
	if err := os.WriteFile(s.cachePath("p1"), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.Head(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.State) != string(h1.State) {
		t.Fatalf("Head read the file: state %q, want %q", got.State, h1.State)
	}
	// Another store does not take the forgery, which is not the commit's
	// content; it takes a sound copy from the file, git or no git.
	other := Open(s.repo)
	defer other.Close()
	if got, err := other.Head(t.Context(), "p1"); err != nil || string(got.State) != string(h1.State) {
		t.Fatalf("another store's Head = %q, %v: it took the forged copy", got.State, err)
	}
	sound := encodeCache(new(bytes.Buffer), h1)
	if err := os.WriteFile(s.cachePath("p1"), sound, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	third := Open(s.repo)
	defer third.Close()
	if got, err := third.Head(t.Context(), "p1"); err != nil || string(got.State) != string(h1.State) {
		t.Fatalf("with no git, another store's Head = %q, %v: it does not read a sound copy from the file", got, err)
	}
}

// TestPackedTipFromCache: after a gc has packed the chain's tip, another
// store still takes the cached copy, judged against the packed commit, with
// no git and without rewriting the file; a forged copy is still refused.
func TestPackedTipFromCache(t *testing.T) {
	s, dir := openStore(t)
	if _, err := s.Append(t.Context(), "p1", who, batchOf("a")); err != nil {
		t.Fatal(err)
	}
	h, err := s.Append(t.Context(), "p1", who, batchOf("b"))
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "gc", "-q", "--prune=now")
	if _, _, err := s.repo.ReadLoose(h.Commit); !errors.Is(err, gitext.ErrMissing) {
		t.Fatalf("the tip is still loose after gc: %v", err)
	}
	cache := s.cachePath("p1")
	forged := encodeCache(new(bytes.Buffer), &Head{ID: "p1", Commit: h.Commit, Tree: h.Tree, State: []byte(`{"forged":true}`)})
	if err := os.WriteFile(cache, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	withGit := Open(s.repo)
	defer withGit.Close()
	if got, err := withGit.Head(t.Context(), "p1"); err != nil || string(got.State) != string(h.State) {
		t.Fatalf("with a forged copy, Head = %+v, %v", got, err)
	}
	then := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(cache, then, then); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	other := Open(s.repo)
	defer other.Close()
	got, err := other.Head(t.Context(), "p1")
	if err != nil {
		t.Fatalf("with no git, Head of a packed tip: %v", err)
	}
	if string(got.State) != string(h.State) {
		t.Fatalf("with no git, Head of a packed tip = %q", got.State)
	}
	if fi, err := os.Stat(cache); err != nil || !fi.ModTime().Equal(then) {
		t.Fatalf("the cache of a packed tip was rewritten: %v", err)
	}
}

func TestHeadOfMissingPipeline(t *testing.T) {
	s, _ := openStore(t)
	if _, err := s.Head(t.Context(), "nope"); !errors.Is(err, ErrNoPipeline) {
		t.Fatalf("err %v", err)
	}
	if err := s.Walk(t.Context(), "nope", nil); !errors.Is(err, ErrNoPipeline) {
		t.Fatalf("walk err %v", err)
	}
}

func TestActiveIndex(t *testing.T) {
	s, dir := openStore(t)
	if id, err := s.Active("main"); id != "" || err != nil {
		t.Fatalf("Active on a fresh repo = %q, %v", id, err)
	}
	if err := s.SetActive("feature/x", "p1", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetActive("feature/x", "p2", ""); !errors.Is(err, gitext.ErrRefChanged) {
		t.Fatalf("second activation without the old id: %v", err)
	}
	if err := s.SetActive("feature/x", "p2", "p1"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "symbolic-ref", ActiveRef("feature/x")); got != PipelineRef("p2") {
		t.Fatalf("git reads %q", got)
	}
	if id, err := s.Active("feature/x"); id != "p2" || err != nil {
		t.Fatalf("Active = %q, %v", id, err)
	}
}

func TestIDs(t *testing.T) {
	id, err := NewID(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	if err != nil || !regexp.MustCompile(`^build-20261122-100000-[0-9a-f]{6}$`).MatchString(id) {
		t.Fatalf("NewID = %q, %v", id, err)
	}
	if err := ValidateID(id); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "-x", ".x", "a/b", "a..b", "a.lock", "a.", "a b", "a:b", "a~1", "a^", "a@{1}", "a\\b", strings.Repeat("a", 101)} {
		if ValidateID(bad) == nil {
			t.Errorf("ValidateID(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"build-20260413-150000", "a", "A_b.c-1", strings.Repeat("a", 100)} {
		if err := ValidateID(good); err != nil {
			t.Errorf("ValidateID(%q) = %v", good, err)
		}
	}
}

func TestListAndWalk(t *testing.T) {
	s, _ := openStore(t)
	for _, id := range []string{"b", "a"} {
		if _, err := s.Append(t.Context(), id, who, batchOf("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(t.Context(), "a", who, batchOf("y")); err != nil {
		t.Fatal(err)
	}
	ids, err := s.List(t.Context())
	if err != nil || strings.Join(ids, ",") != "a,b" {
		t.Fatalf("List = %v, %v", ids, err)
	}
	var seen []string
	err = s.Walk(t.Context(), "a", func(c *ChainCommit) (bool, error) {
		seen = append(seen, strings.TrimSpace(strings.SplitN(c.Commit.Message, "\n", 2)[0]))
		return true, nil
	})
	if err != nil || strings.Join(seen, ",") != "x,y" {
		t.Fatalf("Walk saw %v, %v", seen, err)
	}
	if _, err := os.Stat(filepath.Join(s.repo.CrucibleDir(), "cache", "a")); err != nil {
		t.Fatal(err)
	}
}

// TestEventLogMatchesWalk: the fast event reader sees the same commits and
// events.jsonl blobs as Walk, newest first where Walk goes oldest first, and
// stops when told to.
func TestEventLogMatchesWalk(t *testing.T) {
	s, _ := openStore(t)
	for _, e := range []string{"a", "b", "c"} {
		if _, err := s.Append(t.Context(), "p1", who, batchOf(e)); err != nil {
			t.Fatal(err)
		}
	}
	var walked, logged []string
	if err := s.Walk(t.Context(), "p1", func(c *ChainCommit) (bool, error) {
		b, err := s.ReadFile(t.Context(), c.Entries, EventsFile)
		walked = append([]string{c.OID + " " + string(b)}, walked...)
		return true, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.EventLog(t.Context(), "p1", func(c string, b []byte) (bool, error) {
		logged = append(logged, c+" "+string(b))
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(walked, "|") != strings.Join(logged, "|") || len(logged) != 3 {
		t.Fatalf("Walk %v\nEventLog %v", walked, logged)
	}
	n := 0
	s.EventLog(t.Context(), "p1", func(string, []byte) (bool, error) { n++; return false, nil })
	if n != 1 {
		t.Fatalf("EventLog went on after false: %d", n)
	}
	if err := s.EventLog(t.Context(), "nope", nil); !errors.Is(err, ErrNoPipeline) {
		t.Fatalf("missing pipeline: %v", err)
	}
}

// TestVerifiedRecord: the record round-trips, and anything that is not a
// whole object id reads as no record.
func TestVerifiedRecord(t *testing.T) {
	s, _ := openStore(t)
	if got := s.Verified("p1"); got != "" {
		t.Fatalf("no record yet: %q", got)
	}
	oid := strings.Repeat("a", 2*s.repo.HashLen())
	if err := s.SetVerified("p1", oid); err != nil || s.Verified("p1") != oid {
		t.Fatalf("round trip: %v %q", err, s.Verified("p1"))
	}
	for _, junk := range []string{oid[:20], strings.Repeat("g", len(oid)), ""} {
		if err := os.WriteFile(s.verifiedPath("p1"), []byte(junk+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := s.Verified("p1"); got != "" {
			t.Errorf("%q read as %q", junk, got)
		}
	}
}

// TestMergeBaseCrissCross: with two best common ancestors, MergeBase picks
// the same one whichever way round it is asked.
func TestMergeBaseCrissCross(t *testing.T) {
	s, dir := openStore(t)
	tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
	commit := func(msg string, parents ...string) string {
		args := []string{"commit-tree", tree, "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return gittest.Git(t, dir, args...)
	}
	root := commit("root")
	x, y := commit("x", root), commit("y", root)
	m1, m2 := commit("m1", x, y), commit("m2", y, x) // criss-cross
	a, b := commit("a", m1), commit("b", m2)
	all := strings.Fields(gittest.Git(t, dir, "merge-base", "--all", a, b))
	if len(all) != 2 {
		t.Fatalf("want two merge bases, git lists %v", all)
	}
	ab, err1 := s.MergeBase(t.Context(), a, b)
	ba, err2 := s.MergeBase(t.Context(), b, a)
	if err1 != nil || err2 != nil || ab != ba || ab != min(all[0], all[1]) {
		t.Fatalf("MergeBase(a,b)=%s MergeBase(b,a)=%s of %v (%v %v)", ab, ba, all, err1, err2)
	}
	if none, err := s.MergeBase(t.Context(), a, commit("unrelated")); none != "" || err != nil {
		t.Fatalf("unrelated: %q %v", none, err)
	}
}
