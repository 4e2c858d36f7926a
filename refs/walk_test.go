package refs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// dagOf writes a commit graph whose commits each carry an events.jsonl
// holding their name, points pipeline "p" at the last one, and returns the
// commits by name. Each line of graph is "name parent...", parents first.
func dagOf(t *testing.T, dir string, graph ...string) map[string]string {
	t.Helper()
	git := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	ids := map[string]string{}
	last := ""
	for _, line := range graph {
		f := strings.Fields(line)
		events := git(f[0]+"\n", "hash-object", "-w", "--stdin")
		tree := git(fmt.Sprintf("100644 blob %s\t%s\n", events, EventsFile), "mktree")
		args := []string{"commit-tree", tree, "-m", f[0]}
		for _, p := range f[1:] {
			args = append(args, "-p", ids[p])
		}
		ids[f[0]] = git("", args...)
		last = ids[f[0]]
	}
	gittest.Git(t, dir, "update-ref", PipelineRef("p"), last)
	return ids
}

// TestEventLogOfMerges: through merges, nested ones and a criss-cross,
// EventLog yields every commit of the chain once, each before its parents,
// with its own events.jsonl, and the same commits as git rev-list.
func TestEventLogOfMerges(t *testing.T) {
	s, dir := openStore(t)
	ids := dagOf(t, dir,
		"root", "a root", "b a",
		"x1 a", "x2 x1", // a side branch...
		"y1 x1", "mx x2 y1", // ...with a merge of its own
		"m1 b mx", // merged into the main line
		"c m1", "d c",
		"p m1", "q p", // criss-cross between d and q
		"cc1 d q", "cc2 q d",
		"tip cc1 cc2")
	name := map[string]string{}
	for n, id := range ids {
		name[id] = n
	}
	var order []string
	err := s.EventLog(context.Background(), "p", func(commit string, events []byte) (bool, error) {
		if got := strings.TrimSpace(string(events)); got != name[commit] {
			t.Errorf("commit %s yields events %q", name[commit], got)
		}
		order = append(order, commit)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, c := range order {
		if _, dup := pos[c]; dup {
			t.Fatalf("%s yielded twice", name[c])
		}
		pos[c] = i
	}
	want := strings.Fields(gittest.Git(t, dir, "rev-list", PipelineRef("p")))
	if len(order) != len(want) || len(order) != len(ids) {
		t.Fatalf("EventLog yields %d commits, git rev-list %d, the graph has %d", len(order), len(want), len(ids))
	}
	for _, line := range strings.Split(gittest.Git(t, dir, "rev-list", "--parents", PipelineRef("p")), "\n") {
		f := strings.Fields(line)
		for _, p := range f[1:] {
			if pos[p] < pos[f[0]] {
				t.Errorf("%s comes before its child %s", name[p], name[f[0]])
			}
		}
	}
}

// TestEventLogFirstPageStartsNoGit: the newest commits of a chain are read
// from the tip on, with the object reader alone: no git process walks the
// rest of the chain first.
func TestEventLogFirstPageStartsNoGit(t *testing.T) {
	s, dir := openStore(t)
	dagOf(t, dir, "1", "2 1", "3 2", "4 3", "5 4")
	if _, err := s.Objects(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	var got []string
	err := s.EventLog(context.Background(), "p", func(_ string, events []byte) (bool, error) {
		got = append(got, strings.TrimSpace(string(events)))
		return len(got) < 3, nil
	})
	if err != nil || strings.Join(got, " ") != "5 4 3" {
		t.Fatalf("first page %v, %v", got, err)
	}
}

// TestEventLogRefusesForgedParents: a chain commit written with git
// hash-object --literally can carry "parent" lines git itself never
// writes; EventLog must refuse it, never hand such a line to git as an
// argument (here rev-list's --output, which would write a file).
func TestEventLogRefusesForgedParents(t *testing.T) {
	s, dir := openStore(t)
	ids := dagOf(t, dir, "a", "b")
	victim := dir + "/written-by-rev-list"
	tree := gittest.Git(t, dir, "rev-parse", ids["b"]+"^{tree}")
	for _, parent := range []string{"--output=" + victim, "HEAD", strings.ToUpper(ids["a"])} {
		forged := fmt.Sprintf("tree %s\nparent %s\nparent %s\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nforged\n", tree, ids["b"], parent)
		cmd := exec.Command("git", "hash-object", "--literally", "-w", "-t", "commit", "--stdin")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(forged)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		// git update-ref refuses such a commit; the ref file does not.
		if err := os.WriteFile(dir+"/.git/"+PipelineRef("p"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		err = s.EventLog(context.Background(), "p", func(string, []byte) (bool, error) { return true, nil })
		if err == nil || !strings.Contains(err.Error(), "malformed commit object") {
			t.Errorf("parent %q: EventLog returned %v", parent, err)
		}
		if _, statErr := os.Stat(victim); statErr == nil {
			t.Fatalf("parent %q: git wrote %s", parent, victim)
		}
	}
}
