package interop

// Codec for the Claude Code hook payloads git-crucible records: the Agent
// tool's calls, and the events that end the agents it sent to run on in the
// background.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HookEvent is a Claude Code hook payload (read on the hook's stdin) that
// git-crucible records: the PreToolUse, PostToolUse or PostToolUseFailure of
// an Agent tool call, which dispatches a subagent; the SubagentStop of a
// subagent; the Stop of a turn; the SessionEnd of a session.
type HookEvent struct {
	Event     string // HookPreToolUse, ...
	SessionID string
	Cwd       string

	// The Agent tool call: PreToolUse, PostToolUse and PostToolUseFailure.
	ToolUseID    string
	Description  string
	Prompt       string
	SubagentType string
	Background   bool // tool_input.run_in_background is true

	// What the call returned: PostToolUse.
	Response string // the agent's final text from tool_response; "" if none
	IsError  bool   // tool_response.is_error is true
	// Status is tool_response.status: "completed", or "async_launched"
	// when the agent was sent to run on in the background.
	Status string
	// Launched says the call returned while its agent runs on: a status
	// of async_launched, remote_launched or teammate_spawned, or isAsync.
	Launched   bool
	AgentID    string // tool_response.agentId (else its taskId); SubagentStop: agent_id
	AgentType  string // tool_response.agentType; SubagentStop: agent_type
	Model      string // tool_response.resolvedModel
	ToolUses   *int   // tool_response.totalToolUseCount
	DurationMS *int64 // tool_response.totalDurationMs
	Tokens     *Tokens

	// Why the call failed: PostToolUseFailure.
	Error       string // error
	Interrupted bool   // is_interrupt is true

	// SubagentStop: Response is its last_assistant_message. SubagentStop
	// and Stop: the ids of the background tasks Claude Code lists as still
	// its own (background_tasks, whatever their status), when it lists them
	// (Listed).
	BackgroundTasks []string
	Listed          bool

	Reason string // SessionEnd: why the session ended
}

// Tokens is tool_response.usage: what the subagent's model calls took.
type Tokens struct {
	Input, Output, CacheRead, CacheCreation int64
}

// ErrNotAgentCall is returned by ParseHookPayload for valid JSON that is
// not a payload git-crucible records: another tool's call, another event.
var ErrNotAgentCall = errors.New("not an Agent tool call")

// HookPayloadError is a hook payload that is not valid JSON (Err is then the
// *json.SyntaxError) or an event that lacks what ParseHookPayload needs.
type HookPayloadError struct {
	Msg string
	Err error // the JSON error, or nil
}

func (e *HookPayloadError) Error() string {
	if e.Err != nil {
		return "hook payload: " + e.Msg + ": " + e.Err.Error()
	}
	return "hook payload: " + e.Msg
}

func (e *HookPayloadError) Unwrap() error { return e.Err }

// Hook event and tool names.
const (
	HookPreToolUse         = "PreToolUse"
	HookPostToolUse        = "PostToolUse"
	HookPostToolUseFailure = "PostToolUseFailure"
	HookSubagentStop       = "SubagentStop"
	HookStop               = "Stop"
	HookSessionEnd         = "SessionEnd"
	toolAgent              = "Agent"
	toolTask               = "Task" // the Agent tool's older name
)

// IsToolCall reports whether e is about an Agent tool call.
func (e HookEvent) IsToolCall() bool {
	return e.Event == HookPreToolUse || e.Event == HookPostToolUse || e.Event == HookPostToolUseFailure
}

// ParseHookPayload reads a hook payload. Keys are matched exactly.
//
// Invalid JSON gives a *HookPayloadError wrapping the *json.SyntaxError.
// Valid JSON that is not an object, or whose hook_event_name is none of
// PreToolUse, PostToolUse, PostToolUseFailure, SubagentStop, Stop and
// SessionEnd, or a tool event whose tool_name is not "Agent" (or "Task",
// the tool's older name), gives ErrNotAgentCall.
//
// A tool event without a non-empty tool_use_id string or without a
// tool_input object holding a prompt string, or whose description or
// subagent_type is not a string (null reads as ""), gives a
// *HookPayloadError; so do a SubagentStop without a non-empty agent_id
// string, a SubagentStop, Stop or SessionEnd without a non-empty session_id
// string, and a session_id, cwd, error, agent_type, last_assistant_message
// or reason that is not a string.
//
// For PostToolUse, Response is taken from tool_response: a string as it is; an
// object's "content" (an array of parts whose {"type":"text","text":...}
// parts are joined with "\n", used when it holds text; or a string), else
// its "result" string, else its "output" string; an array of parts as for
// "content"; "" otherwise. IsError is true when tool_response is an object
// whose is_error is true. The other fields of tool_response are taken when
// they are of the type Claude Code gives them, and left out otherwise:
// strings, counts that are integers from 0, and a usage object only when
// its input_tokens and output_tokens are such counts (cache tokens are 0
// when they are not).
func ParseHookPayload(data []byte) (HookEvent, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return HookEvent{}, &HookPayloadError{Msg: "invalid JSON", Err: err}
		}
		return HookEvent{}, ErrNotAgentCall // valid JSON, not an object
	}
	event, _ := hookString(obj["hook_event_name"])
	e := HookEvent{Event: event}
	fail := func(format string, args ...any) (HookEvent, error) {
		return HookEvent{}, &HookPayloadError{Msg: fmt.Sprintf(format, args...)}
	}
	switch event {
	case HookPreToolUse, HookPostToolUse, HookPostToolUseFailure:
		if tool, _ := hookString(obj["tool_name"]); tool != toolAgent && tool != toolTask {
			return HookEvent{}, ErrNotAgentCall
		}
	case HookSubagentStop, HookStop, HookSessionEnd:
		if id, ok := hookString(obj["session_id"]); !ok || id == "" {
			return fail("missing session_id string")
		}
	default:
		return HookEvent{}, ErrNotAgentCall
	}

	type field struct {
		key string // as shown in errors
		raw json.RawMessage
		dst *string
	}
	strs := []field{{"session_id", obj["session_id"], &e.SessionID}, {"cwd", obj["cwd"], &e.Cwd}}
	switch event {
	case HookPostToolUseFailure:
		strs = append(strs, field{"error", obj["error"], &e.Error})
	case HookSubagentStop:
		strs = append(strs, field{"agent_type", obj["agent_type"], &e.AgentType},
			field{"last_assistant_message", obj["last_assistant_message"], &e.Response})
	case HookSessionEnd:
		strs = append(strs, field{"reason", obj["reason"], &e.Reason})
	}

	if e.IsToolCall() {
		var input map[string]json.RawMessage
		if raw := obj["tool_input"]; raw == nil || json.Unmarshal(raw, &input) != nil || input == nil {
			return fail("missing tool_input object")
		}
		prompt, ok := hookString(input["prompt"])
		if !ok || manifestNull(input["prompt"]) {
			return fail("missing tool_input.prompt string")
		}
		e.Prompt = prompt
		id, ok := hookString(obj["tool_use_id"])
		if !ok || id == "" {
			return fail("missing tool_use_id string")
		}
		e.ToolUseID = id
		e.Background = hookBool(input["run_in_background"])
		strs = append(strs, field{"tool_input.description", input["description"], &e.Description},
			field{"tool_input.subagent_type", input["subagent_type"], &e.SubagentType})
	}
	if event == HookSubagentStop {
		if id, ok := hookString(obj["agent_id"]); !ok || id == "" {
			return fail("missing agent_id string")
		}
	}
	for _, s := range strs {
		v, ok := hookString(s.raw)
		if !ok {
			return fail("%s is not a string", s.key)
		}
		*s.dst = v
	}

	switch event {
	case HookPostToolUse:
		e.Response, e.IsError = hookResponse(obj["tool_response"])
		e.hookResponseFields(obj["tool_response"])
	case HookPostToolUseFailure:
		e.Interrupted = hookBool(obj["is_interrupt"])
	case HookSubagentStop:
		e.AgentID, _ = hookString(obj["agent_id"])
		fallthrough
	case HookStop:
		e.BackgroundTasks, e.Listed = hookTasks(obj["background_tasks"])
	}
	return e, nil
}

// hookString: "" for absent or null; false for anything but a string.
func hookString(raw json.RawMessage) (string, bool) {
	v, ok := manifestString(raw)
	if !ok || v == nil {
		return "", ok
	}
	return *v, true
}

// hookBool: true only for JSON true.
func hookBool(raw json.RawMessage) bool {
	var b bool
	return json.Unmarshal(raw, &b) == nil && b
}

// hookCount is a JSON integer from 0 up; false for anything else.
func hookCount(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	if s == "" || strings.Trim(s, "0123456789") != "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// hookTasks is the ids of the tasks a background_tasks array lists, and
// whether it is an array; entries with no id string are skipped.
func hookTasks(raw json.RawMessage) ([]string, bool) {
	var tasks []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &tasks) != nil {
		return nil, false
	}
	ids := []string{}
	for _, t := range tasks {
		var task map[string]json.RawMessage
		if json.Unmarshal(t, &task) != nil {
			continue
		}
		if id, ok := hookString(task["id"]); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return ids, true
}

// hookResponseFields takes what a PostToolUse's tool_response says besides
// the agent's text: status, agent, model, counts and tokens.
func (e *HookEvent) hookResponseFields(raw json.RawMessage) {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return
	}
	str := func(key string) string {
		v, _ := hookString(obj[key])
		return v
	}
	e.Status, e.AgentType, e.Model = str("status"), str("agentType"), str("resolvedModel")
	if e.AgentID = str("agentId"); e.AgentID == "" {
		e.AgentID = str("taskId")
	}
	switch e.Status {
	case "async_launched", "remote_launched", "teammate_spawned":
		e.Launched = true
	}
	e.Launched = e.Launched || hookBool(obj["isAsync"])
	if n, ok := hookCount(obj["totalToolUseCount"]); ok && n <= 1<<31-1 {
		uses := int(n)
		e.ToolUses = &uses
	}
	if n, ok := hookCount(obj["totalDurationMs"]); ok {
		e.DurationMS = &n
	}
	var usage map[string]json.RawMessage
	if u := obj["usage"]; len(u) == 0 || u[0] != '{' || json.Unmarshal(u, &usage) != nil {
		return
	}
	in, ok1 := hookCount(usage["input_tokens"])
	out, ok2 := hookCount(usage["output_tokens"])
	if !ok1 || !ok2 {
		return
	}
	read, _ := hookCount(usage["cache_read_input_tokens"])
	created, _ := hookCount(usage["cache_creation_input_tokens"])
	e.Tokens = &Tokens{Input: in, Output: out, CacheRead: read, CacheCreation: created}
}

func hookResponse(raw json.RawMessage) (text string, isError bool) {
	if s, ok := manifestString(raw); ok {
		if s == nil {
			return "", false
		}
		return *s, false
	}
	if t, ok := hookParts(raw); ok {
		return t, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	isError = hookBool(obj["is_error"])
	if c := obj["content"]; !manifestNull(c) {
		if s, ok := hookString(c); ok {
			return s, isError
		}
		if t, ok := hookParts(c); ok && t != "" {
			return t, isError
		}
	}
	for _, k := range []string{"result", "output"} {
		if s, ok := manifestString(obj[k]); ok && s != nil {
			return *s, isError
		}
	}
	return "", isError
}

// hookParts joins the text of an array of content parts; false when raw is
// not an array.
func hookParts(raw json.RawMessage) (string, bool) {
	var parts []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		var part map[string]json.RawMessage
		if json.Unmarshal(p, &part) != nil {
			continue
		}
		typ, _ := hookString(part["type"])
		text, ok := hookString(part["text"])
		if typ == "text" && ok && !manifestNull(part["text"]) {
			texts = append(texts, text)
		}
	}
	return strings.Join(texts, "\n"), true
}
