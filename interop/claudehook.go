package interop

// Codec for Claude Code hook payloads about the Agent tool.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// AgentCall is a Claude Code PreToolUse or PostToolUse hook payload (read on
// the hook's stdin) for the Agent tool, which dispatches a subagent.
type AgentCall struct {
	Event        string // "PreToolUse" or "PostToolUse"
	SessionID    string
	ToolUseID    string
	Description  string
	Prompt       string
	SubagentType string
	Cwd          string
	Response     string // PostToolUse only: the agent's final text from tool_response; "" if none
	IsError      bool   // PostToolUse only: tool_response.is_error is true
}

// ErrNotAgentCall is returned by ParseHookPayload for valid JSON that is not
// a PreToolUse or PostToolUse payload for the Agent tool.
var ErrNotAgentCall = errors.New("not an Agent tool call")

// HookPayloadError is a hook payload that is not valid JSON (Err is then the
// *json.SyntaxError) or an Agent call that lacks what ParseHookPayload needs.
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
	HookPreToolUse  = "PreToolUse"
	HookPostToolUse = "PostToolUse"
	toolAgent       = "Agent"
	toolTask        = "Task" // the Agent tool's older name
)

// ParseHookPayload reads a hook payload. Keys are matched exactly.
//
// Invalid JSON gives a *HookPayloadError wrapping the *json.SyntaxError.
// Valid JSON that is not an object, or whose hook_event_name is not
// PreToolUse or PostToolUse, or whose tool_name is not "Agent" (or "Task",
// the tool's older name), gives ErrNotAgentCall. An Agent call without a
// non-empty tool_use_id string or without a tool_input object holding a
// prompt string, or whose session_id, cwd, description or subagent_type is
// not a string (null reads as ""), gives a *HookPayloadError.
//
// For PostToolUse, Response is taken from tool_response: a string as it is; an
// object's "content" (an array of parts whose {"type":"text","text":...}
// parts are joined with "\n", used when it holds text; or a string), else
// its "result" string, else its "output" string; an array of parts as for
// "content"; "" otherwise.
// IsError is true when tool_response is an object whose is_error is true.
func ParseHookPayload(data []byte) (AgentCall, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return AgentCall{}, &HookPayloadError{Msg: "invalid JSON", Err: err}
		}
		return AgentCall{}, ErrNotAgentCall // valid JSON, not an object
	}
	event, _ := hookString(obj["hook_event_name"])
	tool, _ := hookString(obj["tool_name"])
	if event != HookPreToolUse && event != HookPostToolUse || tool != toolAgent && tool != toolTask {
		return AgentCall{}, ErrNotAgentCall
	}
	c := AgentCall{Event: event}
	fail := func(format string, args ...any) (AgentCall, error) {
		return AgentCall{}, &HookPayloadError{Msg: fmt.Sprintf(format, args...)}
	}

	var input map[string]json.RawMessage
	if raw := obj["tool_input"]; raw == nil || json.Unmarshal(raw, &input) != nil || input == nil {
		return fail("missing tool_input object")
	}
	prompt, ok := hookString(input["prompt"])
	if !ok || manifestNull(input["prompt"]) {
		return fail("missing tool_input.prompt string")
	}
	c.Prompt = prompt
	id, ok := hookString(obj["tool_use_id"])
	if !ok || id == "" {
		return fail("missing tool_use_id string")
	}
	c.ToolUseID = id

	strs := []struct {
		obj  map[string]json.RawMessage
		name string // as shown in errors
		key  string
		dst  *string
	}{
		{obj, "session_id", "session_id", &c.SessionID},
		{obj, "cwd", "cwd", &c.Cwd},
		{input, "tool_input.description", "description", &c.Description},
		{input, "tool_input.subagent_type", "subagent_type", &c.SubagentType},
	}
	for _, s := range strs {
		v, ok := hookString(s.obj[s.key])
		if !ok {
			return fail("%s is not a string", s.name)
		}
		*s.dst = v
	}
	if event == HookPostToolUse {
		c.Response, c.IsError = hookResponse(obj["tool_response"])
	}
	return c, nil
}

// hookString: "" for absent or null; false for anything but a string.
func hookString(raw json.RawMessage) (string, bool) {
	v, ok := manifestString(raw)
	if !ok || v == nil {
		return "", ok
	}
	return *v, true
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
	var flag bool
	isError = json.Unmarshal(obj["is_error"], &flag) == nil && flag
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
