package runpage

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzRender puts one string from an agent in every text field the page
// shows and renders it: the page stays inert (no element, attribute or
// URL comes from the text), every section is there once, every <svg> is
// closed, and the text is bounded.
func FuzzRender(f *testing.F) {
	for _, s := range append(hostile, "", "plain", "]]></title></svg><script>x</script>", "\x00\xff\xfe", strings.Repeat("é", 3000),
		"{{.}}", "<!--", "<![CDATA[", `javascript:alert(1)`, "</details></section><section id=\"timeline\">") {
		f.Add(s)
	}
	tag := regexp.MustCompile(`(?i)<(script|img|iframe|object|embed|link|meta http-equiv="refresh"|base|form|a\s+href="[^#]|a\s+[^h])`)
	f.Fuzz(func(t *testing.T, s string) {
		s = Clip(s, MaxText)
		one := 1
		m := &Model{Generated: s, Sessions: []SessionID{{Name: s, From: 1, Mutations: []string{s}}},
			Pipeline: Header{ID: s, Goal: s, Mode: s, Branch: s, Condition: s, Health: s, Reason: s},
			Timeline: Timeline{Events: 3, Start: "2030-01-01T00:00:00Z", End: "2030-01-01T00:01:00Z", Lanes: []Lane{{Role: s, Slot: 2}},
				Bars:   []Bar{{Seq: 1, Role: s, Status: s, Session: s, Step: s, Task: s, Summary: s, Retry: s, RetryOf: &one, Recovered: s, Mutation: s, Failure: s, Started: s, Finished: s, EndRank: 2}},
				Marks:  []Mark{{Kind: s, Rank: 1, Time: s, Label: s}},
				Phases: []Phase{{Phase: 1, Name: s, Start: s, End: s}}},
			Gates: GatesView{Ledger: []LedgerRow{{Phase: 1, Name: s, Status: s, Gate: s, Reason: s}},
				Transitions: []Transition{{Time: s, Kind: s, Reason: s, Confirm: s}},
				Verdicts:    []VerdictView{{Time: s, Verdict: s}},
				Loops: []Loop{{Session: s, Step: s, Task: s, Verdict: s, Rounds: []Round{{Round: 1, Score: 3, Unread: s,
					Findings: []Finding{{Severity: s, Title: s, File: s}}}}}}},
			Cost: CostView{Summary: s, ByPhase: []CostRow{{Key: s}}, ByRole: []CostRow{{Key: s}}, ByTask: []CostRow{{Key: s}},
				Preserved: []Preserved{{Session: s}}},
			Tasks: TasksView{Run: s, Tasks: []TaskNode{{ID: s, Title: s, Status: s, Commit: s, Level: 1}},
				Commits: []CommitView{{Commit: Commit{Hash: s, Subject: s, Trailers: []Trailer{{Key: s, Value: s}}}, Task: s, FastGate: &FastGate{Status: s, Time: s}}}},
			Replays: []Replay{{Original: s, Replay: s, Mutations: []string{s}, Range: s,
				A: ReplaySide{Acceptance: s}, B: ReplaySide{Acceptance: s}, Pairs: []PairView{{A: &one, Role: s, StatA: s, Delta: s}}}},
			Decisions: []Decision{{Time: s, Type: s, Choice: s, Reason: s, Alternatives: s, Suggestion: s}},
			Handoffs:  []Handoff{{Time: s, Path: s, Decisions: []string{s}, Constraints: []string{s}, Document: s}},
		}
		page, err := Render(m)
		if err != nil {
			t.Fatal(err)
		}
		html := string(page)
		if loc := tag.FindStringIndex(html); loc != nil {
			t.Fatalf("the page has %q", html[loc[0]:min(loc[1]+40, len(html))])
		}
		if loc := regexp.MustCompile(`(?i)<[a-z][^<>]*\s(on[a-z]+|src|style|xlink:href)=`).FindStringIndex(html); loc != nil {
			t.Fatalf("the page has an attribute from text: %q", html[loc[0]:min(loc[1]+40, len(html))])
		}
		if n := strings.Count(html, "<a "); n != len(Sections) {
			t.Fatalf("%d links, want the %d of the sections", n, len(Sections))
		}
		for _, id := range Sections {
			if n := strings.Count(html, `<section id="`+id+`">`); n != 1 {
				t.Fatalf("section %s %d times", id, n)
			}
		}
		if strings.Count(html, "<svg ") != strings.Count(html, "</svg>") || strings.Count(html, "<section ") != strings.Count(html, "</section>") {
			t.Fatal("an <svg> or a <section> is not closed as opened")
		}
		if len(page) > 1<<20 { // about a hundred fields of at most 4 KiB, some escaped
			t.Fatalf("%d bytes", len(page))
		}
	})
}
