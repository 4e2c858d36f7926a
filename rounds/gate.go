// Package rounds holds the rules that decide, round after round, whether a
// quality gate or a review loop passes, goes on, or escalates: crucible's
// weighted scoring, progress, stagnation, regression and circuit breaker.
// It does no I/O: the engine feeds it each round's findings and acts on the
// Decision, which also carries the decision-journal entries to record.
//
// Gates are crucible's quality gate: a fresh red-team round each time, score
// 3·Fatal + 1·Significant (Minor 0), a pass on 0 Fatal and 0 Significant,
// progress when the score is strictly lower or Fatal drops at no higher
// score, an immediate escalation on a higher score (regression) or on no
// progress (stagnation), and a breaker after MaxRounds. Review loops are
// the build skill's iterative reviews: progress only on strictly fewer
// issues (Fatal + Significant), the same or more is stagnation.
package rounds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/report"
)

// DefaultMaxRounds is crucible's circuit breaker: the round after which a
// gate that has not passed escalates whatever its trend.
const DefaultMaxRounds = 15

// Severity weights of the quality gate's score.
const (
	FatalWeight       = 3
	SignificantWeight = 1
)

// The verdicts a gate ends with, as crucible's verdict marker (version 2)
// spells them.
const (
	VerdictPass       = "PASS"
	VerdictStagnation = "STAGNATION"
	// VerdictRegression is a score that rose. Crucible's quality gate
	// escalates on the first rise ("the fix cycle introduced new issues"),
	// and its marker names that verdict SUSTAINED_REGRESSION.
	VerdictRegression = "SUSTAINED_REGRESSION"
	VerdictBreaker    = "ESCALATED"
	// VerdictArchitectural is a round that raised an architectural
	// concern: it escalates at once, whatever the round.
	VerdictArchitectural = "ARCHITECTURAL"
)

// Decision types of the journal entries a round produces.
const (
	JournalGateRound   = "gate-round"
	JournalReviewRound = "review-round"
	JournalEscalation  = "escalation"
)

// Counts is a round's findings by severity.
type Counts struct {
	Fatal, Significant, Minor int
	Architectural             int // concerns that escalate at once
}

// CountsOf counts f.
func CountsOf(f report.Findings) Counts {
	return Counts{Fatal: len(f.Fatal), Significant: len(f.Significant), Minor: len(f.Minor), Architectural: len(f.Architectural)}
}

// Score is the quality gate's weight of c.
func (c Counts) Score() int { return FatalWeight*c.Fatal + SignificantWeight*c.Significant }

// Issues is what a review loop counts: the findings that block.
func (c Counts) Issues() int { return c.Fatal + c.Significant }

// Score is the quality gate's weight of f: 3·Fatal + 1·Significant.
func Score(f report.Findings) int { return CountsOf(f).Score() }

func (c Counts) String() string {
	return fmt.Sprintf("%d Fatal, %d Significant, %d Minor", c.Fatal, c.Significant, c.Minor)
}

// Action is what the engine does after a round.
type Action int

const (
	// Continue: dispatch the fixer on the findings, then the next round.
	Continue Action = iota
	// Pass: the gate or loop is done and clean.
	Pass
	// Escalate: stop and hand the findings to a person (Decision.Verdict
	// says why); the phase fails.
	Escalate
)

func (a Action) String() string {
	switch a {
	case Continue:
		return "continue"
	case Pass:
		return "pass"
	case Escalate:
		return "escalate"
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Decision is the outcome of one round.
type Decision struct {
	Action  Action
	Round   int // 1-based
	Counts  Counts
	Score   int    // the gate's score, or the review loop's issue count
	Verdict string // PASS, STAGNATION, SUSTAINED_REGRESSION or ESCALATED; "" on Continue
	Reason  string // one sentence on why
	// Suggestion is, on Escalate, one sentence on what a person can do.
	Suggestion string
	// Journal is what the decision journal records for this round: a
	// gate-round (or review-round) entry, and an escalation entry when the
	// round escalates.
	Journal []JournalEntry
}

// JournalEntry is one decision-journal entry of a round: the engine
// records it as the chain's decision event.
type JournalEntry struct {
	Type, Choice, Reason, Alternatives string
	// Suggestion is, on an escalation, one sentence on what a person can do.
	Suggestion string
}

// suggestions are the next step offered with each escalation.
var suggestions = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		VerdictStagnation:    "Review the findings that keep coming back with the user, and re-work the artifact or decide to skip the gate.",
		VerdictRegression:    "The last fix made things worse: restore the checkpoint taken before it, or fix the new findings by hand.",
		VerdictBreaker:       "Review the whole round history with the user before any further round.",
		VerdictArchitectural: "Settle the architectural concern with the user: it is beyond what a fix round may change.",
	}
}}

// rules is what differs between a gate and a review loop.
type rules struct {
	name    string           // "quality gate" or "review loop"
	journal string           // decision type of a round's entry
	measure func(Counts) int // what must fall
	judge   func(n int, prev, cur Counts) (verdict, why string)
	first   func(Counts) string // round 1's measure, as a phrase
}

// loop is a gate or review loop under way: the rounds so far, and the
// final decision once there is one.
type loop struct {
	rules
	max    int
	rounds []Counts
	final  *Decision
}

// Gate is a quality gate under way.
type Gate struct{ loop }

// Review is an iterative review loop under way.
type Review struct{ loop }

// New starts a quality gate that escalates after max rounds
// (DefaultMaxRounds when max < 1).
func New(max int) *Gate {
	return &Gate{newLoop(max, rules{name: "quality gate", journal: JournalGateRound, measure: Counts.Score, judge: judgeGate,
		first: func(c Counts) string { return "score " + strconv.Itoa(c.Score()) }})}
}

// NewReview starts a review loop that escalates after max rounds
// (DefaultMaxRounds when max < 1). Fewer issues every round ends it by
// itself; the breaker bounds a reviewer that reports hundreds.
func NewReview(max int) *Review {
	return &Review{newLoop(max, rules{name: "review loop", journal: JournalReviewRound, measure: Counts.Issues, judge: judgeReview,
		first: func(c Counts) string { return issues(c.Issues()) }})}
}

func newLoop(max int, r rules) loop {
	if max < 1 {
		max = DefaultMaxRounds
	}
	return loop{rules: r, max: max}
}

// judgeGate: a higher score is a regression; progress is a strictly lower
// score, or fewer Fatal at the same score; anything else is stagnation.
// why is a sentence on an escalation, a phrase on progress.
func judgeGate(n int, prev, cur Counts) (verdict, why string) {
	switch {
	case cur.Score() > prev.Score():
		return VerdictRegression, fmt.Sprintf("Round %d's score %d is higher than round %d's %d: the fix introduced new issues.",
			n, cur.Score(), n-1, prev.Score())
	case cur.Score() < prev.Score():
		return "", fmt.Sprintf("score %d, down from %d", cur.Score(), prev.Score())
	case cur.Fatal < prev.Fatal:
		return "", fmt.Sprintf("score %d as before, with %d Fatal down from %d", cur.Score(), cur.Fatal, prev.Fatal)
	}
	return VerdictStagnation, fmt.Sprintf("Round %d's score %d is no lower than round %d's and Fatal did not drop: the fixes stopped making progress.",
		n, cur.Score(), n-1)
}

// judgeReview: strictly fewer issues is progress, the same or more is
// stagnation.
func judgeReview(n int, prev, cur Counts) (verdict, why string) {
	if cur.Issues() < prev.Issues() {
		return "", fmt.Sprintf("%s, down from %d", issues(cur.Issues()), prev.Issues())
	}
	return VerdictStagnation, fmt.Sprintf("Round %d has %s, no fewer than round %d's %d: the fixes stopped making progress.",
		n, issues(cur.Issues()), n-1, prev.Issues())
}

func issues(n int) string { return plural(n, "issue") }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Round judges a round's findings.
func (l *loop) Round(f report.Findings) Decision {
	concern := ""
	if len(f.Architectural) > 0 {
		concern = f.Architectural[0].Title
	}
	return l.record(CountsOf(f), concern)
}

// Record judges a round from its counts, as Round does; the engine replays
// the rounds it recorded through it when it resumes. Negative counts are
// taken as 0. Once a round passed or escalated, the loop is over: Record
// returns that final decision again and records nothing.
func (l *loop) Record(c Counts) Decision { return l.record(c, "") }

// record is Record, concern the first architectural concern's title when
// it is known.
func (l *loop) record(c Counts, concern string) Decision {
	if l.final != nil {
		return *l.final
	}
	c = Counts{Fatal: max(c.Fatal, 0), Significant: max(c.Significant, 0), Minor: max(c.Minor, 0), Architectural: max(c.Architectural, 0)}
	l.rounds = append(l.rounds, c)
	n := len(l.rounds)
	d := Decision{Round: n, Counts: c, Score: l.measure(c)}

	verdict, why := "", l.first(c)
	if n > 1 {
		verdict, why = l.judge(n, l.rounds[n-2], c)
	}
	switch {
	case c.Architectural > 0:
		d.Action, d.Verdict = Escalate, VerdictArchitectural
		d.Reason = fmt.Sprintf("Round %d raised %s", n, plural(c.Architectural, "architectural concern"))
		if concern != "" {
			d.Reason += ": " + strings.TrimSuffix(concern, ".")
		}
		d.Reason += ". It goes to a person at once, whatever the round."
	case c.Fatal == 0 && c.Significant == 0:
		d.Action, d.Verdict = Pass, VerdictPass
		d.Reason = fmt.Sprintf("Round %d found no Fatal or Significant issue.", n)
	case verdict != "":
		d.Action, d.Verdict, d.Reason = Escalate, verdict, why
	case n >= l.max:
		d.Action, d.Verdict = Escalate, VerdictBreaker
		d.Reason = fmt.Sprintf("Round %d reached the %d-round limit with %s: circuit breaker.", n, l.max, l.first(c))
	default:
		d.Action = Continue
		d.Reason = fmt.Sprintf("Round %d: %s; fix and run round %d.", n, why, n+1)
	}
	d.Suggestion = suggestions.Get()[d.Verdict]
	d.Journal = l.journalFor(d)
	if d.Action != Continue {
		l.final = &d
	}
	return d
}

func (l *loop) journalFor(d Decision) []JournalEntry {
	choice := map[Action]string{
		Continue: "fix and run round " + strconv.Itoa(d.Round+1),
		Pass:     "pass",
		Escalate: "escalate (" + d.Verdict + ")",
	}[d.Action]
	alternatives := "none"
	if d.Action == Escalate {
		alternatives = "another fix round"
	}
	entries := []JournalEntry{{
		Type:         l.journal,
		Choice:       fmt.Sprintf("round %d: %s", d.Round, choice),
		Reason:       fmt.Sprintf("%s: %s", d.Counts, d.Reason),
		Alternatives: alternatives,
	}}
	if d.Action == Escalate {
		entries = append(entries, JournalEntry{
			Type:         JournalEscalation,
			Choice:       fmt.Sprintf("%s %s at round %d", l.name, d.Verdict, d.Round),
			Reason:       d.Reason,
			Alternatives: alternatives,
			Suggestion:   d.Suggestion,
		})
	}
	return entries
}

// Rounds returns the counts of the rounds recorded so far.
func (l *loop) Rounds() []Counts { return append([]Counts(nil), l.rounds...) }

// Done reports whether a round passed or escalated.
func (l *loop) Done() bool { return l.final != nil }

// Trajectory is the measure of each round so far, oldest first: the gate's
// scores, or the review loop's issue counts.
func (l *loop) Trajectory() []string {
	out := make([]string, len(l.rounds))
	for i, c := range l.rounds {
		out[i] = strconv.Itoa(l.measure(c))
	}
	return out
}

// Final is the round that passed or escalated, if one did.
func (l *loop) Final() (Decision, bool) {
	if l.final == nil {
		return Decision{}, false
	}
	return *l.final, true
}
