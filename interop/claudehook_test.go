package interop

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

const (
	hookFixturePrimary   = "hooks-tests-fixtures__agent-pretooluse-sample.json"
	hookFixtureSecondary = "hooks-tests-fixtures__agent-pretooluse-build-internal-sample.json"

	hookPost = `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default",` +
		`"hook_event_name":"PostToolUse","tool_name":"Agent",` +
		`"tool_input":{"description":"Review","prompt":"Review the diff","subagent_type":"code-reviewer"},` +
		`"tool_use_id":"toolu_1","tool_response":`
)

func TestParseHookPayloadFixtures(t *testing.T) {
	tests := []struct {
		file string
		want HookEvent
	}{
		{hookFixturePrimary, HookEvent{
			Event:        "PreToolUse",
			SessionID:    "fixture-session-0000-0000-0000-000000000000",
			ToolUseID:    "toolu_fixture_primary",
			Description:  "Echo hello",
			Prompt:       "echo hello to stdout",
			SubagentType: "general-purpose",
			Cwd:          "/home/user/crucible",
		}},
		{hookFixtureSecondary, HookEvent{
			Event:        "PreToolUse",
			SessionID:    "fixture-session-0000-0000-0000-000000000000",
			ToolUseID:    "toolu_fixture_secondary",
			Description:  "List /tmp files",
			Prompt:       "List files in /tmp, one command only",
			SubagentType: "Explore",
			Cwd:          "/home/user/crucible",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseHookPayload(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("ParseHookPayload: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseHookPayload:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseHookPayloadPostToolUse(t *testing.T) {
	base := HookEvent{Event: "PostToolUse", SessionID: "s1", ToolUseID: "toolu_1", Description: "Review",
		Prompt: "Review the diff", SubagentType: "code-reviewer", Cwd: "/w"}
	tests := []struct {
		name     string
		response string // the tool_response value; "" leaves it out
		text     string
		isError  bool
	}{
		{"string", `"All good.\nNo findings."`, "All good.\nNo findings.", false},
		{"content array", `{"content":[{"type":"text","text":"part 1"},{"type":"image","source":{}},{"type":"text","text":"part 2"}],` +
			`"totalTokens":5000}`, "part 1\npart 2", false},
		{"content array with is_error", `{"content":[{"type":"text","text":"Agent failed: timeout"}],"is_error":true}`, "Agent failed: timeout", true},
		{"is_error false", `{"content":[{"type":"text","text":"ok"}],"is_error":false}`, "ok", false},
		{"is_error not a boolean", `{"content":"x","is_error":"true"}`, "x", false},
		{"content string", `{"content":"plain"}`, "plain", false},
		{"result field", `{"result":"the result","output":"not this"}`, "the result", false},
		{"output field", `{"output":"the output"}`, "the output", false},
		{"content null falls back to result", `{"content":null,"result":"r"}`, "r", false},
		{"content without text falls back to output", `{"content":[{"type":"image"}],"output":"o"}`, "o", false},
		{"content parts of odd shapes skipped", `{"content":[1,"s",null,{"type":"text"},{"type":"text","text":7},{"type":"text","text":"t"}]}`, "t", false},
		{"array of parts", `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb", false},
		{"empty content array", `{"content":[]}`, "", false},
		{"empty object", `{}`, "", false},
		{"error only", `{"is_error":true}`, "", true},
		{"null", `null`, "", false},
		{"number", `42`, "", false},
		{"result not a string", `{"result":{"x":1}}`, "", false},
		{"absent", ``, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := hookPost + tt.response + "}"
			if tt.response == "" {
				in = hookPost[:len(hookPost)-len(`,"tool_response":`)] + "}"
			}
			got, err := ParseHookPayload([]byte(in))
			if err != nil {
				t.Fatalf("ParseHookPayload: %v", err)
			}
			want := base
			want.Response, want.IsError = tt.text, tt.isError
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseHookPayload:\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestParseHookPayloadVariants(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want HookEvent
	}{
		{
			name: "Task, the older tool name",
			in:   `{"hook_event_name":"PreToolUse","tool_name":"Task","tool_use_id":"u","tool_input":{"prompt":"p"}}`,
			want: HookEvent{Event: "PreToolUse", ToolUseID: "u", Prompt: "p"},
		},
		{
			name: "PreToolUse ignores a tool_response",
			in:   `{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_use_id":"u","tool_input":{"prompt":"p"},"tool_response":"x"}`,
			want: HookEvent{Event: "PreToolUse", ToolUseID: "u", Prompt: "p"},
		},
		{
			name: "nulls read as empty, unknown keys ignored, empty prompt",
			in: `{"hook_event_name":"PostToolUse","tool_name":"Agent","tool_use_id":"u","session_id":null,"cwd":null,` +
				`"tool_input":{"prompt":"","description":null,"subagent_type":null,"model":"opus"},"extra":[1]}`,
			want: HookEvent{Event: "PostToolUse", ToolUseID: "u"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookPayload([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseHookPayload: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseHookPayload:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseHookPayloadNotAgentCall(t *testing.T) {
	for name, in := range map[string]string{
		"Bash tool":          `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"u"}`,
		"Read tool, post":    `{"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/x"},"tool_response":{}}`,
		"tool name case":     `{"hook_event_name":"PreToolUse","tool_name":"agent","tool_input":{"prompt":"p"},"tool_use_id":"u"}`,
		"SubagentStart":      `{"hook_event_name":"SubagentStart","session_id":"s","agent_id":"a1","agent_type":"Explore"}`,
		"SessionStart":       `{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`,
		"Bash failure":       `{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"u","error":"e"}`,
		"event case":         `{"hook_event_name":"stop","session_id":"s"}`,
		"UserPromptSubmit":   `{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
		"no event":           `{"tool_name":"Agent","tool_input":{"prompt":"p"},"tool_use_id":"u"}`,
		"event not a string": `{"hook_event_name":1,"tool_name":"Agent","tool_input":{"prompt":"p"},"tool_use_id":"u"}`,
		"key case":           `{"Hook_Event_Name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"p"},"tool_use_id":"u"}`,
		"array":              `[{"hook_event_name":"PreToolUse","tool_name":"Agent"}]`,
		"string":             `"PreToolUse"`,
		"null":               `null`,
		"empty object":       `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := ParseHookPayload([]byte(in))
			if !errors.Is(err, ErrNotAgentCall) {
				t.Errorf("ParseHookPayload = %#v, %v, want ErrNotAgentCall", c, err)
			}
			if !reflect.DeepEqual(c, HookEvent{}) {
				t.Errorf("call on error = %#v", c)
			}
		})
	}
}

func TestParseHookPayloadErrors(t *testing.T) {
	const head = `{"hook_event_name":"PreToolUse","tool_name":"Agent",`
	tests := []struct {
		name   string
		in     string
		msg    string
		syntax bool
	}{
		{"empty input", ``, "hook payload: invalid JSON: unexpected end of JSON input", true},
		{"truncated", head, "hook payload: invalid JSON: unexpected end of JSON input", true},
		{"not JSON", `hook_event_name=PreToolUse`, "hook payload: invalid JSON: invalid character 'h' looking for beginning of value", true},
		{"trailing data", `{} {}`, "hook payload: invalid JSON: invalid character '{' after top-level value", true},
		{"missing tool_input", head + `"tool_use_id":"u"}`, "hook payload: missing tool_input object", false},
		{"tool_input null", head + `"tool_use_id":"u","tool_input":null}`, "hook payload: missing tool_input object", false},
		{"tool_input string", head + `"tool_use_id":"u","tool_input":"p"}`, "hook payload: missing tool_input object", false},
		{"missing prompt", head + `"tool_use_id":"u","tool_input":{"description":"d"}}`, "hook payload: missing tool_input.prompt string", false},
		{"null prompt", head + `"tool_use_id":"u","tool_input":{"prompt":null}}`, "hook payload: missing tool_input.prompt string", false},
		{"prompt array", head + `"tool_use_id":"u","tool_input":{"prompt":["p"]}}`, "hook payload: missing tool_input.prompt string", false},
		{"missing tool_use_id", head + `"tool_input":{"prompt":"p"}}`, "hook payload: missing tool_use_id string", false},
		{"empty tool_use_id", head + `"tool_use_id":"","tool_input":{"prompt":"p"}}`, "hook payload: missing tool_use_id string", false},
		{"numeric tool_use_id", head + `"tool_use_id":5,"tool_input":{"prompt":"p"}}`, "hook payload: missing tool_use_id string", false},
		{"numeric session_id", head + `"tool_use_id":"u","session_id":1,"tool_input":{"prompt":"p"}}`, "hook payload: session_id is not a string", false},
		{"cwd object", head + `"tool_use_id":"u","cwd":{},"tool_input":{"prompt":"p"}}`, "hook payload: cwd is not a string", false},
		{"description bool", head + `"tool_use_id":"u","tool_input":{"prompt":"p","description":true}}`, "hook payload: tool_input.description is not a string", false},
		{"subagent_type number", head + `"tool_use_id":"u","tool_input":{"prompt":"p","subagent_type":2}}`, "hook payload: tool_input.subagent_type is not a string", false},
		{"failure: error not a string", `{"hook_event_name":"PostToolUseFailure","tool_name":"Agent","tool_use_id":"u","tool_input":{"prompt":"p"},"error":{}}`,
			"hook payload: error is not a string", false},
		{"Stop without a session", `{"hook_event_name":"Stop","background_tasks":[]}`, "hook payload: missing session_id string", false},
		{"SessionEnd, empty session", `{"hook_event_name":"SessionEnd","session_id":""}`, "hook payload: missing session_id string", false},
		{"SubagentStop, session a number", `{"hook_event_name":"SubagentStop","session_id":7,"agent_id":"a"}`, "hook payload: missing session_id string", false},
		{"SubagentStop without an agent", `{"hook_event_name":"SubagentStop","session_id":"s"}`, "hook payload: missing agent_id string", false},
		{"SubagentStop, agent a number", `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":1}`, "hook payload: missing agent_id string", false},
		{"SubagentStop, type not a string", `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a","agent_type":[]}`,
			"hook payload: agent_type is not a string", false},
		{"SubagentStop, message not a string", `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a","last_assistant_message":1}`,
			"hook payload: last_assistant_message is not a string", false},
		{"SessionEnd, reason not a string", `{"hook_event_name":"SessionEnd","session_id":"s","reason":true}`,
			"hook payload: reason is not a string", false},
		{"Stop, cwd not a string", `{"hook_event_name":"Stop","session_id":"s","cwd":1}`, "hook payload: cwd is not a string", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseHookPayload([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseHookPayload succeeded: %#v", c)
			}
			if errors.Is(err, ErrNotAgentCall) {
				t.Fatalf("error %v is ErrNotAgentCall", err)
			}
			var he *HookPayloadError
			if !errors.As(err, &he) {
				t.Fatalf("error %T, want *HookPayloadError", err)
			}
			var se *json.SyntaxError
			if errors.As(err, &se) != tt.syntax {
				t.Errorf("wraps *json.SyntaxError = %v, want %v", !tt.syntax, tt.syntax)
			}
			if err.Error() != tt.msg {
				t.Errorf("Error() = %q, want %q", err.Error(), tt.msg)
			}
			if !reflect.DeepEqual(c, HookEvent{}) {
				t.Errorf("call on error = %#v", c)
			}
		})
	}
}

// hookPayloadOf builds a payload that ParseHookPayload reads back as c.
func hookPayloadOf(c HookEvent) []byte {
	p := map[string]any{"hook_event_name": c.Event, "session_id": c.SessionID, "cwd": c.Cwd}
	if c.IsToolCall() {
		p["tool_name"], p["tool_use_id"] = "Agent", c.ToolUseID
		input := map[string]any{"prompt": c.Prompt, "description": c.Description, "subagent_type": c.SubagentType}
		if c.Background {
			input["run_in_background"] = true
		}
		p["tool_input"] = input
	}
	tasks := func() {
		if c.Listed {
			var list []map[string]string
			for _, id := range c.BackgroundTasks {
				list = append(list, map[string]string{"id": id, "status": "running"})
			}
			p["background_tasks"] = append([]map[string]string{}, list...)
		}
	}
	switch c.Event {
	case HookPostToolUse:
		r := map[string]any{"content": []map[string]string{{"type": "text", "text": c.Response}}, "is_error": c.IsError,
			"status": c.Status, "agentId": c.AgentID, "agentType": c.AgentType, "resolvedModel": c.Model, "isAsync": c.Launched}
		if c.ToolUses != nil {
			r["totalToolUseCount"] = *c.ToolUses
		}
		if c.DurationMS != nil {
			r["totalDurationMs"] = *c.DurationMS
		}
		if t := c.Tokens; t != nil {
			r["usage"] = map[string]int64{"input_tokens": t.Input, "output_tokens": t.Output,
				"cache_read_input_tokens": t.CacheRead, "cache_creation_input_tokens": t.CacheCreation}
		}
		p["tool_response"] = r
	case HookPostToolUseFailure:
		p["error"], p["is_interrupt"] = c.Error, c.Interrupted
	case HookSubagentStop:
		p["agent_id"], p["agent_type"], p["last_assistant_message"] = c.AgentID, c.AgentType, c.Response
		tasks()
	case HookStop:
		tasks()
	case HookSessionEnd:
		p["reason"] = c.Reason
	}
	out, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return out
}

func FuzzParseHookPayload(f *testing.F) {
	f.Add(readFixture(f, hookFixturePrimary))
	f.Add(readFixture(f, hookFixtureSecondary))
	f.Add([]byte(hookPost + `{"content":[{"type":"text","text":"done"}],"is_error":true}}`))
	for _, name := range []string{"parallel-5-PostToolUse.json", "posttooluse-agent-background-async-launched.json",
		"posttoolusefailure-agent-unknown-type.json", "session-bg-06-SubagentStop.json", "session-bg-07-Stop.json",
		"session-fg-08-SessionEnd.json", "session-fg-killed-06-PostToolUseFailure.json"} {
		f.Add(readHookFixture(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseHookPayload(data)
		if err != nil {
			var he *HookPayloadError
			if !errors.Is(err, ErrNotAgentCall) && !errors.As(err, &he) {
				t.Fatalf("error %T %v, want ErrNotAgentCall or *HookPayloadError", err, err)
			}
			var se *json.SyntaxError
			if errors.As(err, &se) == json.Valid(data) {
				t.Fatalf("syntax error %v for json.Valid = %v", err, json.Valid(data))
			}
			if !reflect.DeepEqual(c, HookEvent{}) {
				t.Fatalf("non-zero call with error %v", err)
			}
			return
		}
		switch c.Event {
		case HookPreToolUse, HookPostToolUse, HookPostToolUseFailure:
			if c.ToolUseID == "" {
				t.Fatalf("a call with no tool use id accepted: %#v", c)
			}
		case HookSubagentStop:
			if c.AgentID == "" || c.SessionID == "" {
				t.Fatalf("a SubagentStop with no agent or session accepted: %#v", c)
			}
		case HookStop, HookSessionEnd:
			if c.SessionID == "" {
				t.Fatalf("a %s with no session accepted: %#v", c.Event, c)
			}
		default:
			t.Fatalf("event %q accepted: %#v", c.Event, c)
		}
		if c.Event != HookPostToolUse && (c.IsError || c.Launched || c.Status != "" || c.Tokens != nil || c.ToolUses != nil) ||
			c.Event == HookPreToolUse && c.Response != "" {
			t.Fatalf("a %s with what only a PostToolUse has: %#v", c.Event, c)
		}
		if c.Listed != (c.BackgroundTasks != nil) || slices.Contains(c.BackgroundTasks, "") {
			t.Fatalf("background tasks %#v, listed %v", c.BackgroundTasks, c.Listed)
		}
		if c.ToolUses != nil && *c.ToolUses < 0 || c.DurationMS != nil && *c.DurationMS < 0 ||
			c.Tokens != nil && (c.Tokens.Input < 0 || c.Tokens.Output < 0 || c.Tokens.CacheRead < 0 || c.Tokens.CacheCreation < 0) {
			t.Fatalf("a negative count: %#v", c)
		}
		c2, err := ParseHookPayload(hookPayloadOf(c))
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("rebuilt payload reads back as %#v, %v\nwant %#v", c2, err, c)
		}
	})
}
