package ledger

import (
	"fmt"
	"strings"
)

// SkipConfirmation is the only text that acknowledges a skipped gate.
const SkipConfirmation = "SKIP GATE"

// Entry is one phase block of the ledger file.
type Entry struct {
	Status       Status `json:"status"`
	Gate         string `json:"gate,omitempty"`
	Artifact     string `json:"artifact,omitempty"`
	Tasks        string `json:"tasks,omitempty"`
	Reason       string `json:"reason,omitempty"`
	Acknowledged bool   `json:"acknowledged,omitempty"`
	PipelineID   string `json:"pipeline_id,omitempty"`
}

// Ledger is the content of crucible's build-gate-ledger.md.
type Ledger struct {
	Run        string   `json:"run"`
	PipelineID string   `json:"pipeline_id"`
	Goal       string   `json:"goal"`
	Mode       string   `json:"mode"`
	Phases     [4]Entry `json:"phases"`
}

// Entry returns the block of phase p.
func (l *Ledger) Entry(p Phase) *Entry { return &l.Phases[p-1] }

// Verdict is a quality-gate verdict recorded for a phase.
type Verdict struct {
	Verdict    string `json:"verdict"`
	PipelineID string `json:"pipeline_id"`
	Seq        int64  `json:"seq"`
}

// Track is what the machine remembers per phase beyond the file: when the
// phase last (re)started and the newest verdict given since then.
type Track struct {
	Since   int64    `json:"since,omitempty"`
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Machine is the gate ledger with the bookkeeping its rules need.
type Machine struct {
	Ledger  Ledger   `json:"ledger"`
	Track   [4]Track `json:"track"`
	LastSeq int64    `json:"last_seq"`
}

// New returns a ledger with every phase NOT_STARTED.
func New(pipelineID, run, goal, mode string) Machine {
	m := Machine{Ledger: Ledger{Run: run, PipelineID: pipelineID, Goal: goal, Mode: mode}}
	for i := range m.Ledger.Phases {
		m.Ledger.Phases[i].Status = NotStarted
	}
	return m
}

// Kind names a ledger action.
type Kind string

const (
	Begin         Kind = "begin"
	PassGate      Kind = "pass"
	FailPhase     Kind = "fail"
	CompletePhase Kind = "complete"
	Skip          Kind = "skip"
	Ack           Kind = "ack"
	Infer         Kind = "infer"
	GiveVerdict   Kind = "verdict"
	// Reopen puts a phase and every later one back to NOT_STARTED, for a
	// replay to run them again: what they held stays in the history.
	Reopen Kind = "reopen"
)

// Kinds lists every action.
var Kinds = []Kind{Begin, PassGate, FailPhase, CompletePhase, Skip, Ack, Infer, GiveVerdict, Reopen}

// Action is one requested change to the ledger.
type Action struct {
	Kind       Kind
	Phase      Phase
	Seq        int64  // position in the pipeline's event order; strictly increasing
	Time       string // ISO-8601; becomes the phase's Gate field on a status change
	Reason     string // fail, skip, infer
	Artifact   string // pass
	Done       int    // complete: tasks done
	Total      int    // complete: tasks planned
	Confirm    string // ack: must be exactly SkipConfirmation
	Verdict    string // verdict: PASS, FAIL, STAGNATION, ...
	PipelineID string // verdict: the pipeline the verdict was given for
}

// IllegalError says an action is not a legal transition from the current state.
type IllegalError struct {
	Kind   Kind
	Phase  Phase
	Status Status
	Why    string
}

func (e *IllegalError) Error() string {
	return fmt.Sprintf("cannot %s phase %d (%s): %s", e.Kind, e.Phase, e.Phase.Name(), e.Why)
}

// Blocked says a phase may not start (or go on) because of a gate.
type Blocked struct {
	Phase        Phase  // the phase that is blocked
	Gate         Phase  // the phase whose state blocks it (Phase itself when it FAILed or was INFERRED)
	Status       Status // Gate's status
	Acknowledged bool
	Steps        []Action // the next actions that would unblock it, in order
}

func (b *Blocked) Error() string {
	state := string(b.Status)
	if b.Status == Skipped && !b.Acknowledged {
		state += " (not acknowledged)"
	}
	var sb strings.Builder
	if b.Gate == b.Phase {
		fmt.Fprintf(&sb, "PHASE GATE BLOCKED: Phase %d cannot go on — its status is %s.\n", b.Phase, b.Status)
	} else {
		fmt.Fprintf(&sb, "PHASE GATE BLOCKED: Cannot start Phase %d — Phase %d gate has not passed.\n", b.Phase, b.Gate)
	}
	fmt.Fprintf(&sb, "Current state: %s\n", state)
	switch {
	case b.Status == Skipped:
		fmt.Fprintf(&sb, "Acknowledge the skipped gate of Phase %d before proceeding.", b.Gate)
	case b.Status == Fail && b.Gate == b.Phase:
		fmt.Fprintf(&sb, "Re-work Phase %d before proceeding.", b.Gate)
	case b.Gate == Execute:
		fmt.Fprintf(&sb, "Complete Phase %d's tasks before proceeding.", b.Gate)
	default:
		fmt.Fprintf(&sb, "Run the quality gate on Phase %d's artifact before proceeding.", b.Gate)
	}
	return sb.String()
}

// satisfied reports whether a finished predecessor p lets its successor start.
func satisfied(p Phase, e Entry) bool {
	switch e.Status {
	case Pass:
		return p.HasQualityGate()
	case Complete:
		return !p.HasQualityGate()
	case Skipped:
		return e.Acknowledged
	}
	return false
}

// CanBegin returns nil when phase p may start, or why it may not: its
// predecessor must be PASS (COMPLETE for Execute) or SKIPPED and
// acknowledged, and no earlier phase may hold an unacknowledged skip.
func (l *Ledger) CanBegin(p Phase) *Blocked {
	for q := Design; q < p; q++ {
		if e := l.Entry(q); e.Status == Skipped && !e.Acknowledged {
			return l.blocked(p, q)
		}
	}
	if p == Design {
		return nil
	}
	if !satisfied(p-1, *l.Entry(p - 1)) {
		return l.blocked(p, p-1)
	}
	return nil
}

// Current is the furthest phase that has left NOT_STARTED, or Design.
func (l *Ledger) Current() Phase {
	for p := Completion; p > Design; p-- {
		if l.Entry(p).Status != NotStarted {
			return p
		}
	}
	return Design
}

// Check returns nil when work in the current phase is allowed: the phase
// could legally have started and is not FAIL, INFERRED or an unacknowledged
// skip. It is what hooks enforce.
func (l *Ledger) Check() *Blocked {
	p := l.Current()
	e := l.Entry(p)
	switch {
	case e.Status == NotStarted:
		return nil
	case e.Status == Fail, e.Status == Inferred, e.Status == Skipped && !e.Acknowledged:
		return l.blocked(p, p)
	}
	return l.CanBegin(p)
}

func (l *Ledger) blocked(p, gate Phase) *Blocked {
	e := l.Entry(gate)
	return &Blocked{Phase: p, Gate: gate, Status: e.Status, Acknowledged: e.Acknowledged, Steps: l.unblockSteps(gate)}
}

// unblockSteps is the shortest sequence of actions that satisfies gate.
func (l *Ledger) unblockSteps(gate Phase) []Action {
	e := l.Entry(gate)
	finish := []Action{{Kind: GiveVerdict, Phase: gate, Verdict: "PASS"}, {Kind: PassGate, Phase: gate}}
	if !gate.HasQualityGate() {
		finish = []Action{{Kind: CompletePhase, Phase: gate}}
	}
	switch e.Status {
	case Skipped:
		return []Action{{Kind: Ack, Phase: gate, Confirm: SkipConfirmation}}
	case InProgress:
		return finish
	case Inferred:
		if gate.HasQualityGate() {
			return finish
		}
	case Pass, Complete:
		// The other kind of end state (a PASS Execute, a COMPLETE gated
		// phase; only a hand-edited file holds one): begin refuses both, so
		// re-open the phase with infer first.
		steps := []Action{{Kind: Infer, Phase: gate}}
		if !gate.HasQualityGate() {
			steps = append(steps, Action{Kind: Begin, Phase: gate})
		}
		return append(steps, finish...)
	}
	return append([]Action{{Kind: Begin, Phase: gate}}, finish...)
}

// CanBegin is Ledger.CanBegin on the machine's ledger.
func (m *Machine) CanBegin(p Phase) *Blocked { return m.Ledger.CanBegin(p) }

// Current is Ledger.Current on the machine's ledger.
func (m *Machine) Current() Phase { return m.Ledger.Current() }

// Check is Ledger.Check on the machine's ledger.
func (m *Machine) Check() *Blocked { return m.Ledger.Check() }

// Apply performs a, or leaves m unchanged and returns why not. Warnings are
// notices the user must see (skipped gates when Completion starts).
func (m *Machine) Apply(a Action) (warnings []string, err error) {
	if !a.Phase.Valid() {
		return nil, fmt.Errorf("invalid phase %d", a.Phase)
	}
	if a.Seq <= m.LastSeq {
		return nil, fmt.Errorf("action seq %d is not after the ledger's last seq %d", a.Seq, m.LastSeq)
	}
	next := *m
	e := next.Ledger.Entry(a.Phase)
	t := &next.Track[a.Phase-1]
	illegal := func(why string, args ...any) error {
		return &IllegalError{Kind: a.Kind, Phase: a.Phase, Status: e.Status, Why: fmt.Sprintf(why, args...)}
	}
	switch a.Kind {
	case Begin:
		switch e.Status {
		case NotStarted, Fail, Skipped, Inferred:
		default:
			return nil, illegal("it is already %s", e.Status)
		}
		if b := m.CanBegin(a.Phase); b != nil {
			return nil, b
		}
		e.Status, e.Gate, e.Reason, e.Acknowledged = InProgress, a.Time, "", false
		*t = Track{Since: a.Seq}
		if a.Phase == Completion {
			warnings = m.skipWarnings()
		}
	case GiveVerdict:
		if !a.Phase.HasQualityGate() {
			return nil, illegal("Phase 3 has no quality gate; it ends with complete")
		}
		if e.Status != InProgress && e.Status != Inferred {
			return nil, illegal("a verdict needs the phase IN_PROGRESS or INFERRED, not %s", e.Status)
		}
		if a.Verdict == "" {
			return nil, illegal("the verdict is empty")
		}
		if a.PipelineID != m.Ledger.PipelineID {
			return nil, illegal("the verdict is for pipeline %q, not %q", a.PipelineID, m.Ledger.PipelineID)
		}
		t.Verdict = &Verdict{Verdict: a.Verdict, PipelineID: a.PipelineID, Seq: a.Seq}
	case PassGate:
		if !a.Phase.HasQualityGate() {
			return nil, illegal("Phase 3 ends COMPLETE, not PASS")
		}
		if e.Status != InProgress && e.Status != Inferred {
			return nil, illegal("only an IN_PROGRESS or INFERRED phase can pass, not %s", e.Status)
		}
		v := t.Verdict
		switch {
		case v == nil || v.Seq <= t.Since:
			return nil, illegal("no quality-gate verdict was recorded since the phase began")
		case v.Verdict != "PASS":
			return nil, illegal("the latest verdict is %s, not PASS", v.Verdict)
		case v.PipelineID != m.Ledger.PipelineID:
			return nil, illegal("the latest verdict is for pipeline %q", v.PipelineID)
		}
		e.Status, e.Gate, e.PipelineID = Pass, a.Time, v.PipelineID
		if a.Artifact != "" {
			e.Artifact = a.Artifact
		}
	case FailPhase:
		if e.Status != InProgress {
			return nil, illegal("only an IN_PROGRESS phase can fail, not %s", e.Status)
		}
		e.Status, e.Gate, e.Reason = Fail, a.Time, a.Reason
	case CompletePhase:
		if a.Phase.HasQualityGate() {
			return nil, illegal("only Phase 3 completes; phase %d passes its quality gate", a.Phase)
		}
		if e.Status != InProgress {
			return nil, illegal("only an IN_PROGRESS phase can complete, not %s", e.Status)
		}
		if a.Total < 1 || a.Done != a.Total {
			return nil, illegal("%d/%d tasks done; every task must be done", a.Done, a.Total)
		}
		e.Status, e.Gate, e.Tasks = Complete, a.Time, fmt.Sprintf("%d/%d complete", a.Done, a.Total)
	case Skip:
		if e.Status == Skipped {
			return nil, illegal("it is already SKIPPED")
		}
		if strings.TrimSpace(a.Reason) == "" {
			return nil, illegal("a skip needs a reason")
		}
		e.Status, e.Gate, e.Reason, e.Acknowledged = Skipped, a.Time, a.Reason, false
		*t = Track{Since: a.Seq}
	case Ack:
		if e.Status != Skipped {
			return nil, illegal("only a SKIPPED phase can be acknowledged, not %s", e.Status)
		}
		if e.Acknowledged {
			return nil, illegal("the skip is already acknowledged")
		}
		if a.Confirm != SkipConfirmation {
			return nil, illegal("the confirmation must be exactly %q", SkipConfirmation)
		}
		e.Acknowledged = true
	case Infer:
		if e.Status == Inferred {
			return nil, illegal("it is already INFERRED")
		}
		e.Status, e.Gate, e.Reason, e.Acknowledged = Inferred, a.Time, a.Reason, false
		*t = Track{Since: a.Seq}
	case Reopen:
		// Only where the phase could begin: a replay never runs a phase
		// whose predecessor's gate has not passed.
		if b := m.CanBegin(a.Phase); b != nil {
			return nil, b
		}
		for p := a.Phase; p <= Completion; p++ {
			*next.Ledger.Entry(p) = Entry{Status: NotStarted}
			next.Track[p-1] = Track{Since: a.Seq}
		}
	default:
		return nil, fmt.Errorf("unknown ledger action %q", a.Kind)
	}
	if err := next.Ledger.Validate(); err != nil {
		return nil, illegal("the ledger could not be written: %v", err)
	}
	next.LastSeq = a.Seq
	*m = next
	return warnings, nil
}

func (m *Machine) skipWarnings() []string {
	var w []string
	for _, p := range Phases[:3] {
		if e := m.Ledger.Entry(p); e.Status == Skipped {
			w = append(w, fmt.Sprintf("WARNING: the Phase %d (%s) gate was SKIPPED: %s", p, p.Name(), e.Reason))
		}
	}
	return w
}
