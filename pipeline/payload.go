package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"
)

// newPayload is a pointer to the type event type typ carries in its data,
// nil for a type this code does not know.
func newPayload(typ string) any {
	switch typ {
	case TypeStart:
		return &StartData{}
	case TypeAbandon:
		return &AbandonData{}
	case TypeVerdict:
		return &VerdictData{}
	case TypeCheckpoint:
		return &CheckpointData{}
	case TypeDecision:
		return &DecisionData{}
	case TypeImportFiles:
		return &ImportFilesData{}
	case TypeImportLedger:
		return &ImportLedgerData{}
	case TypeImportDispatch:
		return &ImportDispatchData{}
	case TypeImportHandoff, TypeHandoff:
		return &HandoffData{}
	case TypeImportVerdict:
		return &ImportVerdictData{}
	case TypeResolve:
		return &ResolveData{}
	case TypeDispatchStart:
		return &DispatchStart{}
	case TypeDispatchFinish:
		return &DispatchFinish{}
	case TypeStep:
		return &StepData{}
	case TypeBaseline:
		return &BaselineData{}
	case TypeReplay:
		return &ReplayData{}
	case TypeDAGRun:
		return &DAGRunData{}
	case TypeDAGTask:
		return &DAGTaskData{}
	case TypeDAGLevel:
		return &DAGLevelData{}
	}
	if strings.HasPrefix(typ, ledgerType) {
		return &LedgerData{}
	}
	return nil
}

// decodePayload decodes e's data strictly, once: Apply checks it, and
// observe and describe read the same value. An imported manifest line is
// read here too. The errors are worded as they always were, so that a
// stored chain's findings do not change.
func decodePayload(e Event) (any, error) {
	p := newPayload(e.Type)
	if p == nil {
		return nil, fmt.Errorf("unknown event type %q", e.Type)
	}
	if e.Type == TypeCheckpoint || strings.HasPrefix(e.Type, "import.") {
		if err := DecodeData(e, p); err != nil {
			return nil, err
		}
	} else if err := strictUnmarshal(e.Data, p); err != nil {
		return nil, fmt.Errorf("%s: %w", e.Type, err)
	}
	if d, ok := p.(*ImportDispatchData); ok {
		line, err := ImportedLine(d.Line)
		if err != nil {
			return nil, err
		}
		return &importedDispatch{data: d, line: line}, nil
	}
	return p, nil
}

// importedDispatch is an import.dispatch payload with its line read.
type importedDispatch struct {
	data *ImportDispatchData
	line ImportedDispatch
}

// Describe is an event's one-line summary, for commit subjects and logs.
func Describe(e Event) string {
	p := newPayload(e.Type)
	if p != nil {
		_ = json.Unmarshal(e.Data, p) // a summary of an odd payload is just shorter
	}
	return describe(e.Type, p)
}

// describe is Describe of a decoded payload.
func describe(typ string, p any) string {
	switch d := p.(type) {
	case *StartData:
		return "start: " + LedgerGoal(d.Goal)
	case *DispatchStart:
		task := ""
		if d.Task != nil {
			task = fmt.Sprintf(" on task %d", *d.Task)
		}
		if d.Reconstructed {
			task += " (reconstructed)"
		}
		return fmt.Sprintf("dispatch %d: %s%s", d.Seq, d.Role, task)
	case *DispatchFinish:
		return fmt.Sprintf("dispatch %d %s", d.Seq, d.Status)
	case *HandoffData:
		if typ == TypeImportHandoff {
			return fmt.Sprintf("imported handoff %d → %d", d.From, d.From+1)
		}
		return fmt.Sprintf("handoff %d → %d", d.From, d.From+1)
	case *ImportDispatchData, *importedDispatch:
		return "imported a manifest line"
	case *ImportLedgerData:
		return "imported the gate ledger"
	case *ImportVerdictData:
		return "imported a verdict marker"
	case *ImportFilesData:
		return "import"
	case *CheckpointData:
		return "checkpoint " + d.Reason
	case *ResolveData:
		if d.Phase != 0 {
			return fmt.Sprintf("resolve Phase %d conflicts: %s", d.Phase, LedgerGoal(d.Reason))
		}
		return "resolve conflicts: " + LedgerGoal(d.Reason)
	case *DecisionData:
		return fmt.Sprintf("decision %s: %s", d.Type, LedgerGoal(d.Choice))
	case *StepData:
		return d.describe()
	case *BaselineData:
		return d.describe()
	case *DAGRunData:
		return d.describe()
	case *DAGTaskData:
		return d.describe()
	case *DAGLevelData:
		return d.describe()
	case *ReplayData:
		return fmt.Sprintf("replay %s from Phase %d", d.Session, d.From)
	case *VerdictData:
		return fmt.Sprintf("verdict %s for phase %d", d.Verdict, d.Phase)
	case *LedgerData:
		return fmt.Sprintf("%s phase %d", strings.TrimPrefix(typ, ledgerType), d.Phase)
	}
	return strings.TrimPrefix(typ, "pipeline.")
}
