package rounds

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/report"
)

// c is Counts{fatal, significant, minor}.
func c(f, s, m int) Counts { return Counts{Fatal: f, Significant: s, Minor: m} }

// outcome sums up a decision as "continue", "pass PASS", "escalate STAGNATION"...
func outcome(d Decision) string { return strings.TrimSpace(d.Action.String() + " " + d.Verdict) }

func TestScore(t *testing.T) {
	f := report.Findings{
		Fatal:       []report.Finding{{Title: "a"}, {Title: "b"}},
		Significant: []report.Finding{{Title: "c"}},
		Minor:       []report.Finding{{Title: "d"}, {Title: "e"}, {Title: "f"}, {Title: "g"}},
	}
	if got := Score(f); got != 7 {
		t.Fatalf("Score = %d, want 3·2 + 1·1 + 0·4 = 7", got)
	}
	if got := CountsOf(f); got != c(2, 1, 4) {
		t.Fatalf("CountsOf = %v", got)
	}
	if got := CountsOf(f).Issues(); got != 3 {
		t.Fatalf("Issues = %d, want 3", got)
	}
}

func TestGateRounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		rounds []Counts
		want   []string // outcome of each round
		reason string   // the last round's Reason
	}{
		{"clean first round", 0, []Counts{c(0, 0, 2)}, []string{"pass PASS"},
			"Round 1 found no Fatal or Significant issue."},
		{"three rounds to pass", 0, []Counts{c(1, 2, 0), c(0, 2, 1), c(0, 0, 3)}, []string{"continue", "continue", "pass PASS"},
			"Round 3 found no Fatal or Significant issue."},
		{"first round continues", 0, []Counts{c(4, 0, 0)}, []string{"continue"},
			"Round 1: score 12; fix and run round 2."},
		{"lower score is progress", 0, []Counts{c(1, 2, 0), c(0, 2, 1)}, []string{"continue", "continue"},
			"Round 2: score 2, down from 5; fix and run round 3."},
		{"fewer Fatal at the same score is progress", 0, []Counts{c(1, 0, 0), c(0, 3, 0)}, []string{"continue", "continue"},
			"Round 2: score 3 as before, with 0 Fatal down from 1; fix and run round 3."},
		{"same score and Fatal is stagnation", 0, []Counts{c(1, 1, 0), c(1, 1, 5)}, []string{"continue", "escalate STAGNATION"},
			"Round 2's score 4 is no lower than round 1's and Fatal did not drop: the fixes stopped making progress."},
		{"more Fatal at the same score is stagnation", 0, []Counts{c(0, 3, 0), c(1, 0, 0)}, []string{"continue", "escalate STAGNATION"},
			"Round 2's score 3 is no lower than round 1's and Fatal did not drop: the fixes stopped making progress."},
		{"Minor does not count", 0, []Counts{c(0, 1, 0), c(0, 1, 9)}, []string{"continue", "escalate STAGNATION"},
			"Round 2's score 1 is no lower than round 1's and Fatal did not drop: the fixes stopped making progress."},
		{"a higher score escalates at once", 0, []Counts{c(0, 2, 0), c(1, 0, 0)}, []string{"continue", "escalate SUSTAINED_REGRESSION"},
			"Round 2's score 3 is higher than round 1's 2: the fix introduced new issues."},
		{"a higher score with fewer Fatal is still a regression", 0, []Counts{c(1, 0, 0), c(0, 4, 0)}, []string{"continue", "escalate SUSTAINED_REGRESSION"},
			"Round 2's score 4 is higher than round 1's 3: the fix introduced new issues."},
		{"a regression after progress", 0, []Counts{c(3, 0, 0), c(1, 0, 0), c(1, 1, 0)}, []string{"continue", "continue", "escalate SUSTAINED_REGRESSION"},
			"Round 3's score 4 is higher than round 2's 3: the fix introduced new issues."},
		{"a clean round passes even after stagnating counts", 0, []Counts{c(0, 1, 0), c(0, 0, 1)}, []string{"continue", "pass PASS"},
			"Round 2 found no Fatal or Significant issue."},
		{"breaker at 15 rounds", 0, descending(15), append(repeat("continue", 14), "escalate ESCALATED"),
			"Round 15 reached the 15-round limit with score 3: circuit breaker."},
		{"a pass on the last round is a pass", 3, []Counts{c(3, 0, 0), c(2, 0, 0), c(0, 0, 0)}, []string{"continue", "continue", "pass PASS"},
			"Round 3 found no Fatal or Significant issue."},
		{"configured breaker", 3, []Counts{c(3, 0, 0), c(2, 0, 0), c(1, 0, 0)}, []string{"continue", "continue", "escalate ESCALATED"},
			"Round 3 reached the 3-round limit with score 3: circuit breaker."},
		{"stagnation wins over the breaker", 2, []Counts{c(1, 0, 0), c(1, 0, 0)}, []string{"continue", "escalate STAGNATION"},
			"Round 2's score 3 is no lower than round 1's and Fatal did not drop: the fixes stopped making progress."},
		{"one-round breaker", 1, []Counts{c(0, 1, 0)}, []string{"escalate ESCALATED"},
			"Round 1 reached the 1-round limit with score 1: circuit breaker."},
		{"negative counts are zero", 0, []Counts{c(-1, -2, -3)}, []string{"pass PASS"},
			"Round 1 found no Fatal or Significant issue."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(tc.max)
			var got []string
			var last Decision
			for i, r := range tc.rounds {
				last = g.Record(r)
				if last.Round != i+1 {
					t.Fatalf("round %d decided as round %d", i+1, last.Round)
				}
				got = append(got, outcome(last))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("outcomes %q, want %q", got, tc.want)
			}
			if last.Reason != tc.reason {
				t.Fatalf("reason\n  %s\nwant\n  %s", last.Reason, tc.reason)
			}
			if (last.Suggestion != "") != (last.Action == Escalate) {
				t.Fatalf("suggestion %q on %s", last.Suggestion, outcome(last))
			}
			if g.Done() != (last.Action != Continue) {
				t.Fatalf("Done %v after %s", g.Done(), outcome(last))
			}
		})
	}
}

func descending(n int) []Counts {
	var out []Counts
	for i := n; i > 0; i-- {
		out = append(out, c(i, 0, 0))
	}
	return out
}

func repeat(s string, n int) []string {
	var out []string
	for range n {
		out = append(out, s)
	}
	return out
}

// TestGateJudgesEveryPair checks round 2 against the seed's rules, stated
// independently, for every pair of small rounds.
func TestGateJudgesEveryPair(t *testing.T) {
	const n = 5
	for pf := 0; pf < n; pf++ {
		for ps := 0; ps < n; ps++ {
			if pf+ps == 0 {
				continue // round 1 passed: there is no round 2
			}
			for cf := 0; cf < n; cf++ {
				for cs := 0; cs < n; cs++ {
					prevScore, curScore := 3*pf+ps, 3*cf+cs
					var want string
					switch {
					case cf == 0 && cs == 0:
						want = "pass PASS"
					case curScore > prevScore:
						want = "escalate SUSTAINED_REGRESSION"
					case curScore < prevScore || (cf < pf && curScore <= prevScore):
						want = "continue"
					default:
						want = "escalate STAGNATION"
					}
					g := New(0)
					g.Record(c(pf, ps, 0))
					if got := outcome(g.Record(c(cf, cs, 0))); got != want {
						t.Errorf("%dF %dS then %dF %dS: %s, want %s", pf, ps, cf, cs, got, want)
					}
				}
			}
		}
	}
}

func TestReviewRounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rounds []Counts
		want   []string
		reason string
	}{
		{"clean", []Counts{c(0, 0, 4)}, []string{"pass PASS"}, "Round 1 found no Fatal or Significant issue."},
		{"fewer issues each round", []Counts{c(0, 3, 0), c(1, 1, 5), c(0, 0, 1)}, []string{"continue", "continue", "pass PASS"},
			"Round 3 found no Fatal or Significant issue."},
		{"progress", []Counts{c(0, 3, 0), c(1, 1, 5)}, []string{"continue", "continue"},
			"Round 2: 2 issues, down from 3; fix and run round 3."},
		// Where a gate would see progress (score 3 -> 1), the same issue count is stagnation.
		{"same count is stagnation", []Counts{c(1, 0, 0), c(0, 1, 0)}, []string{"continue", "escalate STAGNATION"},
			"Round 2 has 1 issue, no fewer than round 1's 1: the fixes stopped making progress."},
		// Where a gate would see a regression, a review loop sees stagnation.
		{"more issues is stagnation", []Counts{c(2, 0, 0), c(0, 3, 0)}, []string{"continue", "escalate STAGNATION"},
			"Round 2 has 3 issues, no fewer than round 1's 2: the fixes stopped making progress."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReview(0)
			var got []string
			var last Decision
			for _, x := range tc.rounds {
				last = r.Record(x)
				got = append(got, outcome(last))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("outcomes %q, want %q", got, tc.want)
			}
			if last.Reason != tc.reason {
				t.Fatalf("reason\n  %s\nwant\n  %s", last.Reason, tc.reason)
			}
		})
	}
}

func TestReviewBreaker(t *testing.T) {
	r := NewReview(0)
	var d Decision
	for i := 40; i > 25; i-- {
		d = r.Record(c(0, i, 0))
	}
	if outcome(d) != "escalate ESCALATED" || d.Round != 15 ||
		d.Reason != "Round 15 reached the 15-round limit with 26 issues: circuit breaker." {
		t.Fatalf("round %d: %s (%s), want the breaker at 15", d.Round, outcome(d), d.Reason)
	}
}

func TestJournal(t *testing.T) {
	g := New(0)
	var got []JournalEntry
	for _, r := range []Counts{c(1, 2, 0), c(0, 2, 1), c(0, 3, 0)} {
		got = append(got, g.Record(r).Journal...)
	}
	want := []JournalEntry{
		{Type: "gate-round", Choice: "round 1: fix and run round 2",
			Reason: "1 Fatal, 2 Significant, 0 Minor: Round 1: score 5; fix and run round 2.", Alternatives: "none"},
		{Type: "gate-round", Choice: "round 2: fix and run round 3",
			Reason: "0 Fatal, 2 Significant, 1 Minor: Round 2: score 2, down from 5; fix and run round 3.", Alternatives: "none"},
		{Type: "gate-round", Choice: "round 3: escalate (SUSTAINED_REGRESSION)",
			Reason:       "0 Fatal, 3 Significant, 0 Minor: Round 3's score 3 is higher than round 2's 2: the fix introduced new issues.",
			Alternatives: "another fix round"},
		{Type: "escalation", Choice: "quality gate SUSTAINED_REGRESSION at round 3",
			Reason:       "Round 3's score 3 is higher than round 2's 2: the fix introduced new issues.",
			Alternatives: "another fix round",
			Suggestion:   "The last fix made things worse: restore the checkpoint taken before it, or fix the new findings by hand."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("journal\n  %#v\nwant\n  %#v", got, want)
	}

	r := NewReview(0)
	d := r.Record(c(0, 0, 1))
	wantPass := []JournalEntry{{Type: "review-round", Choice: "round 1: pass",
		Reason: "0 Fatal, 0 Significant, 1 Minor: Round 1 found no Fatal or Significant issue.", Alternatives: "none"}}
	if !reflect.DeepEqual(d.Journal, wantPass) {
		t.Fatalf("review journal %#v", d.Journal)
	}
	// Every entry is one the journal accepts: a type, a choice, no line
	// breaks, no " | " that would split crucible's journal line.
	for _, e := range append(got, d.Journal...) {
		for _, s := range []string{e.Type, e.Choice, e.Reason, e.Alternatives} {
			if s == "" && s != e.Alternatives || strings.ContainsAny(s, "\n|") {
				t.Fatalf("entry %#v has an empty or unsafe field %q", e, s)
			}
		}
	}
}

func TestAfterTheEnd(t *testing.T) {
	g := New(0)
	g.Record(c(1, 0, 0))
	final := g.Record(c(1, 0, 0))
	again := g.Record(c(0, 0, 0))
	if !reflect.DeepEqual(again, final) || len(g.Rounds()) != 2 {
		t.Fatalf("a round after the end: %#v, rounds %v", again, g.Rounds())
	}
}

func TestResumeByReplay(t *testing.T) {
	rounds := []Counts{c(2, 1, 0), c(1, 1, 2), c(1, 0, 0)}
	a := New(0)
	for _, r := range rounds {
		a.Record(r)
	}
	b := New(0)
	for _, r := range a.Rounds() {
		b.Record(r)
	}
	if da, db := a.Record(c(0, 0, 0)), b.Record(c(0, 0, 0)); !reflect.DeepEqual(da, db) {
		t.Fatalf("replayed gate decides differently:\n%#v\n%#v", da, db)
	}
}

// TestArchitecturalEscalates: an architectural concern escalates at once,
// whatever the round and the counts, in a gate and in a review loop.
func TestArchitecturalEscalates(t *testing.T) {
	concern := report.Findings{Architectural: []report.Finding{{Title: "two sources of truth"}}}
	for name, j := range map[string]interface {
		Round(report.Findings) Decision
	}{"gate": New(0), "review": NewReview(0)} {
		t.Run(name, func(t *testing.T) {
			if d := j.Round(report.Findings{Fatal: []report.Finding{{Title: "x"}}}); d.Action != Continue {
				t.Fatalf("round 1: %+v", d)
			}
			d := j.Round(concern)
			if d.Action != Escalate || d.Verdict != VerdictArchitectural || d.Suggestion == "" ||
				d.Reason != "Round 2 raised 1 architectural concern: two sources of truth. It goes to a person at once, whatever the round." {
				t.Fatalf("round 2: %+v", d)
			}
			if len(d.Journal) != 2 || d.Journal[1].Type != JournalEscalation || d.Journal[1].Suggestion != d.Suggestion {
				t.Fatalf("journal %+v", d.Journal)
			}
		})
	}
}

func TestActionString(t *testing.T) {
	got := fmt.Sprint(Continue, Pass, Escalate, Action(7))
	if got != "continue pass escalate action(7)" {
		t.Fatalf("%q", got)
	}
}
