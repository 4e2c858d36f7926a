// Package ledger is the gate ledger of a four-phase crucible pipeline: its
// state machine and its crucible markdown codec. It does no I/O.
package ledger

import (
	"fmt"
	"strconv"
	"strings"
)

// Phase numbers a pipeline phase, 1 to 4.
type Phase int

const (
	Design     Phase = 1
	Plan       Phase = 2
	Execute    Phase = 3
	Completion Phase = 4
)

// Phases lists the four phases in order.
var Phases = [4]Phase{Design, Plan, Execute, Completion}

var phaseNames = [5]string{"", "Design", "Plan", "Execute", "Completion"}

// Valid reports whether p is one of the four phases.
func (p Phase) Valid() bool { return p >= Design && p <= Completion }

// Name is the phase's title as the ledger writes it ("Design").
func (p Phase) Name() string {
	if !p.Valid() {
		return fmt.Sprintf("Phase(%d)", int(p))
	}
	return phaseNames[p]
}

func (p Phase) String() string { return strconv.Itoa(int(p)) }

// HasQualityGate is false only for Execute, which ends COMPLETE instead of PASS.
func (p Phase) HasQualityGate() bool { return p != Execute }

// ParsePhase accepts 1-4 or a phase name (design, plan, execute, completion),
// case-insensitively.
func ParsePhase(s string) (Phase, error) {
	t := strings.ToLower(s) // " 1" is refused: what a caller trims is its own business
	for _, p := range Phases {
		if t == strconv.Itoa(int(p)) || t == strings.ToLower(p.Name()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("invalid phase %q (want 1-4 or design, plan, execute, completion)", s)
}

// Status is a phase's ledger status.
type Status string

const (
	NotStarted Status = "NOT_STARTED"
	InProgress Status = "IN_PROGRESS"
	Pass       Status = "PASS"
	Complete   Status = "COMPLETE"
	Fail       Status = "FAIL"
	Skipped    Status = "SKIPPED"
	Inferred   Status = "INFERRED"
)

// Statuses lists every status in the seed's order.
var Statuses = []Status{NotStarted, InProgress, Pass, Complete, Fail, Skipped, Inferred}

// Valid reports whether s is one of the seven statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}
