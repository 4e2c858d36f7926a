// Package claudecode records what Claude Code's hooks report about its
// Agent tool as dispatches of a pipeline: each call's start, and its end —
// returned, failed, interrupted, or, for an agent sent to run on in the
// background, the SubagentStop that ends it, or the turn or session that
// ends without one. It keeps the background agents it waits for in the
// repository's crucible directory (agents.go), and never prints.
package claudecode

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Recorder records hook events in a repository.
type Recorder struct {
	Svc *pipeline.Service
	// Pipeline is where calls are recorded: "" for the branch's active
	// pipeline. The end of a background agent goes where its start went.
	Pipeline string
	// Parent is the dispatch whose agent makes the calls (the engine's
	// CRUCIBLE_SEQ), 0 for none; it belongs to Pipeline.
	Parent int
}

// Actions: what Record did with an event.
const (
	Started       = "started"       // a call's start
	Finished      = "finished"      // a call's end
	Reconstructed = "reconstructed" // a call's start and end at once, its start never seen
	Launched      = "launched"      // a call's agent runs on in the background: its dispatch stays in flight
	Noted         = "noted"         // a background agent stopped before its launch was recorded: kept for it
	Settled       = "settled"       // background agents' dispatches ended detached
	Ignored       = "ignored"       // nothing to record (a foreground agent's SubagentStop, a turn with none in the background)
)

// Outcome is what Record did.
type Outcome struct {
	Event         string                   `json:"event"`
	Action        string                   `json:"action"`
	Pipeline      string                   `json:"pipeline,omitempty"`
	Seq           int                      `json:"seq,omitempty"`
	Reconstructed bool                     `json:"reconstructed,omitempty"`
	AgentID       string                   `json:"agent_id,omitempty"`
	Finish        *pipeline.DispatchFinish `json:"finish,omitempty"`
	Settled       []SettledDispatch        `json:"settled,omitempty"`
	// Warnings are what the caller should say: recorded all the same.
	Warnings []string `json:"-"`
}

// SettledDispatch is a background agent's dispatch that Record ended.
type SettledDispatch struct {
	Pipeline string                   `json:"pipeline"`
	Seq      int                      `json:"seq"`
	AgentID  string                   `json:"agent_id"`
	Finish   *pipeline.DispatchFinish `json:"finish"`
}

// Record records e:
//   - PreToolUse starts a dispatch (interop.DispatchOf), in the phase the
//     pipeline is in unless a dispatch file says otherwise, marked
//     background when the call runs its agent in the background, and
//     linked to Parent;
//   - PostToolUse finishes the call's dispatch (interop.FinishOf), or
//     reconstructs it when its start was never recorded (a warning says
//     so). A call that returned while its agent runs on in the background
//     (Launched) is not finished: its agent is kept, by id, for the
//     SubagentStop that ends it;
//   - PostToolUseFailure finishes the call's dispatch failed (or error,
//     interrupted), or reconstructs it;
//   - SubagentStop finishes the dispatch of a background agent kept. A
//     background agent that stops before its launch is recorded (Claude
//     Code runs the two hooks at once) is noted, and the launch finishes
//     it. The SubagentStop of any other agent is ignored: its call's
//     PostToolUse ends it;
//   - Stop settles, status error and failure detached, the session's kept
//     agents that Claude Code no longer lists among its background tasks
//     (it stopped them, and said nothing else: claude -p killed by a
//     signal);
//   - SessionEnd settles every agent of the session still kept.
func (r *Recorder) Record(ctx context.Context, e interop.HookEvent) (*Outcome, error) {
	switch e.Event {
	case interop.HookSubagentStop:
		return r.subagentStop(ctx, e)
	case interop.HookStop, interop.HookSessionEnd:
		return r.settle(ctx, e)
	}
	o := &Outcome{Event: e.Event}
	id, err := r.Svc.Resolve(ctx, r.Pipeline)
	if err != nil {
		return nil, err
	}
	st, _, err := r.Svc.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	o.Pipeline = id
	seq, inFlight := st.InFlightSeq(e.ToolUseID)
	if e.Event != interop.HookPreToolUse && inFlight && e.Launched {
		return r.launched(ctx, o, e, seq)
	}
	if e.Event != interop.HookPreToolUse && inFlight {
		if w := e.AgentTypeMismatch(); w != "" {
			o.Warnings = append(o.Warnings, w)
		}
		o.Action, o.Seq = Finished, seq
		o.Finish, err = r.Svc.FinishDispatch(ctx, id, seq, interop.FinishOf(e))
		return o, err
	}

	// A PreToolUse, or an end whose PreToolUse never came.
	d := interop.DispatchOf(e)
	if d.Warning != "" {
		o.Warnings = append(o.Warnings, d.Warning)
	}
	req := pipeline.DispatchRequest{Role: d.Role, Phase: d.Phase, Task: d.Task, Template: d.Template,
		Prompt: d.Prompt, ToolUseID: e.ToolUseID, Background: e.Background || e.Launched}
	if req.Phase == 0 {
		req.Phase = st.Phase
	}
	if r.Parent > 0 && r.Parent <= st.Dispatch.Last {
		parent := r.Parent
		req.ParentSeq = &parent
	} else if r.Parent > 0 {
		o.Warnings = append(o.Warnings, fmt.Sprintf("pipeline %s has no dispatch %d (CRUCIBLE_SEQ): the call is recorded without a parent", id, r.Parent))
	}
	switch {
	case e.Event == interop.HookPreToolUse:
		o.Action = Started
		o.Seq, err = r.Svc.StartDispatch(ctx, id, req)
		return o, err
	case e.Launched:
		// Its agent runs on: start it now, and wait for its end.
		req.Reconstructed = true
		if o.Seq, err = r.Svc.StartDispatch(ctx, id, req); err != nil {
			return nil, err
		}
		o.Warnings = append(o.Warnings, fmt.Sprintf("no PreToolUse was recorded for tool use %s: dispatch %d started from its PostToolUse, its agent running in the background",
			e.ToolUseID, o.Seq))
		return r.launched(ctx, o, e, o.Seq)
	}
	o.Action, o.Reconstructed = Reconstructed, true
	if o.Finish, err = r.Svc.ReconstructDispatch(ctx, id, req, interop.FinishOf(e)); err != nil {
		return nil, err
	}
	o.Seq = o.Finish.Seq
	o.Warnings = append(o.Warnings, fmt.Sprintf("no PreToolUse was recorded for tool use %s: dispatch %d reconstructed from its %s, with no duration",
		e.ToolUseID, o.Seq, e.Event))
	return o, nil
}

// launched keeps the background agent of dispatch seq, launched by e, for
// the SubagentStop that ends it; or ends it now with the one that came
// first.
func (r *Recorder) launched(ctx context.Context, o *Outcome, e interop.HookEvent, seq int) (*Outcome, error) {
	o.Action, o.Seq, o.AgentID = Launched, seq, e.AgentID
	a := r.agents()
	key := agentKey(e.AgentID)
	if key == "" {
		// No id to match a SubagentStop with: only the session's end settles it.
		key = "tool-" + e.ToolUseID
		if pipeline.CheckName("key", key) != nil {
			o.Warnings = append(o.Warnings, fmt.Sprintf("tool use %s launched an agent with no id Claude Code reports the end of: dispatch %d stays in flight", e.ToolUseID, seq))
			return o, nil
		}
		o.Warnings = append(o.Warnings, fmt.Sprintf("tool use %s launched an agent with no id: dispatch %d stays in flight until the session ends", e.ToolUseID, seq))
	}
	unlock, err := a.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := a.get(key)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Stop != nil && rec.Pipeline == "" {
		// It stopped already: end it as its SubagentStop said.
		o.Action = Finished
		if o.Finish, err = r.finishKept(ctx, o.Pipeline, seq, e.ToolUseID, interop.FinishOf(rec.Stop.event(e.SessionID))); err != nil {
			return nil, err
		}
		return o, a.remove(key)
	}
	return o, a.put(key, &agentRecord{AgentID: e.AgentID, SessionID: e.SessionID, Pipeline: o.Pipeline, Seq: seq, ToolUseID: e.ToolUseID})
}

// subagentStop ends the dispatch of a background agent kept.
func (r *Recorder) subagentStop(ctx context.Context, e interop.HookEvent) (*Outcome, error) {
	o := &Outcome{Event: e.Event, Action: Ignored, AgentID: e.AgentID}
	key := agentKey(e.AgentID)
	listed := slices.Contains(e.BackgroundTasks, e.AgentID)
	a := r.agents()
	if key == "" || !listed && !a.exists() {
		return o, nil // a foreground agent: its PostToolUse ends it
	}
	unlock, err := a.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := a.get(key)
	switch {
	case err != nil:
		return nil, err
	case rec != nil && rec.Pipeline != "":
		o.Action, o.Pipeline, o.Seq = Finished, rec.Pipeline, rec.Seq
		if o.Finish, err = r.finishKept(ctx, rec.Pipeline, rec.Seq, rec.ToolUseID, interop.FinishOf(e)); err != nil {
			return nil, err
		}
		if o.Finish == nil {
			o.Action = Ignored
			o.Warnings = append(o.Warnings, fmt.Sprintf("dispatch %d of pipeline %s, agent %s's, was already finished", rec.Seq, rec.Pipeline, e.AgentID))
		}
		return o, a.remove(key)
	case listed:
		// Its launch is being recorded at this moment: leave its end to it.
		o.Action = Noted
		return o, a.put(key, &agentRecord{AgentID: e.AgentID, SessionID: e.SessionID,
			Stop: &stopRecord{AgentType: e.AgentType, Message: e.Response}})
	}
	return o, nil
}

// settle ends, detached, the dispatches of the session's background agents
// that a Stop no longer lists, or all of them at a SessionEnd.
func (r *Recorder) settle(ctx context.Context, e interop.HookEvent) (*Outcome, error) {
	o := &Outcome{Event: e.Event, Action: Ignored}
	a := r.agents()
	if e.Event == interop.HookStop && !e.Listed || !a.exists() {
		return o, nil // an older client lists no background tasks: wait for the session's end
	}
	unlock, err := a.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, err := a.all()
	if err != nil {
		return nil, err
	}
	for _, k := range recs {
		rec := k.rec
		gone := e.Event == interop.HookSessionEnd || rec.AgentID != "" && !slices.Contains(e.BackgroundTasks, rec.AgentID)
		if rec.SessionID != e.SessionID || !gone {
			continue
		}
		if rec.Pipeline != "" {
			summary := "detached: Claude Code stopped this background agent, and no SubagentStop said it finished"
			if e.Event == interop.HookSessionEnd {
				summary = "detached: the session ended before this background agent's end was reported"
				if e.Reason != "" {
					summary = fmt.Sprintf("detached: the session ended (%s) before this background agent's end was reported", e.Reason)
				}
			}
			f, err := r.finishKept(ctx, rec.Pipeline, rec.Seq, rec.ToolUseID, pipeline.FinishRequest{
				Status: "error", Failure: interop.FailureDetached, Summary: interop.Summary(summary)})
			if err != nil {
				return nil, err
			}
			if f != nil {
				o.Settled = append(o.Settled, SettledDispatch{Pipeline: rec.Pipeline, Seq: rec.Seq, AgentID: rec.AgentID, Finish: f})
			}
		}
		if err := a.remove(k.key); err != nil {
			return nil, err
		}
	}
	if len(o.Settled) > 0 {
		o.Action = Settled
	}
	return o, nil
}

// finishKept finishes dispatch seq of pipeline id, a kept agent's, if it
// is still in flight for tool use toolUseID; nil when it is not (another
// hook, or a person, finished it).
func (r *Recorder) finishKept(ctx context.Context, id string, seq int, toolUseID string, f pipeline.FinishRequest) (*pipeline.DispatchFinish, error) {
	st, _, err := r.Svc.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if fl, ok := st.Dispatch.InFlight[strconv.Itoa(seq)]; !ok || fl.ToolUseID != toolUseID {
		return nil, nil
	}
	return r.Svc.FinishDispatch(ctx, id, seq, f)
}
