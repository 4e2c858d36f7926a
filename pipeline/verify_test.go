package pipeline

import (
	"fmt"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/refs"
)

// TestDerivedChecks: the files derived from the events are judged by blob
// id (a tree, a missing file or other content is a problem), and each
// commit's findings land after the replay's own for that commit, in the
// order of the commits, though they are found on another goroutine.
func TestDerivedChecks(t *testing.T) {
	repo := &gitext.Repo{Format: "sha1"}
	st := &State{Format: StateFormat, ID: "p", Seq: 1, Gates: ledger.New("p", "2026-11-22T10:00:00Z", "g", "feature")}
	good := map[string]gitext.TreeEntry{
		refs.StateFile: {Mode: "100644", Name: refs.StateFile, OID: repo.HashObject("blob", st.Encode())},
		LedgerFile:     {Mode: "100644", Name: LedgerFile, OID: repo.HashObject("blob", ledger.Render(&st.Gates.Ledger))},
	}
	with := func(name string, e *gitext.TreeEntry) map[string]gitext.TreeEntry {
		files := map[string]gitext.TreeEntry{}
		for k, v := range good {
			files[k] = v
		}
		if e == nil {
			delete(files, name)
		} else {
			files[name] = *e
		}
		return files
	}
	d := newDerivedChecker("p", repo)
	var replay []Problem
	commits := []struct {
		replay int
		files  map[string]gitext.TreeEntry
	}{
		{1, good},
		{0, with(refs.StateFile, &gitext.TreeEntry{Mode: "100644", Name: refs.StateFile, OID: repo.HashObject("blob", []byte("{}\n"))})},
		{2, with(LedgerFile, nil)},
		{0, with(refs.StateFile, &gitext.TreeEntry{Mode: "40000", Name: refs.StateFile, OID: good[refs.StateFile].OID})},
	}
	for i, c := range commits {
		for j := range c.replay {
			replay = append(replay, Problem{Pipeline: "p", Commit: fmt.Sprint(i), Message: fmt.Sprint("replay ", j)})
		}
		d.check(fmt.Sprint(i), c.files, st, len(replay))
	}
	replay = append(replay, Problem{Pipeline: "p", Message: "after the walk"})
	got := commitMessages(d.merge(replay))
	want := []string{
		"0: replay 0",
		"1: state.json does not match what the events produce",
		"2: replay 0", "2: replay 1", "2: missing ledger.md",
		"3: state.json does not match what the events produce",
		": after the walk",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("problems:\n%q\nwant\n%q", got, want)
	}
}

// TestDerivedLedgerRenderedAgain: ledger.md's blob id is remembered only
// for the ledger it was rendered from; a commit whose ledger changed but
// whose ledger.md did not is reported, and going back renders again.
func TestDerivedLedgerRenderedAgain(t *testing.T) {
	repo := &gitext.Repo{Format: "sha1"}
	before := &State{Format: StateFormat, ID: "p", Seq: 1, Gates: ledger.New("p", "2026-11-22T10:00:00Z", "g", "feature")}
	after := *before
	after.Seq = 2
	after.Gates.Ledger.Entry(ledger.Design).Status = ledger.InProgress
	files := func(st *State, ledgerOf *State) map[string]gitext.TreeEntry {
		return map[string]gitext.TreeEntry{
			refs.StateFile: {Mode: "100644", Name: refs.StateFile, OID: repo.HashObject("blob", st.Encode())},
			LedgerFile:     {Mode: "100644", Name: LedgerFile, OID: repo.HashObject("blob", ledger.Render(&ledgerOf.Gates.Ledger))},
		}
	}
	d := newDerivedChecker("p", repo)
	d.check("0", files(before, before), before, 0)
	d.check("1", files(&after, before), &after, 0)
	d.check("2", files(&after, &after), &after, 0)
	d.check("3", files(before, before), before, 0)
	d.check("4", files(before, &after), before, 0)
	got := commitMessages(d.merge(nil))
	want := []string{"1: ledger.md does not match what the events produce", "4: ledger.md does not match what the events produce"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("problems:\n%q\nwant\n%q", got, want)
	}
}

// commitMessages are problems as "commit: message" lines.
func commitMessages(problems []Problem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, p.Commit+": "+p.Message)
	}
	return out
}
