package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
)

// LedgerOf reads the gate ledger out of state.json for hot paths (ledger
// check, hooks). It builds none of encoding/json's per-type caches: setting
// those up for State is a fifth of a hook's whole run. On any state.json
// this code writes it gives the ledger DecodeState gives (a fuzz test holds
// it to that).
func LedgerOf(b []byte) (ledger.Ledger, error) {
	g, err := GatesOf(b)
	if err != nil {
		return ledger.Ledger{}, err
	}
	return g.Ledger, nil
}

// Gates is what the hot paths need of a state: the gate ledger, the merge
// conflicts that block it, and the pipeline's status.
type Gates struct {
	Ledger    ledger.Ledger
	Conflicts []Conflict // blocking ones only
	Status    string
}

// Check is the refusal of phase starting (0: of the current phase going
// on): a *ConflictError naming pipeline id while a gate conflict is open,
// else a *ledger.Blocked, or nil. It also returns the phase it judged.
func (g *Gates) Check(id string, phase ledger.Phase) (ledger.Phase, error) {
	var blocked *ledger.Blocked
	if phase == 0 {
		phase, blocked = g.Ledger.Current(), g.Ledger.Check()
	} else {
		blocked = g.Ledger.CanBegin(phase)
	}
	switch {
	case len(g.Conflicts) > 0:
		return phase, &ConflictError{Pipeline: id, Conflicts: g.Conflicts}
	case blocked != nil:
		return phase, blocked
	}
	return phase, nil
}

// GatesOf is LedgerOf that also reads the blocking conflicts and status:
// in one pass over the text when it is as this code writes it (scanGates),
// else through interface values. The Gates come back by pointer: the hot
// paths' frames stay small enough that their goroutine's first stacks hold
// them (a stack grown is one copied, every frame unwound through the
// pclntab of a 13 MB binary).
func GatesOf(b []byte) (*Gates, error) {
	if g, ok := scanGates(b); ok {
		return g, nil
	}
	return gatesOfValues(b)
}

// gatesOfValues is GatesOf for any text: decoded into interface values.
func gatesOfValues(b []byte) (*Gates, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("state.json: %w", err)
	}
	g := new(Gates)
	if err := ledgerOf(v, &g.Ledger); err != nil {
		return nil, err
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	var conflicts []Conflict
	list, _ := v.(map[string]any)["conflicts"].([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		phase, _ := m["phase"].(float64)
		c := Conflict{Phase: ledger.Phase(phase), Event: str(m, "event"), Type: str(m, "type"), Writer: str(m, "writer"), Message: str(m, "message")}
		if c.Blocks() {
			conflicts = append(conflicts, c)
		}
	}
	g.Status, _ = v.(map[string]any)["status"].(string)
	g.Conflicts = conflicts
	return g, nil
}

func ledgerOf(v any, l *ledger.Ledger) error {
	top, _ := v.(map[string]any)
	if f, _ := top["format"].(float64); f != 1 && f != StateFormat {
		return fmt.Errorf("state.json: unknown format %v (this git-crucible reads 1 to %d)", top["format"], StateFormat)
	}
	gates, _ := top["gates"].(map[string]any)
	raw, _ := gates["ledger"].(map[string]any)
	phases, _ := raw["phases"].([]any)
	if raw == nil || len(phases) != len(l.Phases) {
		return errors.New("state.json: no gate ledger with four phases")
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	l.Run, l.PipelineID, l.Goal, l.Mode = str(raw, "run"), str(raw, "pipeline_id"), str(raw, "goal"), str(raw, "mode")
	for i, p := range phases {
		m, _ := p.(map[string]any)
		e := &l.Phases[i]
		e.Status = ledger.Status(str(m, "status"))
		e.Gate, e.Artifact, e.Tasks, e.Reason, e.PipelineID = str(m, "gate"), str(m, "artifact"), str(m, "tasks"), str(m, "reason"), str(m, "pipeline_id")
		e.Acknowledged, _ = m["acknowledged"].(bool)
	}
	return nil
}

// LoadGates returns pipeline id's gates the hot-path way.
func (s *Service) LoadGates(ctx context.Context, id string) (*Gates, error) {
	h, err := s.Store.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	g, err := GatesOf(h.State)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", id, err)
	}
	return g, nil
}
