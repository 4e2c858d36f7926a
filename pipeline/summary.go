package pipeline

import (
	"strconv"

	"github.com/git-crucible/git-crucible/ledger"
)

// Summary is a pipeline's run summary: what `metrics` reports.
type Summary struct {
	Pipeline     string            `json:"pipeline"`
	Dispatches   int               `json:"dispatches"`
	ByRole       map[string]int    `json:"by_role"`
	ByTier       map[string]int    `json:"by_tier"`
	ActiveS      int               `json:"active_s"`
	WallClockS   int               `json:"wall_clock_s"`
	GateRounds   map[string]int    `json:"gate_rounds"` // design, plan, impl
	InputChars   int               `json:"input_chars"`
	OutputChars  int               `json:"output_chars"`
	InputTokens  int               `json:"est_input_tokens"`
	OutputTokens int               `json:"est_output_tokens"`
	Gates        map[string]string `json:"gates"` // design, plan, impl: a GateState's State
	// Cost is what the dispatches cost, as their clients reported it,
	// with estimates by size for the others (Service.Cost); nil when not
	// read. InputTokens and OutputTokens above stay crucible's estimates
	// of every dispatch.
	Cost *Cost `json:"cost,omitempty"`
}

// Where a quality gate stands. GateStates decides it for metrics and for
// the status file alike, so the two never disagree.
const (
	GatePassed     = "PASS"
	GateSkipped    = "USER_SKIP"   // skipped, and the user acknowledged it
	GateUnacked    = "SKIPPED"     // skipped, not acknowledged
	GateRunning    = "IN_PROGRESS" // its phase is under way
	GateFailed     = "FAIL"        // its phase failed
	GateInferred   = "INFERRED"    // its phase was inferred; the gate has yet to run
	GateNotReached = "NOT_REACHED" // neither its phase nor any later one has begun
	GateMissing    = "MISSING"     // a later phase began, or its phase ended, without it
)

// QualityGates are the three quality gates, in crucible's words and order.
var QualityGates = []struct {
	Name  string
	Phase ledger.Phase
}{{"design", ledger.Design}, {"plan", ledger.Plan}, {"impl", ledger.Completion}}

// GateState is where one quality gate stands.
type GateState struct {
	Name   string       // design, plan or impl
	Phase  ledger.Phase // the phase it closes
	State  string       // one of the Gate* values
	Rounds int          // rounds of its newest verdict
}

// GateStates is where each of st's quality gates stands, in order.
func GateStates(st *State) []GateState {
	l := &st.Gates.Ledger
	out := make([]GateState, len(QualityGates))
	for i, g := range QualityGates {
		out[i] = GateState{Name: g.Name, Phase: g.Phase, State: gateState(*l.Entry(g.Phase), l.Current() > g.Phase),
			Rounds: st.View.Metrics.GateRounds[strconv.Itoa(int(g.Phase))]}
	}
	return out
}

// gateState classifies a gate's ledger entry; passed says a later phase
// has begun.
func gateState(e ledger.Entry, passed bool) string {
	switch e.Status {
	case ledger.Pass:
		return GatePassed
	case ledger.Skipped:
		if e.Acknowledged {
			return GateSkipped
		}
		return GateUnacked
	case ledger.InProgress:
		return GateRunning
	case ledger.Fail:
		return GateFailed
	case ledger.Inferred:
		return GateInferred
	case ledger.NotStarted:
		if !passed {
			return GateNotReached
		}
	}
	return GateMissing // COMPLETE (a gated phase ends PASS), or NOT_STARTED and passed by
}

// GateNeedsAttention reports whether a gate in state s stands in the way:
// it is neither passed, skipped with acknowledgement, under way nor still
// ahead.
func GateNeedsAttention(s string) bool {
	switch s {
	case GatePassed, GateSkipped, GateRunning, GateNotReached:
		return false
	}
	return true
}

// Summarize is st's run summary. Tokens are estimated as characters / 4.
func Summarize(st *State) Summary {
	m := st.View.Metrics
	r := Summary{Pipeline: st.ID, ByRole: orEmpty(m.ByRole), ByTier: orEmpty(m.ByTier), ActiveS: m.ActiveS(),
		InputChars: m.InputChars, OutputChars: m.OutputChars, InputTokens: m.InputChars / 4, OutputTokens: m.OutputChars / 4,
		GateRounds: map[string]int{}, Gates: map[string]string{}}
	for _, n := range m.ByRole {
		r.Dispatches += n
	}
	r.WallClockS = m.wallClock()
	for _, g := range GateStates(st) {
		r.GateRounds[g.Name], r.Gates[g.Name] = g.Rounds, g.State
	}
	return r
}

func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// wallClock is the wall clock from the first dispatch (or the imported
// run's start) to the last finish, 0 when either is not known.
func (m *Metrics) wallClock() int {
	if m.FirstStart == "" || m.LastFinish == "" {
		return 0
	}
	return Seconds(m.FirstStart, m.LastFinish)
}

// ImportedOnly reports whether st is a run imported from crucible's
// files that has done nothing here since: its last event is an import's.
func (st *State) ImportedOnly() bool { return st.Import.Seq != 0 && st.Import.Seq == st.Seq }

// Elapsed is how long pipeline st has run, in seconds, at time now: from
// its start to now; for a run imported from crucible's files that has done
// nothing here since, its own recorded span instead, metrics' wall clock
// (from its start to the last time its files record), for now says
// nothing of when it ran.
func Elapsed(st *State, now string) int {
	if st.ImportedOnly() {
		return st.View.Metrics.wallClock()
	}
	return Seconds(st.Created, now)
}
