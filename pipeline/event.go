// Package pipeline gives the events of a pipeline chain their meaning: it
// defines the event types, derives the state they lead to (header, ledger,
// counters), appends them through the store, and replays chains to verify
// them.
package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
)

// Event types.
const (
	TypeStart   = "pipeline.start"
	TypeAbandon = "pipeline.abandon"
	TypeVerdict = "gate.verdict"
	// TypeDecision is a decision-journal entry.
	TypeDecision = "decision"
	ledgerType   = "ledger." // + ledger.Kind
)

// LedgerType is the event type of a ledger action.
func LedgerType(k ledger.Kind) string { return ledgerType + string(k) }

// Event is one line of a chain commit's events.jsonl.
type Event struct {
	ID      string          `json:"id"`
	Seq     int64           `json:"seq"`
	Lamport int64           `json:"lamport"`
	Time    string          `json:"time"`
	Writer  string          `json:"writer"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// StartData is the payload of pipeline.start.
type StartData struct {
	ID       string `json:"id"`
	Goal     string `json:"goal"`
	Mode     string `json:"mode"`
	Branch   string `json:"branch,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	// Started is when the pipeline began, when that was before this record
	// (an import of a run that crucible began): RFC 3339. The event's own
	// time otherwise.
	Started string `json:"started,omitempty"`
}

// AbandonData is the payload of pipeline.abandon.
type AbandonData struct {
	Reason     string `json:"reason,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
}

// LedgerData is the payload of ledger.* events.
type LedgerData struct {
	Phase    ledger.Phase `json:"phase"`
	Reason   string       `json:"reason,omitempty"`
	Artifact string       `json:"artifact,omitempty"`
	Done     int          `json:"done,omitempty"`
	Total    int          `json:"total,omitempty"`
	Confirm  string       `json:"confirm,omitempty"`
}

// VerdictData is the payload of gate.verdict.
type VerdictData struct {
	Phase      ledger.Phase  `json:"phase"`
	Verdict    string        `json:"verdict"`
	PipelineID string        `json:"pipeline_id"`
	Rounds     int           `json:"rounds,omitempty"`
	Score      int           `json:"score,omitempty"`
	Marker     []MarkerField `json:"marker,omitempty"` // every line of a crucible marker, in order
}

// MarkerField is one "Key: value" line of a verdict marker; keys may repeat.
type MarkerField struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// TypeCheckpoint records a working-tree checkpoint taken during the pipeline.
const TypeCheckpoint = "checkpoint"

// CheckpointData is the payload of checkpoint: where replay finds the tree.
type CheckpointData struct {
	ID     string `json:"id"` // the commit in the worktree's shadow repository
	Reason string `json:"reason"`
	Source string `json:"source,omitempty"`
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
}

// DecisionData is the payload of decision: crucible's journal line
// "DECISION: <type> | choice=<what> | reason=<why> | alternatives=<rejected>".
type DecisionData struct {
	Type         string `json:"type"`
	Choice       string `json:"choice"`
	Reason       string `json:"reason,omitempty"`
	Alternatives string `json:"alternatives,omitempty"`
	// Suggestion is, on an escalation, one sentence on what a person can
	// do: health's action while it is pending.
	Suggestion string `json:"suggestion,omitempty"`
	// Time is when it was decided, when that was before this record (an
	// imported journal line): RFC 3339. The event's own time otherwise.
	Time string `json:"time,omitempty"`
}

// DecidedAt is when d was decided: its own Time, else that of its event e.
func (d DecisionData) DecidedAt(e Event) string {
	if d.Time != "" {
		return d.Time
	}
	return e.Time
}

// Draft is an event before the store gives it a place in the chain.
type Draft struct {
	Type string
	Data any
}

// seal fills in the event's id: a digest of its canonical form, so the same
// event always has the same id and two writers never share one.
func (e *Event) seal() error {
	e.ID = ""
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	e.ID = hex.EncodeToString(sum[:8])
	return nil
}

// checkID reports an event whose id does not match its content.
func (e Event) checkID() error {
	want := e
	if err := want.seal(); err != nil {
		return err
	}
	if want.ID != e.ID {
		return fmt.Errorf("event seq %d: id %s does not match its content (want %s)", e.Seq, e.ID, want.ID)
	}
	return nil
}

// DecodeData decodes e's payload into v, refusing unknown fields.
func DecodeData(e Event, v any) error {
	if err := strictUnmarshal(e.Data, v); err != nil {
		return fmt.Errorf("event seq %d (%s): %w", e.Seq, e.Type, err)
	}
	return nil
}

// DecodeEvents parses an events.jsonl blob strictly: every line one event.
func DecodeEvents(b []byte) ([]Event, error) {
	var out []Event
	line := 0
	for len(b) > 0 {
		line++
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, fmt.Errorf("line %d: no final newline", line)
		}
		var e Event
		if err := strictUnmarshal(b[:i], &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, e)
		b = b[i+1:]
	}
	return out, nil
}
