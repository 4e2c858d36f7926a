package ledger

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const (
	testPID  = "pipe-1"
	testTime = "2026-01-02T03:04:05Z"
	oldTime  = "2025-12-31T23:59:59Z"
)

// clone deep-copies m so that a later in-place change of anything m points to
// (a Verdict) is noticed by reflect.DeepEqual.
func clone(m Machine) Machine {
	c := m
	for i := range c.Track {
		if v := m.Track[i].Verdict; v != nil {
			vv := *v
			c.Track[i].Verdict = &vv
		}
	}
	return c
}

// applyFails applies a, requires an error, and requires m to be unchanged.
func applyFails(t *testing.T, m *Machine, a Action) error {
	t.Helper()
	before := clone(*m)
	w, err := m.Apply(a)
	if err == nil {
		t.Fatalf("Apply(%+v) succeeded, want an error; machine now %+v", a, m.Ledger.Entry(a.Phase))
	}
	if w != nil {
		t.Errorf("Apply(%+v) failed but returned warnings %q", a, w)
	}
	if !reflect.DeepEqual(*m, before) {
		t.Fatalf("Apply(%+v) failed (%v) but changed the machine:\n got  %+v\n want %+v", a, err, *m, before)
	}
	return err
}

func applyOK(t *testing.T, m *Machine, a Action) []string {
	t.Helper()
	w, err := m.Apply(a)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", a, err)
	}
	if m.LastSeq != a.Seq {
		t.Fatalf("after Apply(%+v) LastSeq = %d, want %d", a, m.LastSeq, a.Seq)
	}
	return w
}

func wantIllegal(t *testing.T, err error, a Action, from Status) {
	t.Helper()
	var ie *IllegalError
	if !errors.As(err, &ie) {
		t.Fatalf("Apply(%+v) error = %T %v, want *IllegalError", a, err, err)
	}
	if ie.Kind != a.Kind || ie.Phase != a.Phase || ie.Status != from {
		t.Errorf("IllegalError = %+v, want kind %s phase %d status %s", ie, a.Kind, a.Phase, from)
	}
	var b *Blocked
	if errors.As(err, &b) {
		t.Errorf("error %v is also a *Blocked", err)
	}
}

func wantBlocked(t *testing.T, err error, phase, gate Phase, st Status, acked bool) *Blocked {
	t.Helper()
	var b *Blocked
	if !errors.As(err, &b) {
		t.Fatalf("error = %T %v, want *Blocked", err, err)
	}
	if b.Phase != phase || b.Gate != gate || b.Status != st || b.Acknowledged != acked {
		t.Errorf("Blocked = {Phase %d Gate %d Status %s Ack %v}, want {Phase %d Gate %d Status %s Ack %v}",
			b.Phase, b.Gate, b.Status, b.Acknowledged, phase, gate, st, acked)
	}
	var ie *IllegalError
	if errors.As(err, &ie) {
		t.Errorf("error %v is also an *IllegalError", err)
	}
	return b
}

// finished sets e to the status that lets p's successor start.
func finished(p Phase) Status {
	if p == Execute {
		return Complete
	}
	return Pass
}

// machineAt returns a machine whose phases before p are finished, whose phase
// p has status s (SKIPPED unacknowledged) with old field values, and whose
// track for p holds a fresh PASS verdict. LastSeq is 2.
func machineAt(p Phase, s Status) Machine {
	m := New(testPID, "run-1", "goal", "mode")
	for q := Design; q < p; q++ {
		m.Ledger.Entry(q).Status = finished(q)
		m.Ledger.Entry(q).Gate = oldTime
	}
	*m.Ledger.Entry(p) = Entry{Status: s, Gate: oldTime, Artifact: "old-artifact", Tasks: "old-tasks", Reason: "old reason", PipelineID: "old-pipe"}
	m.Track[p-1] = Track{Since: 1, Verdict: &Verdict{Verdict: "PASS", PipelineID: testPID, Seq: 2}}
	m.LastSeq = 2
	return m
}

// actionFor is a well-formed action of kind k: every precondition that does
// not depend on the phase's status is met.
func actionFor(k Kind, p Phase, seq int64) Action {
	a := Action{Kind: k, Phase: p, Seq: seq, Time: testTime}
	switch k {
	case PassGate:
		a.Artifact = "docs/artifact.md"
	case FailPhase:
		a.Reason = "tests broke"
	case CompletePhase:
		a.Done, a.Total = 3, 3
	case Skip:
		a.Reason = "not needed"
	case Ack:
		a.Confirm = "SKIP GATE"
	case Infer:
		a.Reason = "inferred from the repository"
	case GiveVerdict:
		a.Verdict, a.PipelineID = "PASS", testPID
	}
	return a
}

// ill marks an illegal transition in the tables below.
const ill Status = "ILLEGAL"

// Hand-written from the spec. Columns are the starting status in the order
// NOT_STARTED, IN_PROGRESS, PASS, COMPLETE, FAIL, SKIPPED (unacked), INFERRED;
// a cell is the status after the action, or ill.
var (
	tableColumns = [7]Status{NotStarted, InProgress, Pass, Complete, Fail, Skipped, Inferred}

	// Phases 1, 2 and 4 (they have a quality gate).
	gatedTable = map[Kind][7]Status{
		Begin:         {InProgress, ill, ill, ill, InProgress, InProgress, InProgress},
		PassGate:      {ill, Pass, ill, ill, ill, ill, Pass},
		FailPhase:     {ill, Fail, ill, ill, ill, ill, ill},
		CompletePhase: {ill, ill, ill, ill, ill, ill, ill},
		Skip:          {Skipped, Skipped, Skipped, Skipped, Skipped, ill, Skipped},
		Ack:           {ill, ill, ill, ill, ill, Skipped, ill},
		Infer:         {Inferred, Inferred, Inferred, Inferred, Inferred, Inferred, ill},
		GiveVerdict:   {ill, InProgress, ill, ill, ill, ill, Inferred},
		Reopen:        {NotStarted, NotStarted, NotStarted, NotStarted, NotStarted, NotStarted, NotStarted},
	}
	// Phase 3 (Execute: no quality gate, ends COMPLETE).
	executeTable = map[Kind][7]Status{
		Begin:         {InProgress, ill, ill, ill, InProgress, InProgress, InProgress},
		PassGate:      {ill, ill, ill, ill, ill, ill, ill},
		FailPhase:     {ill, Fail, ill, ill, ill, ill, ill},
		CompletePhase: {ill, Complete, ill, ill, ill, ill, ill},
		Skip:          {Skipped, Skipped, Skipped, Skipped, Skipped, ill, Skipped},
		Ack:           {ill, ill, ill, ill, ill, Skipped, ill},
		Infer:         {Inferred, Inferred, Inferred, Inferred, Inferred, Inferred, ill},
		GiveVerdict:   {ill, ill, ill, ill, ill, ill, ill},
		Reopen:        {NotStarted, NotStarted, NotStarted, NotStarted, NotStarted, NotStarted, NotStarted},
	}
)

// expectedAfter is the machine the spec requires after legal action a.
func expectedAfter(m Machine, a Action, to Status) Machine {
	w := clone(m)
	e := w.Ledger.Entry(a.Phase)
	t := &w.Track[a.Phase-1]
	switch a.Kind {
	case Begin:
		e.Status, e.Gate, e.Reason, e.Acknowledged = InProgress, a.Time, "", false
		*t = Track{Since: a.Seq}
	case PassGate:
		e.Status, e.Gate, e.PipelineID, e.Artifact = Pass, a.Time, testPID, a.Artifact
	case FailPhase:
		e.Status, e.Gate, e.Reason = Fail, a.Time, a.Reason
	case CompletePhase:
		e.Status, e.Gate, e.Tasks = Complete, a.Time, fmt.Sprintf("%d/%d complete", a.Done, a.Total)
	case Skip:
		e.Status, e.Gate, e.Reason, e.Acknowledged = Skipped, a.Time, a.Reason, false
		*t = Track{Since: a.Seq}
	case Ack:
		e.Acknowledged = true
	case Infer:
		e.Status, e.Gate, e.Reason, e.Acknowledged = Inferred, a.Time, a.Reason, false
		*t = Track{Since: a.Seq}
	case GiveVerdict:
		t.Verdict = &Verdict{Verdict: a.Verdict, PipelineID: a.PipelineID, Seq: a.Seq}
	case Reopen:
		for q := a.Phase; q <= Completion; q++ {
			*w.Ledger.Entry(q) = Entry{Status: NotStarted}
			w.Track[q-1] = Track{Since: a.Seq}
		}
	}
	if e.Status != to {
		panic(fmt.Sprintf("table says %s→%s but %s gives %s", m.Ledger.Entry(a.Phase).Status, to, a.Kind, e.Status))
	}
	w.LastSeq = a.Seq
	return w
}

func TestTransitionTable(t *testing.T) {
	if len(gatedTable) != len(Kinds) || len(executeTable) != len(Kinds) {
		t.Fatalf("tables cover %d and %d kinds, want %d", len(gatedTable), len(executeTable), len(Kinds))
	}
	if !reflect.DeepEqual(tableColumns[:], Statuses) {
		t.Fatalf("Statuses = %v, want %v", Statuses, tableColumns)
	}
	cases := 0
	for _, p := range Phases {
		table := gatedTable
		if p == Execute {
			table = executeTable
		}
		for _, k := range Kinds {
			row, ok := table[k]
			if !ok {
				t.Fatalf("no table row for %s", k)
			}
			for i, from := range tableColumns {
				cases++
				to := row[i]
				t.Run(fmt.Sprintf("phase%d/%s/%s", p, from, k), func(t *testing.T) {
					m := machineAt(p, from)
					a := actionFor(k, p, 3)
					if to == ill {
						err := applyFails(t, &m, a)
						wantIllegal(t, err, a, from)
						return
					}
					want := expectedAfter(m, a, to)
					w := applyOK(t, &m, a)
					if len(w) != 0 {
						t.Errorf("warnings = %q, want none", w)
					}
					if !reflect.DeepEqual(m, want) {
						t.Errorf("after %s from %s:\n got  %+v %+v\n want %+v %+v", k, from,
							*m.Ledger.Entry(p), m.Track[p-1], *want.Ledger.Entry(p), want.Track[p-1])
					}
				})
			}
		}
	}
	if cases != 252 {
		t.Fatalf("ran %d cases, want 252", cases)
	}
}

// An acknowledged skip: ack is illegal, everything else as for an unacked skip.
func TestAcknowledgedSkip(t *testing.T) {
	for _, p := range Phases {
		m := machineAt(p, Skipped)
		m.Ledger.Entry(p).Acknowledged = true
		wantIllegal(t, applyFails(t, &m, actionFor(Ack, p, 3)), actionFor(Ack, p, 3), Skipped)
		wantIllegal(t, applyFails(t, &m, actionFor(Skip, p, 3)), actionFor(Skip, p, 3), Skipped)

		b := clone(m)
		applyOK(t, &b, actionFor(Begin, p, 3))
		if e := b.Ledger.Entry(p); e.Status != InProgress || e.Acknowledged || e.Reason != "" {
			t.Errorf("phase %d begin from acked SKIPPED: %+v", p, *e)
		}
		i := clone(m)
		applyOK(t, &i, actionFor(Infer, p, 3))
		if e := i.Ledger.Entry(p); e.Status != Inferred || e.Acknowledged {
			t.Errorf("phase %d infer from acked SKIPPED: %+v", p, *e)
		}
	}
}

func TestActionArguments(t *testing.T) {
	for _, p := range Phases {
		// skip needs a non-blank reason.
		for _, r := range []string{"", " ", "\t\n"} {
			m := machineAt(p, InProgress)
			a := actionFor(Skip, p, 3)
			a.Reason = r
			wantIllegal(t, applyFails(t, &m, a), a, InProgress)
		}
		// verdict needs a non-empty value and this pipeline.
		if p.HasQualityGate() {
			m := machineAt(p, InProgress)
			a := actionFor(GiveVerdict, p, 3)
			a.Verdict = ""
			wantIllegal(t, applyFails(t, &m, a), a, InProgress)
			for _, id := range []string{"", "pipe-2", "pipe-1 ", "PIPE-1"} {
				a := actionFor(GiveVerdict, p, 3)
				a.PipelineID = id
				wantIllegal(t, applyFails(t, &m, a), a, InProgress)
			}
			// a non-PASS verdict is recorded as given.
			a = actionFor(GiveVerdict, p, 3)
			a.Verdict = "STAGNATION"
			applyOK(t, &m, a)
			if v := m.Track[p-1].Verdict; v == nil || *v != (Verdict{"STAGNATION", testPID, 3}) {
				t.Errorf("phase %d verdict = %+v", p, v)
			}
			if m.Ledger.Entry(p).Status != InProgress {
				t.Errorf("verdict changed the status to %s", m.Ledger.Entry(p).Status)
			}
		}
	}
	// complete needs every task done, and at least one task.
	for _, dt := range [][2]int{{0, 0}, {2, 3}, {3, 2}, {-1, -1}, {0, 1}} {
		m := machineAt(Execute, InProgress)
		a := actionFor(CompletePhase, Execute, 3)
		a.Done, a.Total = dt[0], dt[1]
		wantIllegal(t, applyFails(t, &m, a), a, InProgress)
	}
	m := machineAt(Execute, InProgress)
	a := actionFor(CompletePhase, Execute, 3)
	a.Done, a.Total = 1, 1
	applyOK(t, &m, a)
	if e := m.Ledger.Entry(Execute); e.Status != Complete || e.Tasks != "1/1 complete" {
		t.Errorf("complete 1/1: %+v", *e)
	}
	// pass without an artifact keeps the old one.
	m = machineAt(Design, InProgress)
	a = actionFor(PassGate, Design, 3)
	a.Artifact = ""
	applyOK(t, &m, a)
	if e := m.Ledger.Entry(Design); e.Status != Pass || e.Artifact != "old-artifact" || e.PipelineID != testPID {
		t.Errorf("pass without artifact: %+v", *e)
	}
}

func TestInvalidActions(t *testing.T) {
	for _, a := range []Action{
		{Kind: Begin, Phase: 0, Seq: 3},
		{Kind: Begin, Phase: 5, Seq: 3},
		{Kind: Begin, Phase: -1, Seq: 3},
		{Kind: "launch", Phase: Design, Seq: 3},
		{Kind: "", Phase: Design, Seq: 3},
		{Kind: "BEGIN", Phase: Design, Seq: 3},
	} {
		m := machineAt(Design, NotStarted)
		err := applyFails(t, &m, a)
		var ie *IllegalError
		var b *Blocked
		if errors.As(err, &ie) || errors.As(err, &b) {
			t.Errorf("Apply(%+v) = %T, want a plain error", a, err)
		}
	}
}

// gateCase is a predecessor state and whether it lets its successor begin.
type gateCase struct {
	status Status
	acked  bool
	ok     bool
}

func TestGateBlocking(t *testing.T) {
	// Hand-written from the spec: what a predecessor with a quality gate
	// (phase 1 or 2) and Execute (phase 3) must be for the next phase to start.
	gated := []gateCase{
		{NotStarted, false, false},
		{InProgress, false, false},
		{Pass, false, true},
		{Complete, false, false},
		{Fail, false, false},
		{Skipped, false, false},
		{Skipped, true, true},
		{Inferred, false, false},
	}
	execute := []gateCase{
		{NotStarted, false, false},
		{InProgress, false, false},
		{Pass, false, false}, // PASS is not reachable for Execute and does not satisfy it
		{Complete, false, true},
		{Fail, false, false},
		{Skipped, false, false},
		{Skipped, true, true},
		{Inferred, false, false},
	}
	for _, p := range []Phase{Plan, Execute, Completion} {
		cases := gated
		if p-1 == Execute {
			cases = execute
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("phase%d/pred-%s-acked-%v", p, c.status, c.acked), func(t *testing.T) {
				m := machineAt(p, NotStarted)
				m.Track[p-1] = Track{}
				pe := m.Ledger.Entry(p - 1)
				pe.Status, pe.Acknowledged = c.status, c.acked
				a := actionFor(Begin, p, 3)
				if c.ok {
					if b := m.CanBegin(p); b != nil {
						t.Fatalf("CanBegin = %v, want nil", b)
					}
					applyOK(t, &m, a)
					if got := m.Ledger.Entry(p).Status; got != InProgress {
						t.Fatalf("status = %s, want IN_PROGRESS", got)
					}
					return
				}
				if m.CanBegin(p) == nil {
					t.Fatalf("CanBegin = nil, want blocked")
				}
				err := applyFails(t, &m, a)
				b := wantBlocked(t, err, p, p-1, c.status, c.acked)
				state := string(c.status)
				if c.status == Skipped {
					state += " (not acknowledged)"
				}
				prefix := fmt.Sprintf("PHASE GATE BLOCKED: Cannot start Phase %d — Phase %d gate has not passed.\nCurrent state: %s\n", p, p-1, state)
				if !strings.HasPrefix(b.Error(), prefix) {
					t.Errorf("Error() = %q, want prefix %q", b.Error(), prefix)
				}
				if len(b.Steps) == 0 {
					t.Errorf("Blocked has no Steps")
				}
			})
		}
	}
	// Phase 1 has no predecessor gate.
	m := New(testPID, "r", "g", "m")
	if b := m.CanBegin(Design); b != nil {
		t.Fatalf("CanBegin(1) on a fresh ledger = %v", b)
	}
}

func TestEarlierUnackedSkipBlocks(t *testing.T) {
	type st struct {
		s     Status
		acked bool
	}
	cases := []struct {
		name  string
		phase [3]st
		begin Phase
		gate  Phase // 0: may begin
	}{
		{"p1 skipped unacked blocks p3", [3]st{{Skipped, false}, {Pass, false}, {}}, Execute, Design},
		{"p1 skipped unacked blocks p4", [3]st{{Skipped, false}, {Pass, false}, {Complete, false}}, Completion, Design},
		{"p2 skipped unacked blocks p4", [3]st{{Pass, false}, {Skipped, false}, {Complete, false}}, Completion, Plan},
		{"earliest of two unacked skips", [3]st{{Skipped, false}, {Skipped, false}, {Complete, false}}, Completion, Design},
		{"earliest of three unacked skips", [3]st{{Skipped, false}, {Skipped, false}, {Skipped, false}}, Completion, Design},
		{"acked p1, unacked p2", [3]st{{Skipped, true}, {Skipped, false}, {Complete, false}}, Completion, Plan},
		{"unacked skip wins over unsatisfied predecessor", [3]st{{Skipped, false}, {Pass, false}, {InProgress, false}}, Completion, Design},
		{"all skips acked", [3]st{{Skipped, true}, {Skipped, true}, {Skipped, true}}, Completion, 0},
		{"acked p1 then pass, complete", [3]st{{Skipped, true}, {Pass, false}, {Complete, false}}, Completion, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(testPID, "r", "g", "m")
			for i := 0; i < int(c.begin)-1; i++ {
				e := &m.Ledger.Phases[i]
				e.Status, e.Acknowledged = c.phase[i].s, c.phase[i].acked
				if e.Status == Skipped {
					e.Reason = fmt.Sprintf("skip %d", i+1)
				}
			}
			a := actionFor(Begin, c.begin, 1)
			if c.gate == 0 {
				applyOK(t, &m, a)
				return
			}
			g := m.Ledger.Entry(c.gate)
			err := applyFails(t, &m, a)
			b := wantBlocked(t, err, c.begin, c.gate, g.Status, g.Acknowledged)
			if want := fmt.Sprintf("Phase %d gate has not passed.\n", c.gate); !strings.Contains(b.Error(), want) {
				t.Errorf("Error() = %q, want it to name the gate: %q", b.Error(), want)
			}
		})
	}
}

func TestBlockedErrorText(t *testing.T) {
	cases := []struct {
		name  string
		setup func(m *Machine)
		check bool // use Check() rather than Apply(begin)
		begin Phase
		want  string
	}{
		{
			name:  "plan before design passed",
			setup: func(m *Machine) {},
			begin: Plan,
			want: "PHASE GATE BLOCKED: Cannot start Phase 2 — Phase 1 gate has not passed.\n" +
				"Current state: NOT_STARTED\n" +
				"Run the quality gate on Phase 1's artifact before proceeding.",
		},
		{
			name: "execute after an unacknowledged skip",
			setup: func(m *Machine) {
				m.Ledger.Phases[0].Status = Pass
				m.Ledger.Phases[1].Status = Skipped
				m.Ledger.Phases[1].Reason = "trivial"
			},
			begin: Execute,
			want: "PHASE GATE BLOCKED: Cannot start Phase 3 — Phase 2 gate has not passed.\n" +
				"Current state: SKIPPED (not acknowledged)\n" +
				"Acknowledge the skipped gate of Phase 2 before proceeding.",
		},
		{
			name: "completion while execute is in progress",
			setup: func(m *Machine) {
				m.Ledger.Phases[0].Status = Pass
				m.Ledger.Phases[1].Status = Pass
				m.Ledger.Phases[2].Status = InProgress
			},
			begin: Completion,
			want: "PHASE GATE BLOCKED: Cannot start Phase 4 — Phase 3 gate has not passed.\n" +
				"Current state: IN_PROGRESS\n" +
				"Complete Phase 3's tasks before proceeding.",
		},
		{
			name: "completion after execute PASS",
			setup: func(m *Machine) {
				m.Ledger.Phases[0].Status = Pass
				m.Ledger.Phases[1].Status = Pass
				m.Ledger.Phases[2].Status = Pass
			},
			begin: Completion,
			want: "PHASE GATE BLOCKED: Cannot start Phase 4 — Phase 3 gate has not passed.\n" +
				"Current state: PASS\n" +
				"Complete Phase 3's tasks before proceeding.",
		},
		{
			name: "check: plan failed",
			setup: func(m *Machine) {
				m.Ledger.Phases[0].Status = Pass
				m.Ledger.Phases[1].Status = Fail
			},
			check: true,
			want: "PHASE GATE BLOCKED: Phase 2 cannot go on — its status is FAIL.\n" +
				"Current state: FAIL\n" +
				"Re-work Phase 2 before proceeding.",
		},
		{
			name: "check: design skipped, not acknowledged",
			setup: func(m *Machine) {
				m.Ledger.Phases[0].Status = Skipped
			},
			check: true,
			want: "PHASE GATE BLOCKED: Phase 1 cannot go on — its status is SKIPPED.\n" +
				"Current state: SKIPPED (not acknowledged)\n" +
				"Acknowledge the skipped gate of Phase 1 before proceeding.",
		},
		{
			name: "check: completion inferred",
			setup: func(m *Machine) {
				m.Ledger.Phases[0].Status = Pass
				m.Ledger.Phases[1].Status = Pass
				m.Ledger.Phases[2].Status = Complete
				m.Ledger.Phases[3].Status = Inferred
			},
			check: true,
			want: "PHASE GATE BLOCKED: Phase 4 cannot go on — its status is INFERRED.\n" +
				"Current state: INFERRED\n" +
				"Run the quality gate on Phase 4's artifact before proceeding.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(testPID, "r", "g", "m")
			c.setup(&m)
			var err error
			if c.check {
				b := m.Check()
				if b == nil {
					t.Fatal("Check() = nil, want blocked")
				}
				err = b
			} else {
				err = applyFails(t, &m, actionFor(Begin, c.begin, 1))
			}
			if got := err.Error(); got != c.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestVerdictFreshness(t *testing.T) {
	v := func(p Phase, seq int64, verdict string) Action {
		a := actionFor(GiveVerdict, p, seq)
		a.Verdict = verdict
		return a
	}
	t.Run("verdict before a re-begin does not count", func(t *testing.T) {
		m := New(testPID, "r", "g", "m")
		applyOK(t, &m, actionFor(Begin, Design, 1))
		applyOK(t, &m, v(Design, 2, "PASS"))
		applyOK(t, &m, actionFor(FailPhase, Design, 3))
		applyOK(t, &m, actionFor(Begin, Design, 4))
		a := actionFor(PassGate, Design, 5)
		wantIllegal(t, applyFails(t, &m, a), a, InProgress)
		applyOK(t, &m, v(Design, 6, "PASS"))
		applyOK(t, &m, actionFor(PassGate, Design, 7))
	})
	t.Run("verdict before a skip and re-begin does not count", func(t *testing.T) {
		m := New(testPID, "r", "g", "m")
		applyOK(t, &m, actionFor(Begin, Design, 1))
		applyOK(t, &m, v(Design, 2, "PASS"))
		applyOK(t, &m, actionFor(Skip, Design, 3))
		applyOK(t, &m, actionFor(Begin, Design, 4))
		a := actionFor(PassGate, Design, 5)
		wantIllegal(t, applyFails(t, &m, a), a, InProgress)
	})
	t.Run("FAIL verdict after PASS verdict blocks pass", func(t *testing.T) {
		for _, p := range []Phase{Design, Plan, Completion} {
			m := machineAt(p, NotStarted)
			m.Track[p-1] = Track{}
			applyOK(t, &m, actionFor(Begin, p, 3))
			applyOK(t, &m, v(p, 4, "PASS"))
			applyOK(t, &m, v(p, 5, "FAIL"))
			a := actionFor(PassGate, p, 6)
			wantIllegal(t, applyFails(t, &m, a), a, InProgress)
			applyOK(t, &m, v(p, 7, "PASS"))
			applyOK(t, &m, actionFor(PassGate, p, 8))
			if e := m.Ledger.Entry(p); e.Status != Pass || e.Gate != testTime || e.PipelineID != testPID {
				t.Errorf("phase %d after pass: %+v", p, *e)
			}
		}
	})
	t.Run("verdict values are case-sensitive", func(t *testing.T) {
		for _, val := range []string{"pass", "Pass", "PASS ", "PASSED", "FAIL", "STAGNATION"} {
			m := New(testPID, "r", "g", "m")
			applyOK(t, &m, actionFor(Begin, Design, 1))
			applyOK(t, &m, v(Design, 2, val))
			a := actionFor(PassGate, Design, 3)
			wantIllegal(t, applyFails(t, &m, a), a, InProgress)
		}
	})
	t.Run("wrong pipeline id rejected", func(t *testing.T) {
		m := New(testPID, "r", "g", "m")
		applyOK(t, &m, actionFor(Begin, Design, 1))
		a := v(Design, 2, "PASS")
		a.PipelineID = "other-pipe"
		wantIllegal(t, applyFails(t, &m, a), a, InProgress)
		p := actionFor(PassGate, Design, 3)
		wantIllegal(t, applyFails(t, &m, p), p, InProgress)
	})
	t.Run("stale or foreign verdict in the track", func(t *testing.T) {
		for _, tr := range []Track{
			{Since: 5, Verdict: nil},
			{Since: 5, Verdict: &Verdict{"PASS", testPID, 5}},
			{Since: 5, Verdict: &Verdict{"PASS", testPID, 4}},
			{Since: 5, Verdict: &Verdict{"PASS", "other", 6}},
			{Since: 5, Verdict: &Verdict{"FAIL", testPID, 6}},
		} {
			m := machineAt(Design, InProgress)
			m.Track[0] = tr
			m.LastSeq = 6
			a := actionFor(PassGate, Design, 7)
			wantIllegal(t, applyFails(t, &m, a), a, InProgress)
		}
		m := machineAt(Design, InProgress)
		m.Track[0] = Track{Since: 5, Verdict: &Verdict{"PASS", testPID, 6}}
		m.LastSeq = 6
		applyOK(t, &m, actionFor(PassGate, Design, 7))
	})
	t.Run("a verdict is not shared between phases", func(t *testing.T) {
		m := New(testPID, "r", "g", "m")
		applyOK(t, &m, actionFor(Begin, Design, 1))
		applyOK(t, &m, v(Design, 2, "PASS"))
		applyOK(t, &m, actionFor(PassGate, Design, 3))
		applyOK(t, &m, actionFor(Begin, Plan, 4))
		a := actionFor(PassGate, Plan, 5)
		wantIllegal(t, applyFails(t, &m, a), a, InProgress)
	})
}

func TestInferredToPass(t *testing.T) {
	for _, p := range []Phase{Design, Plan, Completion} {
		t.Run(fmt.Sprintf("phase%d", p), func(t *testing.T) {
			m := machineAt(p, NotStarted)
			m.Track[p-1] = Track{}
			applyOK(t, &m, actionFor(Begin, p, 3))
			applyOK(t, &m, actionFor(GiveVerdict, p, 4)) // PASS, but before the inference
			applyOK(t, &m, actionFor(Infer, p, 5))
			if tr := m.Track[p-1]; tr != (Track{Since: 5}) {
				t.Fatalf("track after infer = %+v, want {Since: 5}", tr)
			}
			a := actionFor(PassGate, p, 6)
			wantIllegal(t, applyFails(t, &m, a), a, Inferred)
			applyOK(t, &m, actionFor(GiveVerdict, p, 7))
			if got := m.Ledger.Entry(p).Status; got != Inferred {
				t.Fatalf("verdict changed INFERRED to %s", got)
			}
			applyOK(t, &m, actionFor(PassGate, p, 8))
			if e := m.Ledger.Entry(p); e.Status != Pass || e.PipelineID != testPID || e.Artifact != "docs/artifact.md" {
				t.Fatalf("after pass: %+v", *e)
			}
		})
	}
	// Execute cannot go from INFERRED to anything but begin/skip/other.
	m := machineAt(Execute, Inferred)
	for _, k := range []Kind{PassGate, CompletePhase, GiveVerdict, FailPhase} {
		a := actionFor(k, Execute, 3)
		wantIllegal(t, applyFails(t, &m, a), a, Inferred)
	}
}

func TestAckConfirmation(t *testing.T) {
	for _, c := range []struct {
		confirm string
		ok      bool
	}{
		{"SKIP GATE", true},
		{SkipConfirmation, true},
		{"skip gate", false},
		{"Skip Gate", false},
		{"SKIP GATE ", false},
		{" SKIP GATE", false},
		{"SKIP GATE\n", false},
		{"SKIP  GATE", false},
		{"SKIP_GATE", false},
		{"SKIPGATE", false},
		{"SKIP", false},
		{"", false},
		{"yes", false},
	} {
		t.Run(fmt.Sprintf("%q", c.confirm), func(t *testing.T) {
			m := machineAt(Plan, Skipped)
			a := actionFor(Ack, Plan, 3)
			a.Confirm = c.confirm
			if !c.ok {
				wantIllegal(t, applyFails(t, &m, a), a, Skipped)
				return
			}
			applyOK(t, &m, a)
			if e := m.Ledger.Entry(Plan); e.Status != Skipped || !e.Acknowledged {
				t.Fatalf("after ack: %+v", *e)
			}
		})
	}
	if SkipConfirmation != "SKIP GATE" {
		t.Fatalf("SkipConfirmation = %q", SkipConfirmation)
	}
}

func TestSeqMonotonic(t *testing.T) {
	m := New(testPID, "r", "g", "m")
	if m.LastSeq != 0 {
		t.Fatalf("fresh LastSeq = %d", m.LastSeq)
	}
	for _, seq := range []int64{0, -1, -100} {
		applyFails(t, &m, actionFor(Begin, Design, seq))
	}
	applyOK(t, &m, actionFor(Begin, Design, 10))
	for _, seq := range []int64{10, 9, 1, 0, -5} {
		applyFails(t, &m, actionFor(GiveVerdict, Design, seq))
	}
	// A refused action does not use up its seq.
	a := actionFor(PassGate, Design, 11)
	wantIllegal(t, applyFails(t, &m, a), a, InProgress)
	if m.LastSeq != 10 {
		t.Fatalf("LastSeq = %d after a refused action, want 10", m.LastSeq)
	}
	applyOK(t, &m, actionFor(GiveVerdict, Design, 11))
	// Gaps are allowed.
	applyOK(t, &m, actionFor(PassGate, Design, 1000))
	applyFails(t, &m, actionFor(Begin, Plan, 999))
	applyOK(t, &m, actionFor(Begin, Plan, 1001))
	// The seq check comes before any other rule: a legal action with an old seq fails.
	err := applyFails(t, &m, actionFor(GiveVerdict, Plan, 1001))
	var ie *IllegalError
	if errors.As(err, &ie) {
		t.Errorf("seq error is an IllegalError: %v", err)
	}
}

// Every refused action in every state leaves the machine as it was.
func TestAtomicity(t *testing.T) {
	bad := func(k Kind, p Phase, seq int64) []Action {
		var as []Action
		a := actionFor(k, p, seq)
		as = append(as, a)
		old := a
		old.Seq = 2
		as = append(as, old)
		switch k {
		case Skip:
			a.Reason = " "
			as = append(as, a)
		case Ack:
			a.Confirm = "skip gate"
			as = append(as, a)
		case CompletePhase:
			a.Done = 2
			as = append(as, a)
		case GiveVerdict:
			b := a
			b.PipelineID = "x"
			a.Verdict = ""
			as = append(as, a, b)
		}
		return as
	}
	n := 0
	for _, p := range Phases {
		for _, s := range Statuses {
			for _, k := range Kinds {
				for _, a := range bad(k, p, 3) {
					m := machineAt(p, s)
					before := clone(m)
					_, err := m.Apply(a)
					if err == nil {
						continue
					}
					n++
					if !reflect.DeepEqual(m, before) {
						t.Errorf("phase %d %s, %+v failed (%v) but changed the machine", p, s, a, err)
					}
				}
			}
		}
	}
	// Blocked begins, with every predecessor state.
	for _, p := range []Phase{Plan, Execute, Completion} {
		for _, s := range Statuses {
			m := machineAt(p, NotStarted)
			m.Ledger.Entry(p - 1).Status = s
			before := clone(m)
			if _, err := m.Apply(actionFor(Begin, p, 3)); err != nil {
				n++
				if !reflect.DeepEqual(m, before) {
					t.Errorf("blocked begin of %d changed the machine", p)
				}
			}
		}
	}
	if n < 224 {
		t.Errorf("only %d refused actions checked", n)
	}
}

func TestCompletionSkipWarnings(t *testing.T) {
	m := New(testPID, "r", "g", "m")
	m.Ledger.Phases[0] = Entry{Status: Skipped, Reason: "design is obvious", Acknowledged: true}
	m.Ledger.Phases[1] = Entry{Status: Pass}
	m.Ledger.Phases[2] = Entry{Status: Skipped, Reason: "nothing to execute", Acknowledged: true}
	w := applyOK(t, &m, actionFor(Begin, Completion, 1))
	want := []string{
		"WARNING: the Phase 1 (Design) gate was SKIPPED: design is obvious",
		"WARNING: the Phase 3 (Execute) gate was SKIPPED: nothing to execute",
	}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("warnings = %q, want %q", w, want)
	}

	// All three skipped.
	m = New(testPID, "r", "g", "m")
	for i := 0; i < 3; i++ {
		m.Ledger.Phases[i] = Entry{Status: Skipped, Reason: fmt.Sprintf("r%d", i+1), Acknowledged: true}
	}
	w = applyOK(t, &m, actionFor(Begin, Completion, 1))
	if len(w) != 3 {
		t.Fatalf("warnings = %q, want 3", w)
	}
	for i, s := range w {
		p := Phase(i + 1)
		if !strings.Contains(s, fmt.Sprintf("Phase %d (%s)", p, p.Name())) || !strings.HasSuffix(s, fmt.Sprintf("r%d", i+1)) {
			t.Errorf("warning %d = %q", i, s)
		}
	}

	// Re-beginning Completion (after a FAIL) warns again.
	m.Ledger.Phases[3].Status = Fail
	if w := applyOK(t, &m, actionFor(Begin, Completion, 2)); len(w) != 3 {
		t.Errorf("re-begin warnings = %q", w)
	}

	// No skips, no warnings.
	m = machineAt(Completion, NotStarted)
	if w := applyOK(t, &m, actionFor(Begin, Completion, 3)); len(w) != 0 {
		t.Errorf("warnings = %q, want none", w)
	}

	// Other phases never warn, even after skips.
	m = New(testPID, "r", "g", "m")
	m.Ledger.Phases[0] = Entry{Status: Skipped, Reason: "r1", Acknowledged: true}
	if w := applyOK(t, &m, actionFor(Begin, Plan, 1)); len(w) != 0 {
		t.Errorf("begin 2 warnings = %q", w)
	}
	m.Ledger.Phases[1] = Entry{Status: Skipped, Reason: "r2", Acknowledged: true}
	if w := applyOK(t, &m, actionFor(Begin, Execute, 2)); len(w) != 0 {
		t.Errorf("begin 3 warnings = %q", w)
	}
	// Other actions on Completion never warn.
	for _, k := range []Kind{Skip, Infer} {
		m := New(testPID, "r", "g", "m")
		m.Ledger.Phases[0] = Entry{Status: Skipped, Reason: "r1", Acknowledged: true}
		if w := applyOK(t, &m, actionFor(k, Completion, 1)); len(w) != 0 {
			t.Errorf("%s 4 warnings = %q", k, w)
		}
	}
}

func TestCurrentAndCheck(t *testing.T) {
	type ph struct {
		s     Status
		acked bool
	}
	N, IP, P, C, F, S, SA, I := ph{NotStarted, false}, ph{InProgress, false}, ph{Pass, false}, ph{Complete, false},
		ph{Fail, false}, ph{Skipped, false}, ph{Skipped, true}, ph{Inferred, false}
	cases := []struct {
		name    string
		phases  [4]ph
		current Phase
		blocked bool
		phase   Phase // Blocked.Phase
		gate    Phase // Blocked.Gate
	}{
		{"fresh", [4]ph{N, N, N, N}, Design, false, 0, 0},
		{"design in progress", [4]ph{IP, N, N, N}, Design, false, 0, 0},
		{"design passed", [4]ph{P, N, N, N}, Design, false, 0, 0},
		{"design failed", [4]ph{F, N, N, N}, Design, true, Design, Design},
		{"design inferred", [4]ph{I, N, N, N}, Design, true, Design, Design},
		{"design skipped unacked", [4]ph{S, N, N, N}, Design, true, Design, Design},
		{"design skipped acked", [4]ph{SA, N, N, N}, Design, false, 0, 0},
		{"plan in progress", [4]ph{P, IP, N, N}, Plan, false, 0, 0},
		{"plan in progress, design in progress", [4]ph{IP, IP, N, N}, Plan, true, Plan, Design},
		{"plan in progress, design not started", [4]ph{N, IP, N, N}, Plan, true, Plan, Design},
		{"plan passed after acked skip", [4]ph{SA, P, N, N}, Plan, false, 0, 0},
		{"plan in progress after unacked skip", [4]ph{S, IP, N, N}, Plan, true, Plan, Design},
		{"plan failed", [4]ph{P, F, N, N}, Plan, true, Plan, Plan},
		{"execute in progress", [4]ph{P, P, IP, N}, Execute, false, 0, 0},
		{"execute complete", [4]ph{P, P, C, N}, Execute, false, 0, 0},
		{"execute failed", [4]ph{P, P, F, N}, Execute, true, Execute, Execute},
		{"execute inferred", [4]ph{P, P, I, N}, Execute, true, Execute, Execute},
		{"execute skipped unacked", [4]ph{P, P, S, N}, Execute, true, Execute, Execute},
		{"execute skipped acked", [4]ph{P, P, SA, N}, Execute, false, 0, 0},
		{"execute after plan COMPLETE", [4]ph{P, C, IP, N}, Execute, true, Execute, Plan},
		{"completion in progress", [4]ph{P, P, C, IP}, Completion, false, 0, 0},
		{"completion passed", [4]ph{P, P, C, P}, Completion, false, 0, 0},
		{"completion after execute PASS", [4]ph{P, P, P, IP}, Completion, true, Completion, Execute},
		{"completion with a gap", [4]ph{P, P, N, IP}, Completion, true, Completion, Execute},
		{"completion passed, design skip unacked", [4]ph{S, P, C, P}, Completion, true, Completion, Design},
		{"completion in progress, every gate skipped and acked", [4]ph{SA, SA, SA, IP}, Completion, false, 0, 0},
		{"completion skipped unacked", [4]ph{P, P, C, S}, Completion, true, Completion, Completion},
		{"completion failed", [4]ph{P, P, C, F}, Completion, true, Completion, Completion},
		{"later phase wins: plan not started, execute in progress", [4]ph{P, N, IP, N}, Execute, true, Execute, Plan},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(testPID, "r", "g", "m")
			for i, e := range c.phases {
				m.Ledger.Phases[i].Status, m.Ledger.Phases[i].Acknowledged = e.s, e.acked
			}
			before := clone(m)
			if got := m.Current(); got != c.current {
				t.Errorf("Current() = %d, want %d", got, c.current)
			}
			b := m.Check()
			if !reflect.DeepEqual(m, before) {
				t.Errorf("Check changed the machine")
			}
			if !c.blocked {
				if b != nil {
					t.Fatalf("Check() = %v, want nil", b)
				}
				return
			}
			if b == nil {
				t.Fatal("Check() = nil, want blocked")
			}
			g := m.Ledger.Entry(c.gate)
			wantBlocked(t, b, c.phase, c.gate, g.Status, g.Acknowledged)
			if len(b.Steps) == 0 {
				t.Errorf("Blocked has no Steps")
			}
		})
	}
}

// fillStep makes an unblocking step from Blocked.Steps applicable.
func fillStep(a Action, seq int64) Action {
	a.Seq, a.Time = seq, testTime
	switch a.Kind {
	case GiveVerdict:
		a.PipelineID = testPID
	case CompletePhase:
		a.Done, a.Total = 1, 1
	case Skip, FailPhase, Infer:
		if a.Reason == "" {
			a.Reason = "step"
		}
	}
	return a
}

// Blocked.Steps, applied in order, unblock: for every state of the blocking
// gate (with the gate's own predecessors finished), CanBegin or Check is nil
// after the steps.
func TestBlockedStepsUnblock(t *testing.T) {
	type state struct {
		s     Status
		acked bool
	}
	states := []state{{NotStarted, false}, {InProgress, false}, {Pass, false}, {Complete, false},
		{Fail, false}, {Skipped, false}, {Skipped, true}, {Inferred, false}}
	run := func(t *testing.T, m Machine, b *Blocked, after func(*Machine) *Blocked) {
		t.Helper()
		seq := m.LastSeq
		for i, s := range b.Steps {
			if s.Phase != b.Gate {
				t.Errorf("step %d %+v is not for the gate phase %d", i, s, b.Gate)
			}
			seq++
			if _, err := m.Apply(fillStep(s, seq)); err != nil {
				t.Fatalf("step %d of %v (%+v) failed: %v", i, kinds(b.Steps), s, err)
			}
		}
		if nb := after(&m); nb != nil {
			t.Fatalf("after steps %v still blocked: %v", kinds(b.Steps), nb)
		}
	}
	for _, gate := range []Phase{Design, Plan, Execute} {
		for _, st := range states {
			t.Run(fmt.Sprintf("begin%d/gate%d-%s-%v", gate+1, gate, st.s, st.acked), func(t *testing.T) {
				m := machineAt(gate, st.s)
				m.Track[gate-1] = Track{}
				m.Ledger.Entry(gate).Acknowledged = st.acked
				b := m.CanBegin(gate + 1)
				if b == nil {
					return
				}
				run(t, m, b, func(m *Machine) *Blocked { return m.CanBegin(gate + 1) })
			})
		}
	}
	for _, p := range Phases {
		for _, st := range states {
			t.Run(fmt.Sprintf("check%d-%s-%v", p, st.s, st.acked), func(t *testing.T) {
				m := machineAt(p, st.s)
				m.Track[p-1] = Track{}
				m.Ledger.Entry(p).Acknowledged = st.acked
				b := m.Check()
				if b == nil {
					return
				}
				run(t, m, b, func(m *Machine) *Blocked { return m.Check() })
			})
		}
	}
}

func kinds(as []Action) []Kind {
	var ks []Kind
	for _, a := range as {
		ks = append(ks, a.Kind)
	}
	return ks
}

func TestFullWalk(t *testing.T) {
	m := New(testPID, "run-7", "ship the ledger", "full")
	seq := int64(0)
	next := func(k Kind, p Phase) Action {
		seq++
		a := actionFor(k, p, seq)
		a.Time = fmt.Sprintf("2026-01-01T00:00:%02dZ", seq)
		return a
	}
	ok := func(a Action) []string { t.Helper(); return applyOK(t, &m, a) }

	if b := m.Check(); b != nil {
		t.Fatalf("fresh Check = %v", b)
	}
	applyFails(t, &m, next(Begin, Plan))
	ok(next(Begin, Design))
	ok(next(GiveVerdict, Design))
	a := next(PassGate, Design)
	a.Artifact = "docs/design.md"
	ok(a)

	ok(next(Begin, Plan))
	if b := m.Check(); b != nil {
		t.Fatalf("Check while planning = %v", b)
	}
	ok(next(Skip, Plan))
	if b := m.Check(); b == nil || b.Gate != Plan {
		t.Fatalf("Check after unacked skip = %v", b)
	}
	err := applyFails(t, &m, next(Begin, Execute))
	b := wantBlocked(t, err, Execute, Plan, Skipped, false)
	if len(b.Steps) != 1 || b.Steps[0].Kind != Ack || b.Steps[0].Confirm != SkipConfirmation {
		t.Fatalf("Steps = %+v, want one ack", b.Steps)
	}
	bad := next(Ack, Plan)
	bad.Confirm = "skip gate"
	applyFails(t, &m, bad)
	ok(next(Ack, Plan))
	if b := m.Check(); b != nil {
		t.Fatalf("Check after ack = %v", b)
	}

	ok(next(Begin, Execute))
	applyFails(t, &m, next(Begin, Completion))
	partial := next(CompletePhase, Execute)
	partial.Done, partial.Total = 4, 5
	applyFails(t, &m, partial)
	done := next(CompletePhase, Execute)
	done.Done, done.Total = 5, 5
	ok(done)

	w := ok(next(Begin, Completion))
	if len(w) != 1 || !strings.Contains(w[0], "Phase 2 (Plan)") || !strings.Contains(w[0], "not needed") {
		t.Fatalf("completion warnings = %q", w)
	}
	ok(next(GiveVerdict, Completion))
	a = next(PassGate, Completion)
	a.Artifact = "docs/report.md"
	ok(a)
	if b := m.Check(); b != nil {
		t.Fatalf("final Check = %v", b)
	}

	want := Ledger{
		Run: "run-7", PipelineID: testPID, Goal: "ship the ledger", Mode: "full",
		Phases: [4]Entry{
			{Status: Pass, Gate: "2026-01-01T00:00:04Z", Artifact: "docs/design.md", PipelineID: testPID},
			{Status: Skipped, Gate: "2026-01-01T00:00:06Z", Reason: "not needed", Acknowledged: true},
			{Status: Complete, Gate: "2026-01-01T00:00:13Z", Tasks: "5/5 complete"},
			{Status: Pass, Gate: "2026-01-01T00:00:16Z", Artifact: "docs/report.md", PipelineID: testPID},
		},
	}
	if !reflect.DeepEqual(m.Ledger, want) {
		t.Fatalf("final ledger:\n got  %+v\n want %+v", m.Ledger, want)
	}
	if m.LastSeq != 16 {
		t.Errorf("LastSeq = %d, want 16", m.LastSeq)
	}
	got, err := Parse(Render(&m.Ledger))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip of the final ledger: %v\n%+v", err, got)
	}
}

func TestNew(t *testing.T) {
	m := New("p", "r", "g", "md")
	want := Machine{Ledger: Ledger{Run: "r", PipelineID: "p", Goal: "g", Mode: "md",
		Phases: [4]Entry{{Status: NotStarted}, {Status: NotStarted}, {Status: NotStarted}, {Status: NotStarted}}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("New = %+v", m)
	}
	if m.Ledger.Entry(Execute) != &m.Ledger.Phases[2] {
		t.Fatal("Entry(3) is not Phases[2]")
	}
}

func TestBlockedStepsExact(t *testing.T) {
	begin := func(p Phase) Action { return Action{Kind: Begin, Phase: p} }
	verdict := func(p Phase) Action { return Action{Kind: GiveVerdict, Phase: p, Verdict: "PASS"} }
	pass := func(p Phase) Action { return Action{Kind: PassGate, Phase: p} }
	complete := Action{Kind: CompletePhase, Phase: Execute}
	infer := func(p Phase) Action { return Action{Kind: Infer, Phase: p} }
	ack := func(p Phase) Action { return Action{Kind: Ack, Phase: p, Confirm: "SKIP GATE"} }
	cases := []struct {
		gate Phase
		s    Status
		want []Action
	}{
		{Design, NotStarted, []Action{begin(1), verdict(1), pass(1)}},
		{Design, InProgress, []Action{verdict(1), pass(1)}},
		{Design, Fail, []Action{begin(1), verdict(1), pass(1)}},
		{Design, Inferred, []Action{verdict(1), pass(1)}},
		{Design, Skipped, []Action{ack(1)}},
		{Plan, Complete, []Action{infer(2), verdict(2), pass(2)}},
		{Execute, NotStarted, []Action{begin(3), complete}},
		{Execute, InProgress, []Action{complete}},
		{Execute, Fail, []Action{begin(3), complete}},
		{Execute, Inferred, []Action{begin(3), complete}},
		{Execute, Skipped, []Action{ack(3)}},
		{Execute, Pass, []Action{infer(3), begin(3), complete}},
	}
	for _, c := range cases {
		m := machineAt(c.gate, c.s)
		b := m.CanBegin(c.gate + 1)
		if b == nil {
			t.Fatalf("gate %d %s: CanBegin(%d) = nil", c.gate, c.s, c.gate+1)
		}
		if !reflect.DeepEqual(b.Steps, c.want) {
			t.Errorf("gate %d %s: Steps = %+v, want %+v", c.gate, c.s, b.Steps, c.want)
		}
	}
}

// TestApplyKeepsTheLedgerWritable: a value the one-line format cannot hold
// is refused, so the ledger always renders and parses back.
func TestApplyKeepsTheLedgerWritable(t *testing.T) {
	m := New("p", "r", "g", "feature")
	if _, err := m.Apply(Action{Kind: Begin, Phase: Design, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	before := m
	for _, a := range []Action{
		{Kind: FailPhase, Phase: Design, Seq: 2, Reason: "two\nlines"},
		{Kind: Skip, Phase: Design, Seq: 2, Reason: " padded "},
		{Kind: FailPhase, Phase: Design, Seq: 2, Time: "2026\r"},
	} {
		_, err := m.Apply(a)
		var ie *IllegalError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the ledger could not be written") {
			t.Errorf("%+v: err %v", a, err)
		}
		if !reflect.DeepEqual(m, before) {
			t.Fatalf("%+v changed the machine", a)
		}
	}
}

// TestReopen: a replay from Phase 2 of a finished ledger puts Phases 2 to
// 4 back to NOT_STARTED, an old verdict no longer counting, and leaves
// Phase 1 as it was; from a phase whose predecessor has not passed it is
// refused and changes nothing.
func TestReopen(t *testing.T) {
	m := New(testPID, "run-1", "goal", "mode")
	for _, p := range Phases {
		m.Ledger.Entry(p).Status, m.Ledger.Entry(p).Gate = finished(p), oldTime
		m.Track[p-1] = Track{Since: 1, Verdict: &Verdict{Verdict: "PASS", PipelineID: testPID, Seq: 2}}
	}
	m.LastSeq = 2
	design := *m.Ledger.Entry(Design)
	applyOK(t, &m, Action{Kind: Reopen, Phase: Plan, Seq: 3, Time: testTime})
	if got := *m.Ledger.Entry(Design); got != design {
		t.Errorf("Phase 1 = %+v, want %+v", got, design)
	}
	for _, p := range []Phase{Plan, Execute, Completion} {
		if got := *m.Ledger.Entry(p); got != (Entry{Status: NotStarted}) {
			t.Errorf("Phase %d = %+v, want NOT_STARTED and nothing else", p, got)
		}
		if got := m.Track[p-1]; got != (Track{Since: 3}) {
			t.Errorf("Phase %d track = %+v, want since 3 and no verdict", p, got)
		}
	}
	applyOK(t, &m, actionFor(Begin, Plan, 4))
	if _, err := m.Apply(actionFor(PassGate, Plan, 5)); err == nil {
		t.Error("Phase 2 passed on the verdict given before the reopen")
	}

	m = machineAt(Execute, InProgress)
	m.Ledger.Entry(Plan).Status = Fail
	before := clone(m)
	_, err := m.Apply(Action{Kind: Reopen, Phase: Execute, Seq: 3, Time: testTime})
	var b *Blocked
	if !errors.As(err, &b) || b.Gate != Plan {
		t.Fatalf("reopen after a failed Phase 2: err = %v, want Phase 2 blocking", err)
	}
	if !reflect.DeepEqual(m, before) {
		t.Error("a refused reopen changed the machine")
	}
}
