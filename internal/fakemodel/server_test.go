package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A crucible prompt as the templates render it, for the implementer of
// task 1; %s is the report's path.
const implementerPrompt = "# crucible build — Execute (phase 3 of 4), step implementer\n\n- Goal: greet\n- Your role: implementer\n" +
	"- Project test command: `sh test/unit.sh`\n\n## Your task: 1 — Take the name argument\n\n- Fast gate: `sh test/unit.sh`\n\n" +
	"When you are done, write your report as YAML to the file `/w/out.yaml`\n"

const testScenario = `[implementer phase=3 task=1]
tokens 1000 300
append greet.sh
echo "hello, $1"
.
run sh test/unit.sh
report
status: completed
.
stdout
all done
.

[implementer phase=3 task=2]
run true
api-error 529
`

func startScenario(t *testing.T, scenario string, opts Options) *Server {
	t.Helper()
	if scenario != "" {
		opts.Scenario = filepath.Join(t.TempDir(), "scenario")
		if err := os.WriteFile(opts.Scenario, []byte(scenario), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Logf = t.Logf
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// event is one server-sent event's data.
type event map[string]any

func post(t *testing.T, url string, body any) (*http.Response, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// events reads a text/event-stream, checking each event's name is its
// data's type.
func events(t *testing.T, body []byte) []event {
	t.Helper()
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(body))
	name := ""
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
		} else if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("data %s: %v", data, err)
			}
			if ev["type"] != name {
				t.Fatalf("event %s carries type %v", name, ev["type"])
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// claudeTurn is one streamed Messages answer, put together as Claude Code
// does.
type claudeTurn struct {
	blocks   []map[string]any
	stop     string
	in, out  float64
	complete bool
}

func readClaudeTurn(t *testing.T, body []byte) claudeTurn {
	t.Helper()
	var ct claudeTurn
	for _, ev := range events(t, body) {
		switch ev["type"] {
		case "message_start":
			u := ev["message"].(map[string]any)["usage"].(map[string]any)
			ct.in = u["input_tokens"].(float64)
		case "content_block_start":
			ct.blocks = append(ct.blocks, ev["content_block"].(map[string]any))
		case "content_block_delta":
			b, d := ct.blocks[int(ev["index"].(float64))], ev["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "input_json_delta":
				var in map[string]any
				if err := json.Unmarshal([]byte(d["partial_json"].(string)), &in); err != nil {
					t.Fatal(err)
				}
				b["input"] = in
			}
		case "message_delta":
			ct.stop = ev["delta"].(map[string]any)["stop_reason"].(string)
			ct.out = ev["usage"].(map[string]any)["output_tokens"].(float64)
		case "message_stop":
			ct.complete = true
		}
	}
	return ct
}

// TestMessagesAPI holds a whole conversation with the server as Claude
// Code would: stateless requests carrying every turn so far, tool results
// as user tool_result blocks.
func TestMessagesAPI(t *testing.T) {
	s := startScenario(t, testScenario, Options{})
	system := []map[string]any{{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197"},
		{"type": "text", "text": "You are Claude Code.\n - Primary working directory: /w\n - Is a git repository: true"}}
	messages := []map[string]any{{"role": "user", "content": []map[string]any{
		{"type": "text", "text": "<system-reminder>\nToday's date is 2026-11-27.\n</system-reminder>\n"},
		{"type": "text", "text": implementerPrompt}}}}
	// What the client answers to each tool.
	answers := map[string]map[string]any{
		"Read":  {"content": "     1\t#!/bin/sh\n     2\t"},
		"Bash":  {"content": "ok: greet.sh", "is_error": false},
		"Write": {"content": "File created successfully"},
	}
	var names []string
	var final claudeTurn
	for range 10 {
		resp, body := post(t, s.URL()+"/v1/messages?beta=true", map[string]any{"model": "claude-opus-4-8", "stream": true,
			"max_tokens": 64000, "system": system, "messages": messages})
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s: %s", resp.Status, body)
		}
		ct := readClaudeTurn(t, body)
		if !ct.complete || ct.in != 1000 || ct.out != 300 {
			t.Fatalf("turn %+v: want a complete message reporting 1000 and 300 tokens", ct)
		}
		if ct.stop == "end_turn" {
			final = ct
			break
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": ct.blocks})
		var results []map[string]any
		for _, b := range ct.blocks {
			names = append(names, b["name"].(string)+" "+mustJSON(t, b["input"]))
			r := map[string]any{"type": "tool_result", "tool_use_id": b["id"]}
			for k, v := range answers[b["name"].(string)] {
				r[k] = v
			}
			results = append(results, r)
		}
		messages = append(messages, map[string]any{"role": "user", "content": results})
	}
	want := []string{
		`Read {"file_path":"/w/greet.sh"}`,
		`Write {"content":"#!/bin/sh\necho \"hello, $1\"\n","file_path":"/w/greet.sh"}`,
		`Bash {"command":"sh test/unit.sh"}`,
		`Write {"content":"status: completed\n","file_path":"/w/out.yaml"}`,
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool calls:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	if len(final.blocks) != 1 || final.blocks[0]["text"] != "all done" {
		t.Errorf("final answer %v, want the section's stdout", final.blocks)
	}
	log := s.Requests()
	if len(log) != 5 {
		t.Fatalf("%d requests logged, want 5: %+v", len(log), log)
	}
	for i, r := range log {
		if r.Client != Claude || r.Mode != "scenario" || r.Status != 200 || r.Turn != i || r.Workdir != "/w" ||
			r.Dispatch == nil || r.Dispatch.Conds() != (Conds{"implementer", "3", "1", ""}) || !strings.HasSuffix(r.Section, "scenario [implementer phase=3 task=1]") {
			t.Errorf("request %d logged as %+v", i, r)
		}
	}
	if log[4].Text != "all done" || len(log[0].Calls) != 1 || log[0].Calls[0].Name != "Read" {
		t.Errorf("log: first %+v, last %+v", log[0], log[4])
	}
}

// TestResponsesAPI holds a whole conversation with the server as codex
// would: the input carries the developer and user messages, then each
// function call and its output.
func TestResponsesAPI(t *testing.T) {
	s := startScenario(t, testScenario, Options{})
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []map[string]any{{"type": "input_text", "text": "You are Codex."}}},
		map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text",
			"text": "<environment_context>\n  <cwd>/w</cwd>\n  <shell>bash</shell>\n</environment_context>"}}},
		map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": implementerPrompt}}},
	}
	var cmds []string
	var final map[string]any
	for range 10 {
		resp, body := post(t, s.URL()+"/v1/responses", map[string]any{"model": "fake-model", "stream": true, "input": input,
			"tools": []any{}, "parallel_tool_calls": true})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", resp.Status, body)
		}
		evs := events(t, body)
		last := evs[len(evs)-1]
		if evs[0]["type"] != "response.created" || last["type"] != "response.completed" {
			t.Fatalf("events %v", evs)
		}
		for i, ev := range evs {
			if ev["sequence_number"].(float64) != float64(i) {
				t.Errorf("event %d has sequence number %v", i, ev["sequence_number"])
			}
		}
		usage := last["response"].(map[string]any)["usage"].(map[string]any)
		if usage["input_tokens"] != 1000.0 || usage["output_tokens"] != 300.0 || usage["total_tokens"] != 1300.0 {
			t.Errorf("usage %v", usage)
		}
		var items []map[string]any
		for _, ev := range evs {
			if ev["type"] == "response.output_item.done" {
				items = append(items, ev["item"].(map[string]any))
			}
		}
		if items[0]["type"] == "message" {
			final = items[0]
			break
		}
		for _, it := range items {
			var args map[string]any
			if err := json.Unmarshal([]byte(it["arguments"].(string)), &args); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, it["name"].(string)+" "+args["cmd"].(string))
			input = append(input, it, map[string]any{"type": "function_call_output", "call_id": it["call_id"],
				"output": "Process exited with code 0\nOutput:\n"})
		}
	}
	want := []string{
		"exec_command cat >> greet.sh <<'CRUCIBLE_EOF'\necho \"hello, $1\"\nCRUCIBLE_EOF",
		"exec_command sh test/unit.sh",
		"exec_command cat > /w/out.yaml <<'CRUCIBLE_EOF'\nstatus: completed\nCRUCIBLE_EOF",
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	if final == nil || mustJSON(t, final["content"]) != `[{"annotations":[],"text":"all done","type":"output_text"}]` {
		t.Errorf("final message %v", final)
	}
	for i, r := range s.Requests() {
		if r.Client != Codex || r.Turn != i || r.Workdir != "/w" || r.Dispatch == nil || r.Dispatch.Task != "1" {
			t.Errorf("request %d logged as %+v", i, r)
		}
	}
}

// TestErrors: each API's error shape for an injected status, from the
// server's options and from a section's api-error; unknown endpoints;
// prompts the scenario does not play.
func TestErrors(t *testing.T) {
	claudeBody := func(prompt string) map[string]any {
		return map[string]any{"model": "m", "stream": true, "messages": []map[string]any{{"role": "user", "content": prompt}}}
	}
	codexBody := func(prompt string) map[string]any {
		return map[string]any{"model": "m", "stream": true, "input": prompt}
	}
	second := strings.ReplaceAll(implementerPrompt, "task: 1 ", "task: 2 ")
	cases := []struct {
		name   string
		opts   Options
		path   string
		body   any
		status int
		want   string
	}{
		{"claude, 401 for every request", Options{APIError: 401}, "/v1/messages?beta=true", claudeBody("hi"), 401,
			`"error":{"message":"invalid x-api-key","type":"authentication_error"}`},
		{"codex, 401 for every request", Options{APIError: 401}, "/v1/responses", codexBody("hi"), 401,
			`{"error":{"code":"invalid_api_key","message":"Incorrect API key provided`},
		{"claude, the section's 529 once its run is done", Options{}, "/v1/messages", map[string]any{"model": "m", "stream": true,
			"messages": []map[string]any{{"role": "user", "content": second},
				{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{}}}},
				{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "t1", "content": ""}}}}},
			529, `"error":{"message":"Overloaded","type":"overloaded_error"}`},
		{"codex, the section's 529", Options{}, "/v1/responses", map[string]any{"model": "m", "stream": true, "input": []any{
			map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": second}}},
			map[string]any{"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
			map[string]any{"type": "function_call_output", "call_id": "c1", "output": ""}}},
			529, `{"error":{"code":null,"message":"The engine is currently overloaded`},
		{"no section", Options{}, "/v1/messages", claudeBody(strings.ReplaceAll(implementerPrompt, "role: implementer", "role: fixer")), 400,
			`has no section for role=fixer phase=3 task=1 round=`},
		{"unknown endpoint, Anthropic's shape", Options{}, "/v1/complete", claudeBody("hi"), 404, `"type":"not_found_error"`},
		{"unknown endpoint, OpenAI's", Options{}, "/v1/chat/completions", codexBody("hi"), 404, `"code":"unknown_url"`},
		{"not JSON", Options{}, "/v1/responses", "{", 400, `the request does not parse`},
		{"a directive prompt that does not parse", Options{}, "/v1/messages", claudeBody("FAKE-TOOLS {}"), 400, `needs a JSON array`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startScenario(t, testScenario, c.opts)
			var body io.Reader
			if str, ok := c.body.(string); ok {
				body = strings.NewReader(str)
			} else {
				body = strings.NewReader(mustJSON(t, c.body))
			}
			req, err := http.NewRequest(http.MethodPost, s.URL()+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(c.path, "/v1/messages") || c.path == "/v1/complete" {
				req.Header.Set("anthropic-version", "2023-06-01")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), c.want) {
				t.Errorf("%s %s\n%s\nwant %d with %s", resp.Status, resp.Header.Get("Content-Type"), b, c.status, c.want)
			}
			log := s.Requests()
			if len(log) != 1 || log[0].Status != c.status || log[0].Error == "" {
				t.Errorf("logged %+v", log)
			}
		})
	}
}

// TestDirectivePrompt: each FAKE-TOOLS line is one turn of parallel tool
// calls, whatever the scenario; non-streaming requests and count_tokens
// are answered too.
func TestDirectivePrompt(t *testing.T) {
	s := startScenario(t, "", Options{InputTokens: 7, OutputTokens: 3})
	prompt := `FAKE-TOOLS [{"name":"Agent","input":{"description":"one","prompt":"a"}},{"name":"Agent","input":{"description":"two","prompt":"b"}}]` +
		"\nFAKE-TOOLS [{\"name\":\"Write\",\"input\":{\"file_path\":\"/x\",\"content\":\"y\\n\"}}]\n"
	resp, body := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true,
		"messages": []map[string]any{{"role": "user", "content": prompt}}})
	ct := readClaudeTurn(t, body)
	if resp.StatusCode != 200 || len(ct.blocks) != 2 || ct.blocks[1]["name"] != "Agent" || ct.blocks[1]["input"].(map[string]any)["prompt"] != "b" ||
		ct.blocks[0]["id"] == ct.blocks[1]["id"] || ct.stop != "tool_use" || ct.in != 7 || ct.out != 3 {
		t.Fatalf("first turn %+v", ct)
	}
	// Not streamed: the second turn, after both calls.
	messages := []map[string]any{{"role": "user", "content": prompt}, {"role": "assistant", "content": ct.blocks},
		{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": ct.blocks[0]["id"], "content": "ok"},
			{"type": "tool_result", "tool_use_id": ct.blocks[1]["id"], "content": "ok"}}}}
	_, body = post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "messages": messages})
	var msg struct {
		Content []map[string]any
		Stop    string `json:"stop_reason"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || len(msg.Content) != 1 || msg.Content[0]["name"] != "Write" || msg.Stop != "tool_use" {
		t.Fatalf("second turn %s (%v)", body, err)
	}
	resp, body = post(t, s.URL()+"/v1/messages/count_tokens", map[string]any{"model": "m", "messages": messages})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"input_tokens":`) {
		t.Errorf("count_tokens: %s %s", resp.Status, body)
	}
	// A prompt the model does not know: it says done.
	_, body = post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "input": "say hi"})
	if !strings.Contains(string(body), `"text":"done"`) {
		t.Errorf("plain prompt: %s", body)
	}
	log := s.Requests()
	if len(log) != 4 || log[0].Mode != "fake-tools" || log[1].Turn != 1 || log[3].Mode != "plain" {
		t.Errorf("log %+v", log)
	}
}

// TestSleep: a section's sleep delays the response it stands before, and
// Close cuts it short.
func TestSleep(t *testing.T) {
	s := startScenario(t, "[implementer phase=3 task=1]\nsleep 0.3\nstdout\nslept\n.\n", Options{})
	start := time.Now()
	_, body := post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "input": implementerPrompt})
	if d := time.Since(start); d < 300*time.Millisecond || !strings.Contains(string(body), "slept") {
		t.Errorf("answered %s after %s, want slept after 0.3s", body, d)
	}
	if r := s.Requests()[0]; r.Delay != 300*time.Millisecond {
		t.Errorf("logged delay %s", r.Delay)
	}
	long := startScenario(t, "[implementer phase=3 task=1]\nsleep 60\n", Options{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		long.Close()
	}()
	start = time.Now()
	if resp, err := http.Post(long.URL()+"/v1/responses", "application/json", strings.NewReader(mustJSON(t, map[string]any{"input": implementerPrompt}))); err == nil {
		resp.Body.Close()
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close left a response sleeping %s", d)
	}
}
