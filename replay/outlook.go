package replay

import (
	"slices"
	"strconv"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Outlook is what a replay of a pipeline would do, as its state alone
// says: status shows it on every call, so it reads no chain. Detect reads
// the chain and checks the work kept, and may fall back further.
type Outlook struct {
	// Phase is the boundary it resumes at: the first phase the ledger
	// has not closed.
	Phase ledger.Phase `json:"phase"`
	// InFlight are the dispatches started and never finished, which it
	// settles as interrupted.
	InFlight []int `json:"in_flight"`
	// Run, for a pipeline that is only a task run (git crucible run; its
	// ledger never began), is its manifest: running it again goes on, and
	// a replay of phases has nothing to replay. Phase is 0 then.
	Run string `json:"run,omitempty"`
}

// OutlookOf is st's Outlook; nil when there is nothing to resume: the
// pipeline is finished or abandoned, or nothing was ever dispatched in it.
func OutlookOf(st *pipeline.State) *Outlook {
	if st.Status != pipeline.StatusOpen || st.Finished() || st.Dispatch.Last == 0 {
		return nil
	}
	o := &Outlook{InFlight: []int{}}
	if d := st.View.DAG; TaskRunOnly(st) {
		if d.Status == "completed" {
			return nil
		}
		o.Run = d.Manifest
		if o.Run == "" {
			o.Run = "(its manifest)"
		}
		return o
	}
	for _, p := range ledger.Phases {
		if e := st.Gates.Ledger.Entry(p); !closed(*e) {
			o.Phase = p
			break
		}
	}
	if o.Phase == 0 {
		return nil
	}
	for seq := range st.Dispatch.InFlight {
		if n, err := strconv.Atoi(seq); err == nil {
			o.InFlight = append(o.InFlight, n)
		}
	}
	slices.Sort(o.InFlight)
	return o
}

// closed reports whether a phase's ledger entry lets the next one begin.
func closed(e ledger.Entry) bool {
	return e.Status == ledger.Pass || e.Status == ledger.Complete || e.Status == ledger.Skipped && e.Acknowledged
}

// TaskRunOnly reports whether st's pipeline is only a task run (git
// crucible run recorded in it; its ledger never began): there are no
// phases to replay, and running it again goes on with it.
func TaskRunOnly(st *pipeline.State) bool {
	return st.View.DAG != nil && st.Gates.Ledger.Entry(ledger.Design).Status == ledger.NotStarted
}
