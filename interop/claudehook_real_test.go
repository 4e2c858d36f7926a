package interop

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/pipeline"
)

// claudeHooksDir holds hook payloads real Claude Code sessions sent (its
// README says which version and how).
var claudeHooksDir = filepath.Join("testdata", "claude-hooks")

func readHookFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(claudeHooksDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseHookPayloadReal reads every payload Claude Code 2.1.197 sent:
// what is recorded is read, the rest (SessionStart, UserPromptSubmit,
// SubagentStart, a subagent's Bash call) is not an Agent call.
func TestParseHookPayloadReal(t *testing.T) {
	const (
		h1    = "/home/dev/src/h1"
		proj  = "/tmp/hk/proj"
		model = "claude-opus-4-8[1m]"
		par   = "cc02beb3-ee11-4813-b22b-f93e6b7f19ac"
		bg    = "8679c136-0b93-4d66-bb1a-4ce60fc868ed"
		bgk   = "adeff8f6-3b3f-4761-8702-23d16c7f2400"
		fg    = "6d6c22c4-747d-4797-ab40-797a2753e652"
		fgk   = "90f3b22a-257e-4163-b5ba-9ad79d89febd"
		sleep = `TOOL {"name":"Bash","input":{"command":"sleep 60"}}`
	)
	wrote := func(name string) string {
		return "Wrote " + h1 + "/" + name + " (tool result: File created successfully at: " + h1 + "/" + name +
			" (file state is current in your context — no need to Read it back))"
	}
	count := func(n int) *int { return &n }
	ms := func(n int64) *int64 { return &n }
	tokens := &Tokens{Input: 100, Output: 20}
	call := func(event, session, cwd, id, desc, prompt, typ string) HookEvent {
		return HookEvent{Event: event, SessionID: session, Cwd: cwd, ToolUseID: id, Description: desc, Prompt: prompt, SubagentType: typ}
	}
	// done is a PostToolUse of a call whose agent returned.
	done := func(e HookEvent, agent, text string, uses int, took int64) HookEvent {
		e.Event, e.Status, e.AgentID, e.AgentType, e.Model, e.Response = HookPostToolUse, "completed", agent, "general-purpose", model, text
		e.ToolUses, e.DurationMS, e.Tokens = count(uses), ms(took), tokens
		return e
	}
	// launched is a PostToolUse of a call whose agent runs on in the background.
	launched := func(e HookEvent, agent string) HookEvent {
		e.Event, e.Status, e.Launched, e.AgentID, e.Model = HookPostToolUse, "async_launched", true, agent, model
		return e
	}
	bgcall := func(e HookEvent) HookEvent { e.Background = true; return e }
	stop := func(session string, tasks ...string) HookEvent {
		return HookEvent{Event: HookStop, SessionID: session, Cwd: proj, BackgroundTasks: append([]string{}, tasks...), Listed: true}
	}
	par1 := call(HookPreToolUse, par, h1, "toolu_fake00000181e61ee8", "plan writer 1", "SUBAGENT-TASK 1. WRITE-FILE par-1.txt", "general-purpose")
	par2 := call(HookPreToolUse, par, h1, "toolu_fake00000264ed2929", "plan writer 2", "SUBAGENT-TASK 2. WRITE-FILE par-2.txt", "general-purpose")
	par3 := call(HookPreToolUse, par, h1, "toolu_fake0000031d0455a4", "plan writer 3", "SUBAGENT-TASK 3. WRITE-FILE par-3.txt", "general-purpose")
	par4 := call(HookPreToolUse, par, h1, "toolu_fake0000042cf05703", "plan writer 4", "SUBAGENT-TASK 4. WRITE-FILE par-4.txt", "general-purpose")
	plain := call(HookPreToolUse, "57c2eb28-250e-4453-8e69-d67f444c8da0", h1, "toolu_fake000001c641e562", "plan writer",
		"SUBAGENT-TASK: say hello. WRITE-FILE sub-out.txt", "general-purpose")
	pointer := call(HookPreToolUse, "757073c8-d66b-4728-bca3-0b8c13b5382c", h1, "toolu_fake0000019aa8406e", "plan writer",
		"Read your full instructions at /tmp/crucible-dispatch-probe/2-plan-writer.md", "general-purpose")
	notype := call(HookPreToolUse, "e3909589-664c-4ba8-a54a-739ec4080418", h1, "toolu_fake000001c5778cda", "plan writer",
		"SUBAGENT-TASK: no type. WRITE-FILE notype.txt", "")
	unknown := call(HookPreToolUse, "decc3f17-32e4-4941-a094-3e2ae30caca1", h1, "toolu_fake000001ad5eafbb", "plan writer",
		"SUBAGENT-TASK: bad type", "no-such-agent")
	unknownFailed := unknown
	unknownFailed.Event = HookPostToolUseFailure
	unknownFailed.Error = "Agent type 'no-such-agent' not found. Available agents: claude, Explore, general-purpose, Plan, statusline-setup"
	background := bgcall(call(HookPreToolUse, "b6c0c59a-6266-43e9-b427-c73b4cccd982", h1, "toolu_fake000001ddfaa423", "plan writer 1",
		"SUBAGENT-TASK bg. WRITE-FILE bg.txt", "general-purpose"))
	sessionBg := bgcall(call(HookPreToolUse, bg, proj, "toolu_msg_3_0", "d", "say hi", "general-purpose"))
	sessionBgk := bgcall(call(HookPreToolUse, bgk, proj, "toolu_msg_12_0", "slow", sleep, "general-purpose"))
	sessionFg := call(HookPreToolUse, fg, proj, "toolu_msg_0_0", "d", "say hi", "general-purpose")
	sessionFgk := call(HookPreToolUse, fgk, proj, "toolu_msg_20_0", "slow", sleep, "general-purpose")
	sessionFgkFailed := sessionFgk
	sessionFgkFailed.Event, sessionFgkFailed.Error, sessionFgkFailed.Interrupted = HookPostToolUseFailure, "[Request interrupted by user for tool use]", true

	tests := []struct {
		file string
		want HookEvent // zero: not an Agent call
	}{
		{"parallel-1-PreToolUse.json", par1},
		{"parallel-2-PreToolUse.json", par2},
		{"parallel-3-PreToolUse.json", par3},
		{"parallel-4-PreToolUse.json", par4},
		{"parallel-5-PostToolUse.json", done(par1, "a4d02b24ed573fb3f", wrote("par-1.txt"), 1, 140)},
		{"parallel-6-PostToolUse.json", done(par2, "ae89c77842d3286e1", wrote("par-2.txt"), 1, 141)},
		{"parallel-7-PostToolUse.json", done(par4, "a39575657d18d2197", wrote("par-4.txt"), 1, 112)},
		{"parallel-8-PostToolUse.json", done(par3, "af4df32bb8419e349", wrote("par-3.txt"), 1, 148)},
		{"pretooluse-agent.json", plain},
		{"posttooluse-agent.json", done(plain, "ab54a44c71f75c099", wrote("sub-out.txt"), 1, 43)},
		{"pretooluse-agent-pointer.json", pointer},
		{"posttooluse-agent-pointer.json", done(pointer, "a3037fc68ffd56933", "hi from the fake model", 0, 36)},
		{"pretooluse-agent-no-subagent-type.json", notype},
		{"posttooluse-agent-no-subagent-type.json", done(notype, "ab512aedfc0ab31aa", wrote("notype.txt"), 1, 40)},
		{"pretooluse-agent-unknown-type.json", unknown},
		{"posttoolusefailure-agent-unknown-type.json", unknownFailed},
		{"pretooluse-agent-background.json", background},
		{"posttooluse-agent-background-async-launched.json", launched(background, "a06322c25780637ff")},

		{"session-fg-01-SessionStart.json", HookEvent{}},
		{"session-fg-02-UserPromptSubmit.json", HookEvent{}},
		{"session-fg-03-PreToolUse.json", sessionFg},
		{"session-fg-04-SubagentStart.json", HookEvent{}},
		{"session-fg-05-SubagentStop.json", HookEvent{Event: HookSubagentStop, SessionID: fg, Cwd: proj, AgentID: "a071d29f8ac4b46b7",
			AgentType: "general-purpose", Response: "done; last tool result:", BackgroundTasks: []string{}, Listed: true}},
		{"session-fg-06-PostToolUse.json", func() HookEvent {
			e := done(sessionFg, "a071d29f8ac4b46b7", "done; last tool result: ", 0, 327)
			return e
		}()},
		{"session-fg-07-Stop.json", stop(fg)},
		{"session-fg-08-SessionEnd.json", HookEvent{Event: HookSessionEnd, SessionID: fg, Cwd: proj, Reason: "other"}},

		{"session-bg-01-SessionStart.json", HookEvent{}},
		{"session-bg-02-UserPromptSubmit.json", HookEvent{}},
		{"session-bg-03-PreToolUse.json", sessionBg},
		{"session-bg-04-SubagentStart.json", HookEvent{}},
		{"session-bg-05-PostToolUse.json", launched(sessionBg, "ad0232ac9dab58fb0")},
		{"session-bg-06-SubagentStop.json", HookEvent{Event: HookSubagentStop, SessionID: bg, Cwd: proj, AgentID: "ad0232ac9dab58fb0",
			AgentType: "general-purpose", Response: "done; last tool result:", BackgroundTasks: []string{"ad0232ac9dab58fb0"}, Listed: true}},
		{"session-bg-07-Stop.json", stop(bg, "ad0232ac9dab58fb0")},
		{"session-bg-08-UserPromptSubmit.json", HookEvent{}},
		{"session-bg-09-Stop.json", stop(bg)},
		{"session-bg-10-SessionEnd.json", HookEvent{Event: HookSessionEnd, SessionID: bg, Cwd: proj, Reason: "other"}},

		{"session-bg-killed-01-SessionStart.json", HookEvent{}},
		{"session-bg-killed-02-UserPromptSubmit.json", HookEvent{}},
		{"session-bg-killed-03-PreToolUse.json", sessionBgk},
		{"session-bg-killed-04-PostToolUse.json", launched(sessionBgk, "a11a2d2e0e4d16212")},
		{"session-bg-killed-05-SubagentStart.json", HookEvent{}},
		{"session-bg-killed-06-PreToolUse-Bash.json", HookEvent{}},
		{"session-bg-killed-07-Stop.json", stop(bgk, "a11a2d2e0e4d16212")},
		{"session-bg-killed-08-UserPromptSubmit.json", HookEvent{}},
		{"session-bg-killed-09-Stop.json", stop(bgk)},

		{"session-fg-killed-01-SessionStart.json", HookEvent{}},
		{"session-fg-killed-02-UserPromptSubmit.json", HookEvent{}},
		{"session-fg-killed-03-PreToolUse.json", sessionFgk},
		{"session-fg-killed-04-SubagentStart.json", HookEvent{}},
		{"session-fg-killed-05-PreToolUse-Bash.json", HookEvent{}},
		{"session-fg-killed-06-PostToolUseFailure.json", sessionFgkFailed},
		{"session-fg-killed-07-SessionEnd.json", HookEvent{Event: HookSessionEnd, SessionID: fgk, Cwd: proj, Reason: "other"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseHookPayload(readHookFixture(t, tt.file))
			if reflect.DeepEqual(tt.want, HookEvent{}) {
				if !errors.Is(err, ErrNotAgentCall) {
					t.Fatalf("ParseHookPayload = %#v, %v; want ErrNotAgentCall", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHookPayload: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseHookPayload:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
	names, err := filepath.Glob(filepath.Join(claudeHooksDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !seen[filepath.Base(n)] {
			t.Errorf("%s is not in the table", n)
		}
	}
	if len(names) != len(tests) {
		t.Errorf("%d fixtures, %d rows", len(names), len(tests))
	}
}

// TestFinishOfReal: what each real end reports for its dispatch.
func TestFinishOfReal(t *testing.T) {
	one := 1
	const wrote = "Wrote /home/dev/src/h1/sub-out.txt (tool result: File created successfully at: /home/dev/src/h1/sub-out.txt " +
		"(file state is current in your context — no need to Read it back))"
	const unknown = "Agent type 'no-such-agent' not found. Available agents: claude, Explore, general-purpose, Plan, statusline-setup"
	tests := []struct {
		file string
		want pipeline.FinishRequest
	}{
		{"posttooluse-agent.json", pipeline.FinishRequest{Status: "completed", Summary: wrote, Output: []byte(wrote),
			ToolCalls: &one, AgentType: "general-purpose", Usage: &pipeline.Usage{Client: "claude-code",
				SessionID: "57c2eb28-250e-4453-8e69-d67f444c8da0", Model: "claude-opus-4-8[1m]", InputTokens: 100, OutputTokens: 20,
				ToolUses: 1, DurationMS: 43}}},
		{"posttooluse-agent-no-subagent-type.json", pipeline.FinishRequest{Status: "completed",
			Summary: strings.ReplaceAll(wrote, "sub-out", "notype"), Output: []byte(strings.ReplaceAll(wrote, "sub-out", "notype")),
			ToolCalls: &one, AgentType: "general-purpose", Usage: &pipeline.Usage{Client: "claude-code",
				SessionID: "e3909589-664c-4ba8-a54a-739ec4080418", Model: "claude-opus-4-8[1m]", InputTokens: 100, OutputTokens: 20,
				ToolUses: 1, DurationMS: 40}}},
		{"posttoolusefailure-agent-unknown-type.json", pipeline.FinishRequest{Status: "failed", Failure: FailureToolError,
			Summary: unknown, Output: []byte(unknown)}},
		{"session-fg-killed-06-PostToolUseFailure.json", pipeline.FinishRequest{Status: "error", Failure: FailureInterrupted,
			Summary: "[Request interrupted by user for tool use]", Output: []byte("[Request interrupted by user for tool use]")}},
		{"session-bg-06-SubagentStop.json", pipeline.FinishRequest{Status: "completed", AgentType: "general-purpose",
			Summary: "done; last tool result:", Output: []byte("done; last tool result:")}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e, err := ParseHookPayload(readHookFixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := FinishOf(e); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FinishOf:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
