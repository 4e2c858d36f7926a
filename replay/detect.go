package replay

import (
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/pipespec"
)

// Evidence is what the repository shows of a source's work.
type Evidence struct {
	// Commits are the dispatch seqs with a commit on the branch: by its
	// Crucible-Seq trailer, its provenance note, or the engine's message.
	Commits map[int]bool
	// Checkpoints are the ids the shadow repository holds; nil when it
	// was not read (a dry run of a source from another machine).
	Checkpoints map[string]bool
	Branch      string // the branch the commits were looked for on
}

// Options override the detected resume point.
type Options struct {
	FromPhase ledger.Phase // 0: detect
	FromSeq   int          // 0: none; else its enclosing phase
	// CurrentTree resumes on the work tree as it is: no checkpoint is
	// restored, so none is looked for.
	CurrentTree bool
}

// PhaseState is a phase of the source's run.
type PhaseState struct {
	Phase      ledger.Phase `json:"phase"`
	Dispatches int          `json:"dispatches"`
	Open       []int        `json:"open"`     // seqs neither settled nor retried to completion
	Expected   bool         `json:"expected"` // it has what its spec steps expect
	Complete   bool         `json:"complete"`
	// Unverified are its completed dispatches whose artifacts are missing.
	Unverified []Problem `json:"unverified"`
}

// Problem is a dispatch that failed verification, and why.
type Problem struct {
	Seq int    `json:"seq"`
	Why string `json:"why"`
}

// Resume is where a replay resumes, and what it keeps and redoes.
type Resume struct {
	Phases [4]PhaseState `json:"phases"`
	// Crash is where the run stopped: its phase, and what happened there;
	// Phase 0 when every phase is complete.
	Crash struct {
		Phase   ledger.Phase `json:"phase"`
		Context string       `json:"context"`
	} `json:"crash"`
	Detected ledger.Phase `json:"detected"` // the verified boundary found; 0 when none is needed
	Phase    ledger.Phase `json:"phase"`    // where it resumes: Detected, or the override
	// Boundary is Phase's checkpoint; Gone says the shadow no longer holds it.
	Boundary Boundary `json:"boundary"`
	Gone     bool     `json:"gone"`
	// Notes say how the resume point was reached: fallbacks, overrides.
	Notes []string `json:"notes"`
	// Skip are the dispatches of phases before Phase; Redo those of Phase
	// and later, in seq order.
	Skip []Dispatch `json:"skip"`
	Redo []Dispatch `json:"redo"`
	// Preserved is the time the skipped dispatches took, in seconds.
	Preserved int `json:"preserved_s"`
}

// OverrideError is an override naming nothing the source has.
type OverrideError struct{ Msg string }

func (e *OverrideError) Error() string { return e.Msg }

// Detect finds where src resumes: the first phase not complete — a phase
// is complete when every dispatch in it settled (completed, skipped, or
// retried to completion) and it has what its spec steps expect — fallen
// back boundary by boundary past any phase whose completed dispatches'
// artifacts ev does not show, or the override. Its cost is one pass over
// the dispatches and the spec, however many phases and replays came before.
func Detect(src *Source, sp *pipespec.Spec, ev Evidence, opts Options) (*Resume, error) {
	r := &Resume{}
	retried := map[int]bool{}
	for _, d := range src.Dispatches {
		if d.RetryOf != nil && d.Settled() {
			retried[*d.RetryOf] = true
		}
	}
	// Retries of retries: a seq settles when the dispatch retrying it does.
	for i := len(src.Dispatches) - 1; i >= 0; i-- {
		if d := src.Dispatches[i]; d.RetryOf != nil && retried[d.Seq] {
			retried[*d.RetryOf] = true
		}
	}
	var lastOpen *Dispatch
	for i := range src.Dispatches {
		d := &src.Dispatches[i]
		ps := &r.Phases[d.Phase-1]
		ps.Dispatches++
		if !d.Settled() && !retried[d.Seq] {
			ps.Open = append(ps.Open, d.Seq)
			lastOpen = d
			continue
		}
		if d.Status == "completed" {
			if why := unverified(d, sp, ev); why != "" {
				ps.Unverified = append(ps.Unverified, Problem{Seq: d.Seq, Why: why})
			}
		}
	}
	for i := range r.Phases {
		ps := &r.Phases[i]
		ps.Phase = ledger.Phase(i + 1)
		ps.Expected = expected(src, sp, ps.Phase, r.Phases[:])
		ps.Complete = len(ps.Open) == 0 && ps.Expected
		if !ps.Complete && r.Detected == 0 {
			r.Detected = ps.Phase
		}
	}
	r.crash(src, sp, lastOpen)
	// Fall back past unverified work, the latest boundary first.
	top := r.Detected
	if top == 0 {
		top = ledger.Completion + 1
	}
	for q := top - 1; q >= ledger.Design; q-- {
		if u := r.Phases[q-1].Unverified; len(u) > 0 {
			d := src.Find(u[0].Seq)
			r.Notes = append(r.Notes, fmt.Sprintf("%s not verified: dispatch %d (%s) %s; falling back to the Phase %d boundary",
				boundaryName(top), d.Seq, who(d), u[0].Why, q))
			top, r.Detected = q, q
		}
	}
	r.Phase = r.Detected
	if err := r.override(src, opts); err != nil {
		return nil, err
	}
	if r.Phase == 0 {
		return r, nil
	}
	if r.Boundary = src.Boundaries[r.Phase]; !opts.CurrentTree {
		r.boundary(src, ev)
	}
	for _, d := range src.Dispatches {
		if d.Phase < r.Phase {
			r.Skip = append(r.Skip, d)
			r.Preserved += d.Duration
		} else {
			r.Redo = append(r.Redo, d)
		}
	}
	return r, nil
}

// boundaryName names the boundary of phase p (past Phase 4: the end).
func boundaryName(p ledger.Phase) string {
	if p > ledger.Completion {
		return "the end of the pipeline"
	}
	return fmt.Sprintf("the Phase %d boundary", p)
}

// who is a dispatch's role, and its task when it has one.
func who(d *Dispatch) string {
	if d.Task != "" {
		return d.Role + ", task " + d.Task
	}
	return d.Role
}

// unverified says why completed dispatch d's artifact is missing, "" when
// it is there or it has none to check: an implementer's commit on the
// branch, a judge's (red team, reviewer) kept output.
func unverified(d *Dispatch, sp *pipespec.Spec, ev Evidence) string {
	switch judge, mutates := kindOf(d, sp); {
	case mutates && !ev.Commits[d.Seq]:
		branch := ev.Branch
		if branch == "" {
			branch = "HEAD"
		}
		return "has no commit on branch " + branch
	case judge && !d.Output:
		return "has no output kept"
	}
	return ""
}

// kindOf says whether d judges (a gate's or review loop's own role) or
// mutates the code (an implementer), by its spec step when the engine ran
// it, else by crucible's role names.
func kindOf(d *Dispatch, sp *pipespec.Spec) (judge, mutates bool) {
	if d.Step != "" {
		if l, ok := sp.Find(d.Step); ok {
			return l.Step.Rounds() && d.Role == l.Step.Role, d.Role == "implementer"
		}
	}
	role := strings.ToLower(d.Role)
	judge = strings.Contains(role, "review") || strings.Contains(role, "red-team") || strings.Contains(role, "inquisitor")
	return judge, role == "implementer"
}

// expected reports whether phase p has what its spec steps expect: every
// step done, by the engine's step events; without them, the ledger's PASS
// (COMPLETE for Phase 3); without a ledger, dispatches in a later phase.
func expected(src *Source, sp *pipespec.Spec, p ledger.Phase, phases []PhaseState) bool {
	switch {
	case src.Steps != nil:
		ph := sp.Phase(p)
		if ph == nil {
			return false
		}
		for _, st := range ph.Steps {
			if src.Steps[pipeline.Point{Phase: p, Step: st.ID}].Status != pipeline.StepDone {
				return false
			}
		}
		return true
	case src.Ledger != nil:
		s := src.Ledger.Entry(p).Status
		return s == ledger.Pass || s == ledger.Complete || s == ledger.Skipped && src.Ledger.Entry(p).Acknowledged
	}
	for _, later := range phases[p:] {
		if later.Dispatches > 0 {
			return true
		}
	}
	return false
}

// crash says where the run stopped: at the newest dispatch not settled,
// else at the first step not done, else after the last dispatch.
func (r *Resume) crash(src *Source, sp *pipespec.Spec, open *Dispatch) {
	c := &r.Crash
	switch {
	case open != nil:
		c.Phase = open.Phase
		state := "was in flight (no final entry)"
		if open.Status != "dispatched" {
			state = open.Status
			if open.Summary != "" {
				state += ": " + open.Summary
			}
		}
		c.Context = fmt.Sprintf("dispatch %d (%s) %s", open.Seq, who(open), state)
	case r.Detected == 0:
		c.Context = "no crash: every phase is complete"
	default:
		c.Phase = r.Detected
		c.Context = "no dispatch in flight"
		if n := len(src.Dispatches); n > 0 {
			c.Context = fmt.Sprintf("after dispatch %d, no dispatch in flight", src.Dispatches[n-1].Seq)
		}
		if src.Steps != nil {
			if at, ok := stoppedAt(src, sp, r.Detected); ok {
				c.Context = at
			}
		}
	}
}

// stoppedAt is the first step of phase p not done, and how it ended.
func stoppedAt(src *Source, sp *pipespec.Spec, p ledger.Phase) (string, bool) {
	ph := sp.Phase(p)
	if ph == nil {
		return "", false
	}
	for _, st := range ph.Steps {
		d, ok := src.Steps[pipeline.Point{Phase: p, Step: st.ID}]
		if d.Status == pipeline.StepDone {
			continue
		}
		if !ok {
			return "step " + st.ID + " not run", true
		}
		s := fmt.Sprintf("step %s %s", st.ID, d.Status)
		if d.Result != "" {
			s += ": " + d.Result
		}
		return s, true
	}
	return "", false
}

// override applies --from-phase or --from-seq.
func (r *Resume) override(src *Source, opts Options) error {
	from := opts.FromPhase
	if opts.FromSeq != 0 {
		d := src.Find(opts.FromSeq)
		if d == nil && src.Replaced[opts.FromSeq] {
			return &OverrideError{Msg: fmt.Sprintf("dispatch %d of pipeline %s was run again by a replay: name one of the run replay resumes", opts.FromSeq, src.Pipeline)}
		}
		if d == nil {
			last := 0
			if n := len(src.Dispatches); n > 0 {
				last = src.Dispatches[n-1].Seq
			}
			return &OverrideError{Msg: fmt.Sprintf("pipeline %s has no dispatch %d (its dispatches are 1 to %d)", src.Pipeline, opts.FromSeq, last)}
		}
		from = d.Phase
		r.Notes = append(r.Notes, fmt.Sprintf("dispatch %d is in Phase %d: resuming at that phase's start", d.Seq, from))
	}
	switch {
	case from == 0:
		return nil
	case !from.Valid():
		return &OverrideError{Msg: fmt.Sprintf("there is no Phase %d: phases are 1 to 4", from)}
	case r.Detected != 0 && from < r.Detected, r.Detected == 0:
		r.Notes = append(r.Notes, fmt.Sprintf("Phase %d is earlier than the detected resume point (%s): verified work is done again",
			from, detectedName(r.Detected)))
	case from > r.Detected:
		r.Notes = append(r.Notes, fmt.Sprintf("Phase %d is later than the detected resume point (Phase %d): work not verified is kept",
			from, r.Detected))
	}
	r.Phase = from
	return nil
}

func detectedName(p ledger.Phase) string {
	if p == 0 {
		return "none: every phase is complete"
	}
	return fmt.Sprintf("Phase %d", p)
}

// boundary maps the resume phase to its checkpoint, falling back to an
// earlier boundary's when the shadow no longer holds it.
func (r *Resume) boundary(src *Source, ev Evidence) {
	want := r.Phase
	if ev.Checkpoints == nil || r.Boundary.Checkpoint != "" && ev.Checkpoints[r.Boundary.Checkpoint] {
		return
	}
	r.Gone = true
	gone := fmt.Sprintf("the Phase %d boundary's checkpoint (%s) is gone", want, r.Boundary.Reason)
	if r.Boundary.Checkpoint == "" {
		gone = fmt.Sprintf("the Phase %d boundary has no checkpoint (%s) recorded", want, r.Boundary.Reason)
	}
	for q := want - 1; q >= ledger.Design; q-- {
		if b := src.Boundaries[q]; b.Checkpoint != "" && ev.Checkpoints[b.Checkpoint] {
			r.Notes = append(r.Notes, fmt.Sprintf("%s; falling back to the Phase %d boundary (%s)", gone, q, b.Reason))
			r.Phase, r.Boundary, r.Gone = q, b, false
			return
		}
	}
	r.Notes = append(r.Notes, gone+", and no earlier one is left")
}
