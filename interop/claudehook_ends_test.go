package interop

import (
	"reflect"
	"testing"
)

// TestParseHookPayloadResponseFields: what a PostToolUse's tool_response
// says besides the agent's text is taken when it has Claude Code's type,
// and left out otherwise.
func TestParseHookPayloadResponseFields(t *testing.T) {
	n := func(v int) *int { return &v }
	ms := func(v int64) *int64 { return &v }
	tests := []struct {
		name     string
		response string
		want     HookEvent // the fields tool_response gives
	}{
		{"all of it", `{"status":"completed","agentId":"a1","agentType":"Explore","resolvedModel":"m","totalToolUseCount":3,` +
			`"totalDurationMs":1200,"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":5,"cache_creation_input_tokens":1}}`,
			HookEvent{Status: "completed", AgentID: "a1", AgentType: "Explore", Model: "m", ToolUses: n(3), DurationMS: ms(1200),
				Tokens: &Tokens{Input: 10, Output: 2, CacheRead: 5, CacheCreation: 1}}},
		{"async launched", `{"isAsync":true,"status":"async_launched","agentId":"a2"}`,
			HookEvent{Status: "async_launched", Launched: true, AgentID: "a2"}},
		{"remote launched, a task id", `{"status":"remote_launched","taskId":"t1"}`,
			HookEvent{Status: "remote_launched", Launched: true, AgentID: "t1"}},
		{"teammate spawned", `{"status":"teammate_spawned"}`, HookEvent{Status: "teammate_spawned", Launched: true}},
		{"isAsync alone", `{"isAsync":true}`, HookEvent{Launched: true}},
		{"isAsync not a boolean", `{"isAsync":"true","status":"running"}`, HookEvent{Status: "running"}},
		{"agentId over taskId", `{"agentId":"a","taskId":"t"}`, HookEvent{AgentID: "a"}},
		{"counts of other types left out", `{"totalToolUseCount":-1,"totalDurationMs":1.5}`, HookEvent{}},
		{"counts as strings left out", `{"totalToolUseCount":"3","totalDurationMs":null}`, HookEvent{}},
		{"a count too large for an int", `{"totalToolUseCount":99999999999,"totalDurationMs":99999999999}`, HookEvent{DurationMS: ms(99999999999)}},
		{"a count in exponent form", `{"totalToolUseCount":1e2}`, HookEvent{}},
		{"usage without output tokens", `{"usage":{"input_tokens":10}}`, HookEvent{}},
		{"usage with odd cache tokens", `{"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":-4,"cache_creation_input_tokens":"x"}}`,
			HookEvent{Tokens: &Tokens{}}},
		{"usage not an object", `{"usage":[1,2]}`, HookEvent{}},
		{"strings of other types left out", `{"status":1,"agentId":{},"agentType":[],"resolvedModel":false}`, HookEvent{}},
		{"not an object", `"text"`, HookEvent{Response: "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookPayload([]byte(hookPost + tt.response + "}"))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Event, want.SessionID, want.ToolUseID, want.Description, want.Prompt, want.SubagentType, want.Cwd =
				"PostToolUse", "s1", "toolu_1", "Review", "Review the diff", "code-reviewer", "/w"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseHookPayload:\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

// TestParseHookPayloadEnds: the events that end a call or an agent.
func TestParseHookPayloadEnds(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want HookEvent
	}{
		{"failure", `{"hook_event_name":"PostToolUseFailure","tool_name":"Task","tool_use_id":"u","tool_input":{"prompt":"p","run_in_background":true},` +
			`"error":"boom","is_interrupt":false,"tool_response":{"status":"completed"}}`,
			HookEvent{Event: "PostToolUseFailure", ToolUseID: "u", Prompt: "p", Background: true, Error: "boom"}},
		{"interrupted", `{"hook_event_name":"PostToolUseFailure","tool_name":"Agent","tool_use_id":"u","tool_input":{"prompt":"p"},"is_interrupt":true}`,
			HookEvent{Event: "PostToolUseFailure", ToolUseID: "u", Prompt: "p", Interrupted: true}},
		{"run_in_background not a boolean", `{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_use_id":"u","tool_input":{"prompt":"p","run_in_background":"yes"}}`,
			HookEvent{Event: "PreToolUse", ToolUseID: "u", Prompt: "p"}},
		{"SubagentStop with odd tasks", `{"hook_event_name":"SubagentStop","session_id":"s","agent_id":"a","agent_type":null,` +
			`"background_tasks":[{"id":"a"},{"id":""},{"id":3},"b",null,{"status":"running"},{"id":"c"}]}`,
			HookEvent{Event: "SubagentStop", SessionID: "s", AgentID: "a", BackgroundTasks: []string{"a", "c"}, Listed: true}},
		{"Stop listing nothing", `{"hook_event_name":"Stop","session_id":"s","background_tasks":[]}`,
			HookEvent{Event: "Stop", SessionID: "s", BackgroundTasks: []string{}, Listed: true}},
		{"Stop of an older client", `{"hook_event_name":"Stop","session_id":"s","stop_hook_active":false}`,
			HookEvent{Event: "Stop", SessionID: "s"}},
		{"Stop, tasks not an array", `{"hook_event_name":"Stop","session_id":"s","background_tasks":{"id":"a"}}`,
			HookEvent{Event: "Stop", SessionID: "s"}},
		{"SessionEnd", `{"hook_event_name":"SessionEnd","session_id":"s","cwd":"/w","reason":"prompt_input_exit"}`,
			HookEvent{Event: "SessionEnd", SessionID: "s", Cwd: "/w", Reason: "prompt_input_exit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookPayload([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseHookPayload:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}
