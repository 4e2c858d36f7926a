package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/git-crucible/git-crucible/ledger"
)

// LedgerOf reads the gate ledger out of state.json for hot paths (ledger
// check, hooks). It decodes into interface values, which builds none of
// encoding/json's per-type caches: setting those up for State is a fifth of
// a hook's whole run. It accepts exactly what DecodeState accepts and gives
// the same ledger (a fuzz test holds it to that).
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

// GatesOf is LedgerOf that also reads the blocking conflicts and status.
// It builds only the members it reads: the rest of the state (the view, the
// counters) is scanned, as it must be valid, and left as it is. The Gates
// come back by pointer: the hot paths' frames stay small enough that their
// goroutine's first stack holds them.
func GatesOf(b []byte) (*Gates, error) {
	var top map[string]json.RawMessage
	var notObject *json.UnmarshalTypeError
	if err := json.Unmarshal(b, &top); err != nil && !errors.As(err, &notObject) {
		return nil, fmt.Errorf("state.json: %w", err)
	}
	var v any // as json.Unmarshal into any would give it, with the members read
	if top != nil {
		m := map[string]any{}
		for _, k := range []string{"format", "gates", "conflicts", "status"} {
			if raw, ok := top[k]; ok {
				var x any
				_ = json.Unmarshal(raw, &x) // valid: the whole was
				m[k] = x
			}
		}
		v = m
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
	if f, _ := top["format"].(float64); f != StateFormat {
		return fmt.Errorf("state.json: unknown format %v (this git-crucible reads %d)", top["format"], StateFormat)
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
