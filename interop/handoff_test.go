package interop

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// hoGolden is a handoff in exactly the layout Render writes.
const hoGolden = `# Phase Handoff: 2 → 3
**Timestamp:** 2026-04-13T15:42:07Z
**Goal:** Add rate limiting to the public API.
Per-key limits, configurable in config.yaml; admin routes stay unlimited.
**Mode:** feature

## Inputs for Phase 3
- **Plan:** docs/plans/2026-04-13-rate-limiting-plan.md
- **Design doc:** docs/plans/2026-04-13-rate-limiting-design.md
- **Task count:** 6 (2x T1, 3x T2, 1x T3)

## Decisions Carried Forward
- [DEC-1] Token bucket per API key: batch clients burst by design
- [DEC-2] Limits live in config.yaml: ops already edit it at deploy time
- [DEC-3] Admin routes bypass the limiter

## Active Constraints
- No new runtime dependencies
- p99 latency of the middleware under 5 ms

## Shed Receipt
- Design conversation and rejected alternatives → docs/plans/2026-04-13-rate-limiting-design.md
- Plan review rounds 1-2 → ~/.claude/projects/abc123/memory/gate-verdict-qg-20260413-151500.md
`

var hoGoldenValue = Handoff{
	From:      2,
	To:        3,
	Timestamp: "2026-04-13T15:42:07Z",
	Goal:      "Add rate limiting to the public API.\nPer-key limits, configurable in config.yaml; admin routes stay unlimited.",
	Mode:      "feature",
	Inputs: []HandoffInput{
		{"Plan", "docs/plans/2026-04-13-rate-limiting-plan.md"},
		{"Design doc", "docs/plans/2026-04-13-rate-limiting-design.md"},
		{"Task count", "6 (2x T1, 3x T2, 1x T3)"},
	},
	Decisions: []HandoffDecision{
		{"DEC-1", "Token bucket per API key", "batch clients burst by design"},
		{"DEC-2", "Limits live in config.yaml", "ops already edit it at deploy time"},
		{"DEC-3", "Admin routes bypass the limiter", ""},
	},
	Constraints: []string{"No new runtime dependencies", "p99 latency of the middleware under 5 ms"},
	Shed: []HandoffShed{
		{"Design conversation and rejected alternatives", "docs/plans/2026-04-13-rate-limiting-design.md"},
		{"Plan review rounds 1-2", "~/.claude/projects/abc123/memory/gate-verdict-qg-20260413-151500.md"},
	},
}

// hoHead is a valid title and header for a 1 → 2 handoff (lines 1-4).
const hoHead = "# Phase Handoff: 1 → 2\n**Timestamp:** t\n**Goal:** g\n**Mode:** feature\n"

func hoParse(t *testing.T, s string) Handoff {
	t.Helper()
	h, err := ParseHandoff([]byte(s))
	if err != nil {
		t.Fatalf("ParseHandoff: %v\ninput:\n%s", err, s)
	}
	return h
}

func TestParseHandoffGolden(t *testing.T) {
	h := hoParse(t, hoGolden)
	if !reflect.DeepEqual(h, hoGoldenValue) {
		t.Errorf("ParseHandoff:\n got %#v\nwant %#v", h, hoGoldenValue)
	}
	if got := string(hoGoldenValue.Render()); got != hoGolden {
		t.Errorf("Render:\n%s\nwant\n%s", got, hoGolden)
	}
}

func TestParseHandoffValid(t *testing.T) {
	hd := func(mod func(h *Handoff)) Handoff {
		h := Handoff{From: 1, To: 2, Timestamp: "t", Goal: "g", Mode: "feature"}
		mod(&h)
		return h
	}
	tests := []struct {
		name string
		in   string
		want Handoff
	}{
		{"header only", hoHead, hd(func(*Handoff) {})},
		{"empty sections", hoHead + "## Inputs for Phase 2\n## Decisions Carried Forward\n\n## Active Constraints\n## Shed Receipt\n",
			hd(func(*Handoff) {})},
		{"ASCII arrows, phases 3 to 4",
			"# Phase Handoff: 3->4\n**Timestamp:** t\n**Goal:** g\n**Mode:** refactor\n## Inputs for Phase 4\n## Shed Receipt\n- a -> b\n",
			Handoff{From: 3, To: 4, Timestamp: "t", Goal: "g", Mode: "refactor", Shed: []HandoffShed{{"a", "b"}}}},
		{"CRLF, byte order mark, indentation, blank lines",
			"\ufeff\r\n\r\n  # Phase Handoff:  1  →  2  \r\n\r\n**Timestamp:**   t  \r\n\r\n\t**Mode:** feature\r\n\r\n**Goal:** g\r\n\r\n" +
				"  ## Active Constraints  \r\n\r\n  -   c1  \r\n-\tc2\r\n\r\n",
			hd(func(h *Handoff) { h.Constraints = []string{"c1", "c2"} })},
		{"empty header values",
			"# Phase Handoff: 1 → 2\n**Timestamp:**\n**Goal:**\n**Mode:**\n",
			Handoff{From: 1, To: 2}},
		{"goal on several lines, kept verbatim",
			"# Phase Handoff: 1 → 2\n**Timestamp:** t\n**Goal:**\n\n  First line\n\n    - an indented bullet\n**Note:** not a header line\n# not a title\n\n\n**Mode:** feature\n",
			hd(func(h *Handoff) {
				h.Goal = "First line\n\n    - an indented bullet\n**Note:** not a header line\n# not a title"
			})},
		{"goal runs to a section when Mode came first",
			"# Phase Handoff: 1 → 2\n**Mode:** feature\n**Timestamp:** t\n**Goal:** g\nmore\n\n## Active Constraints\n- c\n",
			hd(func(h *Handoff) { h.Goal = "g\nmore"; h.Constraints = []string{"c"} })},
		{"goal stops at Timestamp",
			"# Phase Handoff: 1 → 2\n**Goal:** g\n**Timestamp:** t\n**Mode:** feature\n",
			hd(func(*Handoff) {})},
		{"inputs",
			hoHead + "## Inputs for Phase 2\n- **Design doc:** docs/d.md\n- **Empty:**\n- **Alt form**: v: w\n- **a:b:** c\n- ***x*:** y **z**\n",
			hd(func(h *Handoff) {
				h.Inputs = []HandoffInput{{"Design doc", "docs/d.md"}, {"Empty", ""}, {"Alt form", "v: w"}, {"a:b", "c"}, {"*x*", "y **z**"}}
			})},
		{"decisions",
			hoHead + "## Decisions Carried Forward\n" +
				"- [DEC-12] Use X: because: reasons\n" +
				"- [DEC-2]\n" +
				"- [DEC-3]   : reason only\n" +
				"- No ID: a reason\n" +
				"- [DEC-x] not an ID: r\n" +
				"- [DEC-4]glued: r\n" +
				"- [DEC-] empty number\n" +
				"- a:b has no reason\n" +
				"- text  :  spaced  \n" +
				"-\n",
			hd(func(h *Handoff) {
				h.Decisions = []HandoffDecision{
					{"DEC-12", "Use X", "because: reasons"},
					{"DEC-2", "", ""},
					{"DEC-3", "", "reason only"},
					{"", "No ID", "a reason"},
					{"", "[DEC-x] not an ID", "r"},
					{"", "[DEC-4]glued", "r"},
					{"", "[DEC-] empty number", ""},
					{"", "a:b has no reason", ""},
					{"", "text", "spaced"},
					{"", "", ""},
				}
			})},
		{"shed receipt",
			hoHead + "## Shed Receipt\n" +
				"- a → b → c\n" +
				"- a -> b → c\n" +
				"- a → b -> c\n" +
				"- no arrow\n" +
				"- → only where\n" +
				"- -> only where\n" +
				"- →\n" +
				"- what →\n" +
				"- x->y\n" +
				"- a→b\t->\tc\n" +
				"- a -->b → c\n" +
				"- →\t-> x\n" +
				"- ->x\n",
			hd(func(h *Handoff) {
				h.Shed = []HandoffShed{
					{"a", "b → c"}, {"a", "b → c"}, {"a", "b -> c"}, {"no arrow", ""},
					{"", "only where"}, {"", "only where"}, {"", ""}, {"what", ""}, {"x->y", ""},
					{"a→b", "c"}, {"a -->b", "c"}, {"", "-> x"}, {"->x", ""},
				}
			})},
		{"sections in another order",
			hoHead + "## Shed Receipt\n- s → w\n## Active Constraints\n- c\n## Decisions Carried Forward\n- d\n## Inputs for Phase 2\n- **i:** v\n",
			hd(func(h *Handoff) {
				h.Shed = []HandoffShed{{"s", "w"}}
				h.Constraints = []string{"c"}
				h.Decisions = []HandoffDecision{{"", "d", ""}}
				h.Inputs = []HandoffInput{{"i", "v"}}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hoParse(t, tt.in)
			if !reflect.DeepEqual(h, tt.want) {
				t.Errorf("ParseHandoff:\n got %#v\nwant %#v", h, tt.want)
			}
			hoRoundTrip(t, h)
		})
	}
}

// hoRoundTrip checks ParseHandoff(h.Render()) == h and that the second render
// is byte-identical.
func hoRoundTrip(t *testing.T, h Handoff) {
	t.Helper()
	out := h.Render()
	h2, err := ParseHandoff(out)
	if err != nil {
		t.Fatalf("ParseHandoff(Render()): %v\n%s", err, out)
	}
	if !reflect.DeepEqual(h, h2) {
		t.Fatalf("round trip:\n got %#v\nwant %#v\nrendered:\n%s", h2, h, out)
	}
	if again := h2.Render(); string(again) != string(out) {
		t.Fatalf("second render differs:\n%s\nvs\n%s", again, out)
	}
}

func TestParseHandoffErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty file", "", 0, `missing title "# Phase Handoff: N → M"`},
		{"blank lines only", "\r\n \n\t\n", 0, `missing title "# Phase Handoff: N → M"`},
		{"no title", "**Timestamp:** t\n", 1, `want title "# Phase Handoff: N → M", found "**Timestamp:** t"`},
		{"other title", "\n# Pipeline Status\n", 2, `want title "# Phase Handoff: N → M", found "# Pipeline Status"`},
		{"title without arrow", "# Phase Handoff: 1 2\n", 1, `want title "# Phase Handoff: N → M", found "# Phase Handoff: 1 2"`},
		{"title at level 2", "## Phase Handoff: 1 → 2\n", 1, `want title "# Phase Handoff: N → M", found "## Phase Handoff: 1 → 2"`},
		{"phase 0", "# Phase Handoff: 0 → 1\n", 1, `invalid phase "0" in title (want 1 to 4)`},
		{"phase 5", "# Phase Handoff: 4 → 5\n", 1, `invalid phase "5" in title (want 1 to 4)`},
		{"two-digit phase", "# Phase Handoff: 01 → 2\n", 1, `invalid phase "01" in title (want 1 to 4)`},
		{"phase named", "# Phase Handoff: design → plan\n", 1, `invalid phase "design" in title (want 1 to 4)`},
		{"missing phase", "# Phase Handoff: → 2\n", 1, `invalid phase "" in title (want 1 to 4)`},
		{"skipped phase", "# Phase Handoff: 1 → 3\n", 1, `handoff from phase 1 to phase 3: want the next phase, 2`},
		{"backwards", "# Phase Handoff: 3 -> 2\n", 1, `handoff from phase 3 to phase 2: want the next phase, 4`},
		{"same phase", "# Phase Handoff: 2 → 2\n", 1, `handoff from phase 2 to phase 2: want the next phase, 3`},
		{"duplicate Mode", hoHead + "**Mode:** refactor\n", 5, `duplicate "**Mode:**" line (first on line 4)`},
		{"duplicate Goal inside the goal", "# Phase Handoff: 1 → 2\n**Goal:** a\nb\n**Goal:** c\n", 4, `duplicate "**Goal:**" line (first on line 2)`},
		{"unknown header field", "# Phase Handoff: 1 → 2\n**Timestamp:** t\n**Owner:** me\n", 3, `unknown header field "**Owner:**"`},
		{"unknown header field after Mode", hoHead + "\n**Branch:** main\n", 6, `unknown header field "**Branch:**"`},
		{"prose in header", "# Phase Handoff: 1 → 2\n\nSome prose\n", 3, `unexpected line "Some prose" in the header (want "**Timestamp:**", "**Goal:**" or "**Mode:**")`},
		{"bullet in header", hoHead + "- stray\n", 5, `unexpected line "- stray" in the header (want "**Timestamp:**", "**Goal:**" or "**Mode:**")`},
		{"missing Timestamp", "# Phase Handoff: 1 → 2\n**Goal:** g\n**Mode:** m\n", 0, `missing "**Timestamp:**" line`},
		{"missing Goal", "# Phase Handoff: 1 → 2\n**Timestamp:** t\n**Mode:** m\n", 0, `missing "**Goal:**" line`},
		{"missing Mode, goal runs to a section", "# Phase Handoff: 1 → 2\n**Timestamp:** t\n**Goal:** g\n**Mode** m\n## Active Constraints\n", 0, `missing "**Mode:**" line`},
		{"title only", "# Phase Handoff: 1 → 2", 0, `missing "**Timestamp:**" line`},
		{"unknown section", hoHead + "\n## Notes\n- n\n", 6, `unknown section "Notes"`},
		{"empty section title", hoHead + "##\n", 5, `unknown section ""`},
		{"level 3 heading", hoHead + "## Active Constraints\n### More\n", 6, `want a "- " bullet in section "Active Constraints", found "### More"`},
		{"inputs for another phase", hoHead + "## Inputs for Phase 3\n", 5, `section "Inputs for Phase 3" does not match the title's phase 2 (want "Inputs for Phase 2")`},
		{"inputs for phase M", hoHead + "## Inputs for Phase M\n", 5, `section "Inputs for Phase M" does not match the title's phase 2 (want "Inputs for Phase 2")`},
		{"duplicate section", hoHead + "## Shed Receipt\n- a → b\n\n##  Shed Receipt \n", 8, `duplicate section "Shed Receipt" (first on line 5)`},
		{"numbered item", hoHead + "## Active Constraints\n1. c\n", 6, `want a "- " bullet in section "Active Constraints", found "1. c"`},
		{"star bullet", hoHead + "## Active Constraints\n* c\n", 6, `want a "- " bullet in section "Active Constraints", found "* c"`},
		{"input without bold name", hoHead + "## Inputs for Phase 2\n- Plan: docs/p.md\n", 6, `want an input "- **<name>:** <value>", found "Plan: docs/p.md"`},
		{"input without colon", hoHead + "## Inputs for Phase 2\n- **Plan** docs/p.md\n", 6, `want an input "- **<name>:** <value>", found "**Plan** docs/p.md"`},
		{"input not closed", hoHead + "## Inputs for Phase 2\n- **Plan: docs/p.md\n", 6, `want an input "- **<name>:** <value>", found "**Plan: docs/p.md"`},
		{"input with empty name", hoHead + "## Inputs for Phase 2\n- **:** v\n", 6, `empty input name`},
		{"CRLF line numbers", "# Phase Handoff: 1 → 2\r\n**Timestamp:** t\r\n**Goal:** g\r\n**Mode:** m\r\n\r\n## Shed Receipt\r\n\r\nprose\r\n", 8,
			`want a "- " bullet in section "Shed Receipt", found "prose"`},
		{"long line clipped", hoHead + "## Shed Receipt\n" + strings.Repeat("x", 80) + "\n", 6,
			`want a "- " bullet in section "Shed Receipt", found "` + strings.Repeat("x", 57) + `..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHandoff([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseHandoff succeeded: %#v", h)
			}
			var he *HandoffError
			if !errors.As(err, &he) {
				t.Fatalf("error %T %v, want *HandoffError", err, err)
			}
			if he.Line != tt.line || he.Msg != tt.msg {
				t.Errorf("error = line %d %q\n      want line %d %q", he.Line, he.Msg, tt.line, tt.msg)
			}
			if want := "line " + strconv.Itoa(tt.line) + ": " + tt.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if !reflect.DeepEqual(h, Handoff{}) {
				t.Errorf("handoff on error = %#v, want zero", h)
			}
		})
	}
}

func TestHandoffRender(t *testing.T) {
	tests := []struct {
		name string
		h    Handoff
		want string
	}{
		{
			name: "empty lists and values",
			h:    Handoff{From: 3, To: 4},
			want: "# Phase Handoff: 3 → 4\n**Timestamp:**\n**Goal:**\n**Mode:**\n\n## Inputs for Phase 4\n\n" +
				"## Decisions Carried Forward\n\n## Active Constraints\n\n## Shed Receipt\n",
		},
		{
			name: "empty parts of items",
			h: Handoff{From: 1, To: 2, Timestamp: "t", Goal: "g", Mode: "refactor",
				Inputs:      []HandoffInput{{"Empty", ""}},
				Decisions:   []HandoffDecision{{"DEC-1", "", ""}, {"DEC-2", "", "why"}, {"", "", "why"}, {"", "", ""}},
				Constraints: []string{""},
				Shed:        []HandoffShed{{"", ""}, {"", "where"}, {"what", ""}},
			},
			want: "# Phase Handoff: 1 → 2\n**Timestamp:** t\n**Goal:** g\n**Mode:** refactor\n\n" +
				"## Inputs for Phase 2\n- **Empty:**\n\n" +
				"## Decisions Carried Forward\n- [DEC-1]\n- [DEC-2] : why\n- : why\n-\n\n" +
				"## Active Constraints\n-\n\n" +
				"## Shed Receipt\n-\n- → where\n- what\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.h.Render()); got != tt.want {
				t.Errorf("Render:\n%q\nwant\n%q", got, tt.want)
			}
			hoRoundTrip(t, tt.h)
		})
	}
}

func TestHandoffRoundTripValues(t *testing.T) {
	for _, h := range []Handoff{
		hoGoldenValue,
		{From: 1, To: 2, Timestamp: "2026-04-13T15:00:00+02:00", Mode: "feature",
			Goal: "Line one\n\n  indented: **bold**\n- a bullet\n# a hash line\n**Other:** text"},
		{From: 2, To: 3, Goal: "g",
			Inputs:    []HandoffInput{{"a:b", "c: d"}, {"*x", "**y**"}, {"name with spaces", "→ arrow -> too"}},
			Decisions: []HandoffDecision{{"DEC-1", "t", "r: with: colons"}, {"", "[DEC-x] t", ""}, {"DEC-7", "[DEC-8] nested", "r"}, {"", "a:", "b"}, {"", "ends with colon:", ""}},
			Shed:      []HandoffShed{{"w", "a → b -> c"}, {"→x", "y"}, {"what→", ""}, {"a -->", "b"}, {"", "-> where"}, {"", "→"}},
		},
		{From: 3, To: 4, Timestamp: "t", Goal: "g", Mode: "m", Constraints: []string{"- nested", "[DEC-1] looks like a decision", "**x:** y"}},
	} {
		hoRoundTrip(t, h)
	}
}

func TestHandoffErrorString(t *testing.T) {
	err := error(&HandoffError{Line: 3, Msg: `unknown section "Notes"`})
	if got, want := err.Error(), `line 3: unknown section "Notes"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func FuzzParseHandoff(f *testing.F) {
	f.Add([]byte(hoGolden))
	f.Add([]byte(hoHead))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHandoff(data)
		if err != nil {
			var he *HandoffError
			if !errors.As(err, &he) {
				t.Fatalf("error %T %v, want *HandoffError", err, err)
			}
			if he.Line < 0 {
				t.Fatalf("negative line in %v", err)
			}
			if !reflect.DeepEqual(h, Handoff{}) {
				t.Fatalf("non-zero handoff with error %v: %#v", err, h)
			}
			return
		}
		out := h.Render()
		h2, err := ParseHandoff(out)
		if err != nil {
			t.Fatalf("ParseHandoff(Render()): %v\ninput %q\nrendered %q", err, data, out)
		}
		if !reflect.DeepEqual(h, h2) {
			t.Fatalf("round trip differs:\n got %#v\nwant %#v\ninput %q\nrendered %q", h2, h, data, out)
		}
		if again := h2.Render(); string(again) != string(out) {
			t.Fatalf("render not stable:\n%q\n%q", out, again)
		}
	})
}
