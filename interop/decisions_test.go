package interop

import (
	"reflect"
	"strings"
	"testing"
)

const journalSample = "[2026-04-13T14:35:00Z] DECISION: reviewer-model | choice=opus | reason=security-sensitive plan | alternatives=sonnet\n" +
	"[2026-04-13T15:05:00+02:00] DECISION: escalation | choice=ask the user | reason=stagnation\r\n" +
	"\n" +
	"[2026-04-13T15:06:00Z] DECISION: task-grouping | choice=one wave | alternatives=two waves\n"

func TestParseDecisions(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Decision
		problems []string
	}{
		{"sample", journalSample, []Decision{
			{Time: "2026-04-13T14:35:00Z", Type: "reviewer-model", Choice: "opus", Reason: "security-sensitive plan", Alternatives: "sonnet"},
			{Time: "2026-04-13T13:05:00Z", Type: "escalation", Choice: "ask the user", Reason: "stagnation"},
			{Time: "2026-04-13T15:06:00Z", Type: "task-grouping", Choice: "one wave", Alternatives: "two waves"},
		}, nil},
		{"a value holding a bar", "[2026-04-13T14:35:00Z] DECISION: gate-round | choice=round 3 | reason=2 Fatal | 1 Significant | alternatives=none\n",
			[]Decision{{Time: "2026-04-13T14:35:00Z", Type: "gate-round", Choice: "round 3", Reason: "2 Fatal | 1 Significant", Alternatives: "none"}}, nil},
		{"malformed lines are skipped", "DECISION: x | choice=y\n[yesterday] DECISION: x | choice=y\n[2026-04-13T14:35:00Z] DECISION: x\n" +
			"[2026-04-13T14:35:00Z] DECISION:  | choice=y\n[2026-04-13T14:35:00Z] DECISION: x | choice=y | alternatives=z | reason=w\n" +
			"[2026-04-13T14:35:00Z] DECISION: x | choice=y\n",
			[]Decision{{Time: "2026-04-13T14:35:00Z", Type: "x", Choice: "y"}},
			[]string{
				`line 1: not a decision line "DECISION: x | choice=y" (want "[<timestamp>] DECISION: <type> | choice=<what> | ...")`,
				`line 2: invalid timestamp "yesterday"`,
				"line 3: no choice= after the decision type",
				"line 4: a decision needs a type and a choice",
				"line 5: alternatives= before reason= (want type, choice, reason, alternatives in that order)",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ParseDecisions([]byte(tc.in))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("entries %+v\nwant %+v", got, tc.want)
			}
			var msgs []string
			for _, p := range problems {
				msgs = append(msgs, p.Error())
			}
			if !reflect.DeepEqual(msgs, tc.problems) {
				t.Errorf("problems %q\nwant %q", msgs, tc.problems)
			}
		})
	}
}

func TestDecisionRender(t *testing.T) {
	d := Decision{Time: "2026-04-13T14:35:00Z", Type: "escalation", Choice: "ask the user"}
	want := "[2026-04-13T14:35:00Z] DECISION: escalation | choice=ask the user | reason= | alternatives=\n"
	if got := string(d.Render()); got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func FuzzParseDecisions(f *testing.F) {
	f.Add([]byte(journalSample))
	f.Add([]byte("[2026-04-13 14:35:00 +0100] DECISION: a | choice=b | reason=c | alternatives=d | reason=e\r\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, problems := ParseDecisions(data)
		for _, p := range problems {
			if p.Line < 1 {
				t.Fatalf("line %d in %v", p.Line, p)
			}
		}
		for _, d := range entries {
			out := d.Render()
			again, ps := ParseDecisions(out)
			if len(ps) != 0 || len(again) != 1 || again[0] != d {
				t.Fatalf("round trip of %q: %+v, %v\nrendered %q", data, again, ps, out)
			}
			if strings.Count(string(out), "\n") != 1 {
				t.Fatalf("rendered %q is not one line", out)
			}
		}
	})
}
