package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/ledger"
)

// Dispatch event types: one agent dispatch is a start and a finish, as
// crucible's manifest has a "dispatched" line and a final line per seq.
const (
	TypeDispatchStart  = "dispatch.start"
	TypeDispatchFinish = "dispatch.finish"
)

// Final statuses of a dispatch.
var DispatchStatuses = []string{"completed", "failed", "skipped", "error"}

// DispatchStart is the payload of dispatch.start: crucible's manifest
// fields known when the agent is sent, plus the template name.
type DispatchStart struct {
	Seq      int          `json:"seq"`
	Role     string       `json:"role"`
	Phase    ledger.Phase `json:"phase"`
	Task     *int         `json:"task,omitempty"`
	Template string       `json:"template"`
	// TemplateSHA256 is the sha256 of the template's text it was rendered
	// from, when the engine rendered it; a replay compares it.
	TemplateSHA256 string `json:"template_sha256,omitempty"`
	ModelTier      string `json:"model_tier,omitempty"`
	InputChars     int    `json:"input_chars"`
	Prompt         string `json:"prompt,omitempty"` // path of the stored prompt in the chain's tree
	ReplayOf       *int   `json:"replay_of,omitempty"`
	ReplaySession  string `json:"replay_session,omitempty"`
	Mutation       string `json:"mutation,omitempty"`
	ToolUseID      string `json:"tool_use_id,omitempty"` // Claude Code's id, when a hook recorded it
	// Reconstructed says the start was never seen: a hook recorded it from
	// a later event (a PostToolUse whose PreToolUse never came), at its time.
	Reconstructed bool `json:"reconstructed,omitempty"`
	// Background says the agent was sent to run on in the background (a
	// Claude Code Agent call with run_in_background): its caller went on
	// without waiting for it, and something else reports its end.
	Background bool `json:"background,omitempty"`
	// ParentSeq is the dispatch whose agent made this one: a subagent that
	// an agent of the engine called (CRUCIBLE_SEQ in the hook's environment).
	ParentSeq *int `json:"parent_seq,omitempty"`
	// Where the engine's walk dispatched it: the spec's step id, the plan's
	// task id (Task holds it too when it is a number, for crucible), and
	// the gate or review round.
	Step   string `json:"step,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Round  int    `json:"round,omitempty"`
	// TaskTitle is the plan's title of the task, as status lists it.
	TaskTitle string `json:"task_title,omitempty"`
	// RetryOf is the dispatch of the same step this one runs again: one the
	// engine could not settle when it resumed.
	RetryOf *int `json:"retry_of,omitempty"`
	// RecordedBy is "hook" for a dispatch a hook recorded (git crucible hook
	// claude), possibly while an engine held the pipeline: an agent's own
	// subagent, never the engine's.
	RecordedBy string `json:"recorded_by,omitempty"`
	// RetryReason says why RetryOf's work could not be taken instead: a
	// dispatch that finished is run again only with its reason.
	RetryReason string `json:"retry_reason,omitempty"`
}

// DispatchFinish is the payload of dispatch.finish.
type DispatchFinish struct {
	Seq         int    `json:"seq"`
	Status      string `json:"status"`
	DurationS   int    `json:"duration_s"`
	OutputChars int    `json:"output_chars"`
	Output      string `json:"output,omitempty"` // path of the stored output
	Summary     string `json:"summary,omitempty"`
	ToolCalls   *int   `json:"tool_calls,omitempty"`
	// Failure is how a failed agent failed: agent.FailureKind's words.
	Failure string `json:"failure,omitempty"`
	// Recovered says how a resumed engine settled a dispatch its
	// predecessor left running: waited, adopted or interrupted.
	Recovered string `json:"recovered,omitempty"`
	// ExitCode is how the agent's process exited (-1: killed by a
	// signal); nil when nobody saw it exit (a hook, an adopted agent).
	ExitCode *int `json:"exit_code,omitempty"`
	// Stderr is the tail of what the agent printed on stderr, kept when it
	// failed, so that its own words say why.
	Stderr string `json:"stderr,omitempty"`
	// Denials are what the agent's client refused it ("Write
	// /path/file"): claude's permission_denials.
	Denials []string `json:"denials,omitempty"`
	// Usage is what the agent's client reported the dispatch cost; nil
	// for an agent that reports nothing (metrics estimate those).
	Usage *Usage `json:"usage,omitempty"`
	// AgentType is the kind of agent the client says ran it (Claude Code's
	// agentType: general-purpose, Explore, ...), when it says one.
	AgentType string `json:"agent_type,omitempty"`
}

// Usage is a client's own account of what a dispatch cost.
type Usage struct {
	Client    string `json:"client"`               // claude, codex, claude-code (an Agent call seen by the hook)
	SessionID string `json:"session_id,omitempty"` // the client's session
	Model     string `json:"model,omitempty"`      // the model that answered, as the client names it
	Turns     int    `json:"turns,omitempty"`
	// Tokens, as the client counts them.
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheReadTokens     int64 `json:"cache_read_tokens,omitempty"`
	CacheCreationTokens int64 `json:"cache_creation_tokens,omitempty"`
	// CostUSD is the client's price of the dispatch; nil when it gives
	// none (codex reports tokens only).
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	ToolUses   int      `json:"tool_uses,omitempty"`
	DurationMS int64    `json:"duration_ms,omitempty"` // the client's own time, when it reports one
}

// Check refuses a usage no client could have reported: no client, a
// negative count, a price that is negative or not a number.
func (u *Usage) Check() error {
	switch {
	case strings.TrimSpace(u.Client) == "" || strings.ContainsAny(u.Client, "\n\r"):
		return errors.New("a usage needs the client that reported it")
	case u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheCreationTokens < 0 || u.Turns < 0 || u.ToolUses < 0 || u.DurationMS < 0:
		return errors.New("a usage counts nothing below 0")
	case u.CostUSD != nil && (math.IsNaN(*u.CostUSD) || math.IsInf(*u.CostUSD, 0) || *u.CostUSD < 0):
		return fmt.Errorf("a usage's cost_usd must be an amount of US dollars, 0 or more, not %v", *u.CostUSD)
	}
	return nil
}

// Dispatches is the bounded summary state.json keeps of the manifest; the
// entries themselves are the chain's events.
type Dispatches struct {
	Last     int                 `json:"last"`                // highest seq allocated
	InFlight map[string]InFlight `json:"in_flight,omitempty"` // by seq, until finished
	Finished int                 `json:"finished"`
}

// InFlight is a started dispatch awaiting its finish.
type InFlight struct {
	Started   string `json:"started"`
	Template  string `json:"template"`
	ToolUseID string `json:"tool_use_id,omitempty"`
}

// DispatchPath is where a dispatch's prompt (or, with output, its output)
// is kept in the chain's tree: crucible's <seq>-<template>.md, in buckets
// of 100 seqs so that no tree an append rewrites grows without bound.
func DispatchPath(seq int, template string, output bool) string {
	name := fmt.Sprintf("%d-%s.md", seq, template)
	if output {
		name = fmt.Sprintf("%d-%s.output.md", seq, template)
	}
	return fmt.Sprintf("dispatch/%04d/%s", seq/100, name)
}

// ValidDispatchStatus reports whether s is a final dispatch status.
func ValidDispatchStatus(s string) bool {
	for _, v := range DispatchStatuses {
		if s == v {
			return true
		}
	}
	return false
}

// isSHA256Hex reports whether s is a sha256 in lower-case hex.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// applyDispatch is State.Apply for the dispatch events, payload their data.
func (s *State) applyDispatch(e Event, payload any) error {
	d := &s.Dispatch
	switch p := payload.(type) {
	case *DispatchStart:
		switch {
		case p.Seq != d.Last+1:
			return fmt.Errorf("dispatch seq %d is not the next one (%d)", p.Seq, d.Last+1)
		case p.Role == "":
			return fmt.Errorf("dispatch %d needs a role", p.Seq)
		case CheckName("template", p.Template) != nil:
			return CheckName("template", p.Template)
		case !p.Phase.Valid():
			return fmt.Errorf("dispatch %d: invalid phase %d", p.Seq, p.Phase)
		case p.Prompt != "" && p.Prompt != DispatchPath(p.Seq, p.Template, false):
			return fmt.Errorf("dispatch %d: prompt kept at %q, not %q", p.Seq, p.Prompt, DispatchPath(p.Seq, p.Template, false))
		case p.Round < 0:
			return fmt.Errorf("dispatch %d: invalid round %d", p.Seq, p.Round)
		case p.TemplateSHA256 != "" && !isSHA256Hex(p.TemplateSHA256):
			return fmt.Errorf("dispatch %d: template_sha256 %q is not a sha256 in hex", p.Seq, p.TemplateSHA256)
		case p.RetryReason != "" && p.RetryOf == nil:
			return fmt.Errorf("dispatch %d has a retry reason but retries no dispatch", p.Seq)
		case p.RetryOf != nil && (*p.RetryOf < 1 || *p.RetryOf > d.Last || d.InFlight[strconv.Itoa(*p.RetryOf)] != InFlight{}):
			return fmt.Errorf("dispatch %d retries dispatch %d, which is not a finished one", p.Seq, *p.RetryOf)
		case p.ParentSeq != nil && (*p.ParentSeq < 1 || *p.ParentSeq > d.Last):
			return fmt.Errorf("dispatch %d: parent dispatch %d is not an earlier one", p.Seq, *p.ParentSeq)
		}
		d.InFlight = cloneInFlight(d.InFlight)
		d.Last = p.Seq
		d.InFlight[strconv.Itoa(p.Seq)] = InFlight{Started: e.Time, Template: p.Template, ToolUseID: p.ToolUseID}
	case *DispatchFinish:
		key := strconv.Itoa(p.Seq)
		f, ok := d.InFlight[key]
		switch {
		case !ok && p.Seq >= 1 && p.Seq <= d.Last:
			return fmt.Errorf("dispatch %d is already finished", p.Seq)
		case !ok:
			return fmt.Errorf("no dispatch %d was started", p.Seq)
		case !ValidDispatchStatus(p.Status):
			return fmt.Errorf("dispatch %d: invalid status %q", p.Seq, p.Status)
		case p.Output != "" && p.Output != DispatchPath(p.Seq, f.Template, true):
			return fmt.Errorf("dispatch %d: output kept at %q, not %q", p.Seq, p.Output, DispatchPath(p.Seq, f.Template, true))
		case p.DurationS != Seconds(f.Started, e.Time):
			return fmt.Errorf("dispatch %d: duration %d s does not match its start and finish", p.Seq, p.DurationS)
		case p.AgentType != "" && CheckName("agent type", p.AgentType) != nil:
			return fmt.Errorf("dispatch %d: %w", p.Seq, CheckName("agent type", p.AgentType))
		}
		d.InFlight = cloneInFlight(d.InFlight)
		delete(d.InFlight, key)
		if len(d.InFlight) == 0 {
			d.InFlight = nil
		}
		d.Finished++
	}
	return nil
}

// cloneInFlight copies the map before a change: Apply's copy of the state
// is shallow, and a refused event must leave the old state as it was.
func cloneInFlight(m map[string]InFlight) map[string]InFlight {
	out := make(map[string]InFlight, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Seconds is whole seconds between two event times (0 if unreadable).
func Seconds(from, to string) int {
	a, err1 := time.Parse(time.RFC3339, from)
	b, err2 := time.Parse(time.RFC3339, to)
	if err1 != nil || err2 != nil || b.Before(a) {
		return 0
	}
	return int(b.Sub(a) / time.Second)
}

// DispatchRequest is what `dispatch start` records.
type DispatchRequest struct {
	Role           string
	Phase          ledger.Phase
	Task           *int
	Template       string // "" for the role's name
	TemplateSHA256 string
	ModelTier      string
	ReplayOf       *int
	ReplaySession  string
	Mutation       string
	Prompt         []byte // nil when no prompt is to be kept
	ToolUseID      string
	Step           string
	TaskID         string
	TaskTitle      string
	Round          int
	RetryOf        *int
	RetryReason    string
	ParentSeq      *int // the dispatch whose agent made this one
	Background     bool // sent to run on in the background
	Reconstructed  bool // recorded from a later event than its start (StartDispatch only)
}

// StartDispatch records a dispatch and returns its seq. The seq comes from
// the chain itself inside the compare-and-swap, so concurrent starts get
// distinct, dense seqs.
func (s *Service) StartDispatch(ctx context.Context, id string, r DispatchRequest) (int, error) {
	template, err := r.template()
	if err != nil {
		return 0, err
	}
	var seq int
	_, _, err = s.Update(ctx, id, func(st *State, _ string) (*Change, error) {
		seq = st.Dispatch.Last + 1
		c := &Change{Files: map[string][]byte{}}
		start := r.start(seq, template, c.Files)
		start.RecordedBy = s.recordedBy()
		c.Drafts = []Draft{{Type: TypeDispatchStart, Data: start}}
		return c, nil
	})
	return seq, err
}

// template is the template r names, checked.
func (r *DispatchRequest) template() (string, error) {
	template := r.Template
	if template == "" {
		template = r.Role
	}
	return template, CheckName("template", template)
}

// start is the dispatch.start of r as dispatch seq, its prompt added to files.
func (r *DispatchRequest) start(seq int, template string, files map[string][]byte) DispatchStart {
	d := DispatchStart{Seq: seq, Role: r.Role, Phase: r.Phase, Task: r.Task, Template: template,
		TemplateSHA256: r.TemplateSHA256, ModelTier: r.ModelTier, InputChars: utf8.RuneCount(r.Prompt), ReplayOf: r.ReplayOf,
		ReplaySession: r.ReplaySession, Mutation: r.Mutation, ToolUseID: r.ToolUseID,
		Step: r.Step, TaskID: r.TaskID, TaskTitle: r.TaskTitle, Round: r.Round, RetryOf: r.RetryOf,
		RetryReason: r.RetryReason, ParentSeq: r.ParentSeq, Background: r.Background, Reconstructed: r.Reconstructed}
	if r.Prompt != nil {
		d.Prompt = DispatchPath(seq, template, false)
		files[d.Prompt] = r.Prompt
	}
	return d
}

// FinishRequest is what `dispatch finish` records.
type FinishRequest struct {
	Status    string
	Summary   string
	ToolCalls *int
	Output    []byte // nil when no output is to be kept
	Failure   string
	Recovered string
	ExitCode  *int
	Stderr    string
	Denials   []string
	Usage     *Usage
	AgentType string
}

// finish is the dispatch.finish of r for dispatch seq, started at started
// and finished now, its output added to files.
func (r *FinishRequest) finish(seq int, template, started, now string, files map[string][]byte) DispatchFinish {
	d := DispatchFinish{Seq: seq, Status: r.Status, DurationS: Seconds(started, now),
		OutputChars: utf8.RuneCount(r.Output), Summary: r.Summary, ToolCalls: r.ToolCalls,
		Failure: r.Failure, Recovered: r.Recovered, ExitCode: r.ExitCode, Stderr: r.Stderr, Denials: r.Denials, Usage: r.Usage,
		AgentType: r.AgentType}
	if r.Output != nil {
		d.Output = DispatchPath(seq, template, true)
		files[d.Output] = r.Output
	}
	return d
}

// FinishDispatch records the final entry of dispatch seq, with its duration.
func (s *Service) FinishDispatch(ctx context.Context, id string, seq int, r FinishRequest) (*DispatchFinish, error) {
	var d DispatchFinish
	_, _, err := s.Update(ctx, id, func(st *State, now string) (*Change, error) {
		f := st.Dispatch.InFlight[strconv.Itoa(seq)] // a missing one is refused by Apply
		c := &Change{Files: map[string][]byte{}}
		d = r.finish(seq, f.Template, f.Started, now, c.Files)
		c.Drafts = []Draft{{Type: TypeDispatchFinish, Data: d}}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// ReconstructDispatch records a dispatch whose start was never recorded
// from what its end tells: start and finish in one commit, at the same
// time (duration 0), the start marked Reconstructed.
func (s *Service) ReconstructDispatch(ctx context.Context, id string, r DispatchRequest, f FinishRequest) (*DispatchFinish, error) {
	template, err := r.template()
	if err != nil {
		return nil, err
	}
	var d DispatchFinish
	_, _, err = s.Update(ctx, id, func(st *State, now string) (*Change, error) {
		seq := st.Dispatch.Last + 1
		c := &Change{Files: map[string][]byte{}}
		start := r.start(seq, template, c.Files)
		start.Reconstructed, start.RecordedBy = true, s.recordedBy()
		d = f.finish(seq, template, now, now, c.Files)
		c.Drafts = []Draft{{Type: TypeDispatchStart, Data: start}, {Type: TypeDispatchFinish, Data: d}}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// CheckName accepts what may stand in a file name of the chain's tree: 1 to
// 100 letters, digits, '.', '_' and '-', starting with a letter or digit.
func CheckName(what, name string) error {
	ok := name != "" && len(name) <= 100 && name[0] != '.' && name[0] != '-'
	for _, c := range name {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if !ok {
		return fmt.Errorf("invalid %s %q: 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit", what, name)
	}
	return nil
}

// ManifestEntry is a dispatch as the last manifest.jsonl line for its seq
// shows it: crucible's fields (null where unknown) plus timestamp and template.
type ManifestEntry struct {
	Seq           int     `json:"seq"`
	File          string  `json:"file"`
	Role          string  `json:"role"`
	Phase         string  `json:"phase"`
	Task          *int    `json:"task"`
	Status        string  `json:"status"`
	DurationS     *int    `json:"duration_s"`
	Summary       *string `json:"summary"`
	InputChars    int     `json:"input_chars"`
	OutputChars   *int    `json:"output_chars"`
	ModelTier     *string `json:"model_tier"`
	ToolCalls     *int    `json:"tool_calls"`
	ReplayOf      *int    `json:"replay_of"`
	ReplaySession *string `json:"replay_session"`
	Mutation      *string `json:"mutation"`
	Timestamp     string  `json:"timestamp"`
	Template      string  `json:"template"`
	Reconstructed bool    `json:"reconstructed,omitempty"` // its start was recorded from a later event
	// What crucible's manifest has no field for, when known.
	Background bool     `json:"background,omitempty"`  // sent to run on in the background
	ParentSeq  *int     `json:"parent_seq,omitempty"`  // the dispatch whose agent made this one
	RecordedBy string   `json:"recorded_by,omitempty"` // "hook": recorded by git crucible hook claude
	Failure    string   `json:"failure,omitempty"`     // how a failed or errored agent failed
	AgentType  string   `json:"agent_type,omitempty"`  // the kind of agent its client says ran it
	ExitCode   *int     `json:"exit_code,omitempty"`   // how the agent's process exited, when the engine saw it
	Stderr     string   `json:"stderr,omitempty"`      // the tail of a failed agent's stderr
	Denials    []string `json:"denials,omitempty"`     // what its client refused it
	Usage      *Usage   `json:"usage,omitempty"`       // what its client says it cost
	// RetryOf is the finished dispatch it runs again, RetryReason why
	// that one's work was not taken.
	RetryOf     *int   `json:"retry_of,omitempty"`
	RetryReason string `json:"retry_reason,omitempty"`
	Prompt      string `json:"-"`
	Output      string `json:"-"`
	// PromptFile: the kept prompt is crucible's whole dispatch file, header and all (an import).
	PromptFile bool `json:"-"`
}

// InFlight reports a dispatch with no final entry.
func (m *ManifestEntry) InFlight() bool { return m.Status == "dispatched" }

// Optional is s, or nil when it is empty: crucible writes null for unknowns.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Manifest returns every dispatch of pipeline id in seq order, each as its
// newest entry shows it (crucible's "last line for a seq wins"), imported
// lines included. It reads the chain's events.
func (s *Service) Manifest(ctx context.Context, id string) ([]ManifestEntry, error) {
	events, err := s.ChainEvents(ctx, id)
	if err != nil {
		return nil, err
	}
	return ManifestOf(events)
}

// ManifestOf is Manifest of a chain's events, oldest first.
func ManifestOf(events []Event) ([]ManifestEntry, error) {
	byseq := map[int]*ManifestEntry{}
	for _, e := range events {
		switch e.Type {
		case TypeDispatchStart:
			var d DispatchStart
			if err := DecodeData(e, &d); err != nil {
				return nil, err
			}
			byseq[d.Seq] = &ManifestEntry{Seq: d.Seq, File: fmt.Sprintf("%d-%s.md", d.Seq, d.Template),
				Role: d.Role, Phase: strconv.Itoa(int(d.Phase)), Task: d.Task, Status: "dispatched",
				InputChars: d.InputChars, ModelTier: Optional(d.ModelTier), ReplayOf: d.ReplayOf,
				ReplaySession: Optional(d.ReplaySession), Mutation: Optional(d.Mutation),
				Timestamp: e.Time, Template: d.Template, Reconstructed: d.Reconstructed, Prompt: d.Prompt,
				Background: d.Background, ParentSeq: d.ParentSeq, RecordedBy: d.RecordedBy, RetryOf: d.RetryOf, RetryReason: d.RetryReason}
		case TypeDispatchFinish:
			var d DispatchFinish
			if err := DecodeData(e, &d); err != nil {
				return nil, err
			}
			if m := byseq[d.Seq]; m != nil {
				m.Status, m.DurationS, m.Summary, m.ToolCalls, m.Output = d.Status, &d.DurationS, Optional(d.Summary), d.ToolCalls, d.Output
				m.OutputChars, m.Timestamp = &d.OutputChars, e.Time
				m.Failure, m.AgentType, m.ExitCode, m.Stderr, m.Denials, m.Usage = d.Failure, d.AgentType, d.ExitCode, d.Stderr, d.Denials, d.Usage
			}
		case TypeImportDispatch:
			var d ImportDispatchData
			if err := DecodeData(e, &d); err != nil {
				return nil, err
			}
			l, err := ImportedLine(d.Line)
			if err != nil {
				return nil, err
			}
			m := &ManifestEntry{Seq: l.Seq, File: l.File, Role: l.Role, Phase: l.Phase, Task: l.Task, Status: l.Status,
				DurationS: l.DurationS, Summary: l.Summary, OutputChars: l.OutputChars, ModelTier: l.ModelTier,
				ToolCalls: l.ToolCalls, ReplayOf: l.ReplayOf, ReplaySession: l.ReplaySession, Mutation: l.Mutation,
				Timestamp: e.Time, Template: templateOf(l), Prompt: d.Prompt, Output: d.Output, PromptFile: d.Prompt != ""}
			if l.InputChars != nil {
				m.InputChars = *l.InputChars
			}
			if l.Timestamp != nil {
				m.Timestamp = *l.Timestamp
			} else if d.Time != "" {
				m.Timestamp = d.Time
			}
			if old := byseq[l.Seq]; old != nil && m.Prompt == "" {
				m.Prompt, m.PromptFile = old.Prompt, old.PromptFile
			}
			byseq[l.Seq] = m
		}
	}
	seqs := make([]int, 0, len(byseq))
	for seq := range byseq {
		seqs = append(seqs, seq)
	}
	sort.Ints(seqs)
	out := make([]ManifestEntry, 0, len(seqs))
	for _, seq := range seqs {
		out = append(out, *byseq[seq])
	}
	return out, nil
}

// ChainEvents returns every event of pipeline id, oldest first.
func (s *Service) ChainEvents(ctx context.Context, id string) ([]Event, error) {
	events, _, err := s.ChainEventsAt(ctx, id)
	return events, err
}

// ChainEventsAt is ChainEvents and the chain commit they were read up to.
func (s *Service) ChainEventsAt(ctx context.Context, id string) ([]Event, string, error) {
	var commits [][]Event
	tip := ""
	err := s.Store.EventLog(ctx, id, func(commit string, blob []byte) (bool, error) {
		if tip == "" {
			tip = commit
		}
		events, err := DecodeEvents(blob)
		if err != nil {
			return false, fmt.Errorf("commit %s: %w", commit, err)
		}
		commits = append(commits, events)
		return true, nil
	})
	var out []Event
	for i := len(commits) - 1; i >= 0; i-- {
		out = append(out, commits[i]...)
	}
	return out, tip, err
}

// ReadKept returns a prompt or output kept in pipeline id's tree.
func (s *Service) ReadKept(ctx context.Context, id, path string) ([]byte, error) {
	h, err := s.Store.Head(ctx, id)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.Objects(ctx)
	if err != nil {
		return nil, err
	}
	return r.ReadKind(h.Commit+":"+path, "blob")
}

// InFlightSeq returns the seq of the in-flight dispatch that Claude Code
// knows by toolUseID.
func (st *State) InFlightSeq(toolUseID string) (int, bool) {
	for key, f := range st.Dispatch.InFlight {
		if f.ToolUseID == toolUseID && toolUseID != "" {
			seq, err := strconv.Atoi(key)
			return seq, err == nil
		}
	}
	return 0, false
}
