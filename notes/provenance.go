package notes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Provenance says how a commit was made inside a pipeline. Each is one line
// of the commit's note in ProvenanceRef: a JSON object with the fields in
// this order, the optional ones left out when empty. A commit may carry
// several (a squash unites the records of the commits it replaced).
type Provenance struct {
	Pipeline   string `json:"pipeline"`
	Phase      int    `json:"phase"`                 // the phase the commit was made in, 1-4
	Task       int    `json:"task,omitempty"`        // the plan's task, when a dispatcher named one
	Seq        int    `json:"seq,omitempty"`         // the dispatch seq of the agent that made it
	Role       string `json:"role,omitempty"`        // the agent's role
	LedgerHead string `json:"ledger_head,omitempty"` // the pipeline ref's commit at that moment
	Writer     string `json:"writer,omitempty"`      // the clone that wrote the note
}

func (p *Provenance) check() error {
	switch {
	case p.Pipeline == "":
		return errors.New("provenance without a pipeline")
	case p.Phase < 1:
		return fmt.Errorf("provenance with phase %d", p.Phase)
	case p.Task < 0 || p.Seq < 0:
		return errors.New("provenance with a negative task or seq")
	}
	return nil
}

// Encode returns p as one note line (no newline).
func (p Provenance) Encode() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// LineError is a note line that is no provenance record.
type LineError struct {
	Line int // from 1
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// ParseProvenance reads the records of a provenance note. Unknown fields are
// ignored (a newer writer may add some) and blank lines skipped; each line
// that is no record gives a *LineError, and the others are still returned.
func ParseProvenance(note []byte) ([]Provenance, []error) {
	var recs []Provenance
	var errs []error
	for i, line := range splitLines(note) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var p Provenance
		err := errors.New("not a JSON object")
		if line[0] == '{' {
			if err = json.Unmarshal(line, &p); err == nil {
				err = p.check()
			}
		}
		if err != nil {
			errs = append(errs, &LineError{Line: i + 1, Err: err})
			continue
		}
		recs = append(recs, p)
	}
	return recs, errs
}
