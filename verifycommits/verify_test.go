package verifycommits

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/outcome"
)

// Commit ids for the lists below.
const (
	cBase  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	cOld   = "0000000000000000000000000000000000000000" // before b
	cX     = "1111111111111111111111111111111111111111"
	cY     = "2222222222222222222222222222222222222222"
	cZ     = "3333333333333333333333333333333333333333"
	cMerge = "4444444444444444444444444444444444444444"
	cHead  = "5555555555555555555555555555555555555555"
)

func commit(id string, parents ...string) Commit { return Commit{Commit: id, Parents: parents} }

func TestTodoList(t *testing.T) {
	for _, tc := range []struct {
		name    string
		commits []Commit
		execs   []string
		want    string
	}{
		{"empty", nil, nil, ""},
		{"a line: picks alone, as before merges were verified",
			[]Commit{commit(cX, cBase), commit(cY, cX), commit(cHead, cY)}, []string{"g 0", "", "g 2"},
			"pick " + cX + "\nexec g 0\npick " + cY + "\npick " + cHead + "\nexec g 2\n"},
		{"a topic merged: reset to its fork, merge -C onto both parents, then the check",
			[]Commit{commit(cX, cBase), commit(cY, cBase), commit(cZ, cY), commit(cMerge, cX, cZ), commit(cHead, cMerge)},
			[]string{"g 0", "g 1", "", "g 3", ""},
			"pick " + cX + "\nexec g 0\n" +
				"reset " + cBase + "\npick " + cY + "\nexec g 1\npick " + cZ + "\n" +
				"reset " + cX + "\nmerge -C " + cMerge + " " + cZ + "\nexec g 3\n" +
				"pick " + cHead + "\n" +
				"exec test \"$(git rev-parse HEAD)\" = " + cHead + "\n"},
		{"a fast-forwardable merge needs no reset; the merge alone breaks the line",
			[]Commit{commit(cX, cBase), commit(cHead, cX, cOld)}, []string{"", ""},
			"pick " + cX + "\nmerge -C " + cHead + " " + cOld + "\n" +
				"exec test \"$(git rev-parse HEAD)\" = " + cHead + "\n"},
		{"a topic from before base, an octopus",
			[]Commit{commit(cX, cOld), commit(cY, cBase), commit(cHead, cY, cX, cBase)}, []string{"", "", "g 2"},
			"reset " + cOld + "\npick " + cX + "\nreset " + cBase + "\npick " + cY + "\n" +
				"merge -C " + cHead + " " + cX + " " + cBase + "\nexec g 2\n" +
				"exec test \"$(git rev-parse HEAD)\" = " + cHead + "\n"},
		{"a history of its own merged: its root from a new root",
			[]Commit{commit(cX), commit(cHead, cBase, cX)}, []string{"g 0", ""},
			"reset [new root]\npick " + cX + "\nexec g 0\nreset " + cBase + "\nmerge -C " + cHead + " " + cX + "\n" +
				"exec test \"$(git rev-parse HEAD)\" = " + cHead + "\n"},
	} {
		if got := todoList(cBase, cHead, tc.commits, tc.execs); got != tc.want {
			t.Errorf("%s: todoList =\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

func TestGated(t *testing.T) {
	at := func(statuses ...Status) []Commit {
		var cs []Commit
		for _, s := range statuses {
			cs = append(cs, Commit{Status: s})
		}
		return cs
	}
	for _, tc := range []struct {
		name      string
		commits   []Commit
		keepGoing bool
		want      []bool
	}{
		{"nothing known: all run", at("", "", ""), false, []bool{true, true, true}},
		{"known ones do not run", at(Pass, "", Skip, ""), false, []bool{false, true, false, true}},
		{"nothing runs past a known failure", at("", Fail, "", ""), false, []bool{true, false, false, false}},
		{"unless keep-going", at("", Fail, "", Pass), true, []bool{true, false, true, false}},
	} {
		if got := gated(tc.commits, tc.keepGoing); !slices.Equal(got, tc.want) {
			t.Errorf("%s: gated = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFixable(t *testing.T) {
	line := []Commit{commit(cX, cBase), commit(cY, cX)}
	if err := fixable(line); err != nil {
		t.Errorf("fixable(a line) = %v", err)
	}
	merges := []Commit{commit(cX, cBase), {Commit: cY, Parents: []string{cX, cOld}, Subject: "Merge t1"}, {Commit: cMerge, Parents: []string{cY, cZ}, Subject: "Merge t2"}, commit(cHead, cMerge)}
	err := fixable(merges)
	var refused *outcome.Refused
	if !errors.As(err, &refused) {
		t.Fatalf("fixable(merges) = %v, want refused", err)
	}
	if want := "--fix rewrites a line of commits, and the range holds merge 444444444444 (Merge t2)"; err.Error() != want {
		t.Errorf("fixable(merges) = %q, want %q", err, want)
	}
	var hinted *outcome.Hinted
	if !errors.As(err, &hinted) || !strings.Contains(hinted.Hints[0], "verify-commits --fix "+cMerge+"..HEAD") {
		t.Errorf("fixable(merges) hints = %v, want the commits after the last merge", hinted)
	}
}
