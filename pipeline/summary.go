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
	Gates        map[string]string `json:"gates"` // design, plan, impl: a GateOutcome
}

// Outcomes of a quality gate at the end of a run.
const (
	GatePassed  = "PASS"
	GateSkipped = "USER_SKIP" // skipped, and the user acknowledged it
	GateMissing = "MISSING"   // neither passed nor skipped with an acknowledgement
)

// QualityGates are the three quality gates, in crucible's words and order.
var QualityGates = []struct {
	Name  string
	Phase ledger.Phase
}{{"design", ledger.Design}, {"plan", ledger.Plan}, {"impl", ledger.Completion}}

// GateOutcome classifies a quality gate's ledger entry.
func GateOutcome(e ledger.Entry) string {
	switch {
	case e.Status == ledger.Pass:
		return GatePassed
	case e.Status == ledger.Skipped && e.Acknowledged:
		return GateSkipped
	}
	return GateMissing
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
	if m.FirstStart != "" && m.LastFinish != "" {
		r.WallClockS = Seconds(m.FirstStart, m.LastFinish)
	}
	for _, g := range QualityGates {
		r.GateRounds[g.Name] = m.GateRounds[strconv.Itoa(int(g.Phase))]
		r.Gates[g.Name] = GateOutcome(*st.Gates.Ledger.Entry(g.Phase))
	}
	return r
}

func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}
