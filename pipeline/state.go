package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
)

// StateFormat is the version of state.json this code writes: 2 leaves
// each task's entries to the files of TasksDir. It reads 1 too, which
// held them all.
const StateFormat = 2

// Pipeline statuses.
const (
	StatusOpen      = "open"
	StatusAbandoned = "abandoned"
)

// Modes a pipeline runs in.
var Modes = []string{"feature", "refactor"}

// State is state.json: everything derived from a chain's events that a
// reader needs without replaying them.
type State struct {
	Format   int            `json:"format"`
	ID       string         `json:"id"`
	Goal     string         `json:"goal"`
	Mode     string         `json:"mode"`
	Branch   string         `json:"branch,omitempty"`
	Baseline string         `json:"baseline,omitempty"`
	Created  string         `json:"created"`
	Updated  string         `json:"updated"`
	Status   string         `json:"status"`
	Phase    ledger.Phase   `json:"phase"`
	Seq      int64          `json:"seq"`
	Lamport  int64          `json:"lamport"`
	Counters map[string]int `json:"counters"`
	Gates    ledger.Machine `json:"gates"`
	Dispatch Dispatches     `json:"dispatch"`
	View     View           `json:"view"`
	Import   Imports        `json:"import"`
	// Conflicts are events a merge of two clones' chains could not apply.
	Conflicts []Conflict `json:"conflicts,omitempty"`
}

// Encode renders state.json canonically, in s.Format's form:
// json.MarshalIndent's bytes with one space per level.
func (s *State) Encode() []byte {
	var e stateEncoder
	return e.encode(s)
}

// stateEncoder renders states into buffers it reuses, for verify, which
// renders one for every commit.
type stateEncoder struct {
	compact bytes.Buffer
	out     []byte
}

// encode renders s as Encode does, into a buffer the next call reuses.
func (e *stateEncoder) encode(s *State) []byte {
	if s.Format >= 2 {
		c := withoutTasks(s)
		return e.render(&c)
	}
	return e.render(s)
}

// render renders v (a State or a task file) as Encode does.
func (e *stateEncoder) render(v any) []byte {
	e.compact.Reset()
	json.NewEncoder(&e.compact).Encode(v) // states and task files always marshal; Encode adds a newline
	e.out = append(indent(e.out[:0], bytes.TrimSuffix(e.compact.Bytes(), []byte("\n"))), '\n')
	return e.out
}

// indent is json.Indent of what json.Marshal writes (compact and valid)
// with one space per level, without the general scanner: verify renders
// state.json once for every commit it replays, and json.Indent was most of
// that. Strings and literals are copied whole.
// The result is appended to out.
func indent(out, compact []byte) []byte {
	const spaces = "                " // 16 levels, more than state.json has
	depth := 0
	newline := func() {
		out = append(out, '\n')
		out = append(out, spaces[:min(depth, len(spaces))]...)
		for range depth - len(spaces) {
			out = append(out, ' ')
		}
	}
	for i := 0; i < len(compact); i++ {
		switch c := compact[i]; c {
		case '{', '[':
			if i+1 < len(compact) && (compact[i+1] == '}' || compact[i+1] == ']') {
				out = append(out, c, compact[i+1]) // empty: {} or []
				i++
				continue
			}
			depth++
			out = append(out, c)
			newline()
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, c, ' ')
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		default: // a string, number, true, false or null, up to what follows it
			end := i + 1
			if c == '"' {
				for end < len(compact) && compact[end] != '"' {
					if compact[end] == '\\' {
						end++
					}
					end++
				}
				end = min(end+1, len(compact))
			} else {
				for end < len(compact) && !strings.ContainsRune(",:]}", rune(compact[end])) {
					end++
				}
			}
			out = append(out, compact[i:end]...)
			i = end - 1
		}
	}
	return out
}

// DecodeState parses state.json, refusing a format this code does not
// know. From format 2 on, the state it returns lacks the entries of
// its task files (Service.Load has them all).
func DecodeState(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state.json: %w", err)
	}
	if s.Format != 1 && s.Format != StateFormat {
		return nil, fmt.Errorf("state.json: unknown format %d (this git-crucible reads 1 to %d)", s.Format, StateFormat)
	}
	return &s, nil
}

// Finished reports whether the pipeline is over: abandoned, or Phase 4 passed.
func (s *State) Finished() bool {
	return s.Status == StatusAbandoned || s.Gates.Ledger.Entry(ledger.Completion).Status == ledger.Pass
}

// Condition is the pipeline's status for people: open, complete or abandoned.
func (s *State) Condition() string {
	if s.Status == StatusOpen && s.Finished() {
		return "complete"
	}
	return s.Status
}

// ErrAbandoned refuses changes to an abandoned pipeline.
var ErrAbandoned = errors.New("the pipeline is abandoned")

// Apply advances the state by one event, which must be the next in order.
// On error the state is unchanged. Warnings are for the user to see.
func (s *State) Apply(e Event) (warnings []string, err error) {
	if e.Seq != s.Seq+1 {
		return nil, fmt.Errorf("event seq %d does not follow %d", e.Seq, s.Seq)
	}
	if e.Lamport <= s.Lamport {
		return nil, fmt.Errorf("event seq %d: lamport clock %d does not advance past %d", e.Seq, e.Lamport, s.Lamport)
	}
	if (e.Type == TypeStart) != (s.Seq == 0) {
		return nil, fmt.Errorf("event seq %d: %s must be the first event and only the first", e.Seq, TypeStart)
	}
	if s.Status == StatusAbandoned {
		return nil, ErrAbandoned
	}
	p, err := decodePayload(e)
	if err != nil {
		return nil, err
	}
	next := *s
	next.Counters = make(map[string]int, len(s.Counters)+1)
	for k, v := range s.Counters {
		next.Counters[k] = v
	}
	switch d := p.(type) {
	case *StartData:
		if err := validateStart(*d); err != nil {
			return nil, err
		}
		created := e.Time
		if d.Started != "" {
			created = d.Started
		}
		next = State{Format: StateFormat, ID: d.ID, Goal: d.Goal, Mode: d.Mode, Branch: d.Branch,
			Baseline: d.Baseline, Created: created, Status: StatusOpen, Counters: next.Counters,
			Gates: ledger.New(d.ID, created, LedgerGoal(d.Goal), d.Mode)}
	case *AbandonData:
		next.Status = StatusAbandoned
	case *VerdictData:
		a := ledger.Action{Kind: ledger.GiveVerdict, Phase: d.Phase, Seq: e.Seq, Time: e.Time,
			Verdict: d.Verdict, PipelineID: d.PipelineID}
		if warnings, err = next.Gates.Apply(a); err != nil {
			return nil, err
		}
	case *CheckpointData:
		if d.ID == "" || d.Reason == "" {
			return nil, errors.New("a checkpoint needs an id and a reason")
		}
	case *DecisionData:
		if d.Type == "" || d.Choice == "" {
			return nil, errors.New("a decision needs a type and a choice")
		}
		if err := checkTime("decision time", d.Time); err != nil {
			return nil, err
		}
	case *ResolveData:
		if err := next.applyResolve(d); err != nil {
			return nil, err
		}
	case *HandoffData:
		if e.Type == TypeImportHandoff {
			err = next.applyImport(e, p)
		} else {
			err = next.checkHandoff(*d)
		}
		if err != nil {
			return nil, err
		}
	case *StepData, *DAGRunData, *DAGTaskData, *DAGLevelData, *BaselineData:
		if err := p.(interface{ check() error }).check(); err != nil {
			return nil, err
		}
	case *ReplayData:
		if err := next.applyReplay(e, d); err != nil {
			return nil, err
		}
	case *DispatchStart, *DispatchFinish:
		if err := next.applyDispatch(e, p); err != nil {
			return nil, err
		}
	case *LedgerData:
		a := ledger.Action{Kind: ledger.Kind(strings.TrimPrefix(e.Type, ledgerType)), Phase: d.Phase,
			Seq: e.Seq, Time: e.Time, Reason: d.Reason, Artifact: d.Artifact, Done: d.Done,
			Total: d.Total, Confirm: d.Confirm}
		if a.Kind == ledger.GiveVerdict {
			return nil, fmt.Errorf("unknown event type %q", e.Type)
		}
		if warnings, err = next.Gates.Apply(a); err != nil {
			return nil, err
		}
	default: // the import events
		if err := next.applyImport(e, p); err != nil {
			return nil, err
		}
	}
	next.Seq, next.Lamport, next.Updated = e.Seq, e.Lamport, e.Time
	next.Counters[e.Type]++
	next.Phase = next.Gates.Current()
	next.observe(s, e, p)
	*s = next
	return warnings, nil
}

func validateStart(d StartData) error {
	if d.Branch != "" {
		// The branch names a ref (refs/crucible/active/<branch>) in every
		// clone that takes this pipeline in: it must be one git accepts.
		if err := gitext.CheckRefName("refs/heads/" + d.Branch); err != nil {
			return fmt.Errorf("branch %q: %w", d.Branch, err)
		}
	}
	if strings.TrimSpace(d.Goal) == "" {
		return errors.New("the goal is empty")
	}
	if err := checkTime("start time", d.Started); err != nil {
		return err
	}
	if !utf8.ValidString(d.Goal) {
		return errors.New("the goal is not valid UTF-8 text")
	}
	for _, m := range Modes {
		if d.Mode == m {
			return nil
		}
	}
	return fmt.Errorf("invalid mode %q (want %s)", d.Mode, strings.Join(Modes, " or "))
}

// checkTime accepts an optional time given in an event's payload: empty,
// or RFC 3339 as event times are, so that Seconds and the view read it.
func checkTime(what, t string) error {
	if _, err := time.Parse(time.RFC3339, t); t != "" && err != nil {
		return fmt.Errorf("invalid %s %q (want RFC 3339)", what, t)
	}
	return nil
}

// LedgerGoal is the goal as the one-line ledger format can hold it; the
// verbatim goal stays in pipeline.toml and state.json.
func LedgerGoal(goal string) string { return strings.Join(strings.Fields(goal), " ") }

// strictUnmarshal rejects unknown fields, so a forged or newer event is
// reported instead of half-understood.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}
