// Package fakemodel is a model server for tests that run the real Claude
// Code CLI (claude) and the real Codex CLI (codex) with no model: it
// speaks the Anthropic Messages API and the OpenAI Responses API on
// 127.0.0.1, and answers as a model would, from the prompt alone.
//
// A crucible prompt (prompt/templates) names its dispatch: the server
// reads the role, phase, task and round from it, selects the section of a
// scripted-agent scenario (testdata/agent/README.md) exactly as the
// scripted agent does, and plays its directives as the client's real tool
// calls (claude: Read, Write, Bash; codex: exec_command), one model turn
// each, so that every file goes through the client's permissions and
// sandbox. A prompt with FAKE-TOOLS lines makes the tool calls they name
// instead, one turn per line.
//
// The conversation is stateless, as the APIs are: each request carries
// the whole conversation, and the tool calls already in it say which turn
// comes next. A turn asked for again (a retry, or claude's notification
// that a background agent ended) is answered again alike.
//
// What the clients do besides (claude 2.1.197, codex 0.171.0): claude
// sends HEAD / before its first request, answered 404 and logged as an
// unknown endpoint; a subagent's conversation is a request like any
// other, its prompt the Agent call's. Without the retry settings of
// ClaudeEnv and WriteCodexHome, a 401 or 529 makes claude try 11 times
// over about three minutes, and codex 30 times over about half a minute.
package fakemodel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Options configure a server.
type Options struct {
	// Scenario is the scenario file crucible prompts are played from
	// (testdata/agent/scenarios/NAME); "" plays only directive prompts.
	Scenario string
	// InputTokens and OutputTokens are the usage each response reports
	// unless its section says otherwise (tokens IN OUT); 0 means 100 and
	// 20.
	InputTokens, OutputTokens int
	// APIError, when not 0, answers every model request with that HTTP
	// status and the API's error for it (401, 429, 500, 529...).
	APIError int
	// Logf, when set, is told of every request (t.Logf).
	Logf func(format string, args ...any)
}

// Request is what the server logged of one request.
type Request struct {
	Seq    int    // 1-based, in the order requests arrived
	Method string // GET, POST
	Path   string // with its query
	Client Client // whose API it was; "" for an unknown endpoint
	Status int    // what the server answered
	// Mode is how the model answered: "scenario" (a dispatch's section),
	// "fake-tools" (a directive prompt), "plain" (a prompt it does not
	// know: it only says done); "" when it did not answer as a model.
	Mode     string
	Dispatch *Dispatch // the dispatch read from the prompt; nil when none
	Section  string    // the scenario section played: "FILE [HEADER]"
	Workdir  string    // the client's working directory, as it said
	Turn     int       // the turn played, 0-based
	Calls    []ToolCall
	// Results are the client's answers to the previous turn's calls, as
	// this request carried them.
	Results []Result
	Text    string // the final answer, when the turn was the last
	Delay   time.Duration
	Error   string // why the answer is an error, or the error injected
}

// Server is a running fake model.
type Server struct {
	opts   Options
	ln     net.Listener
	srv    *http.Server
	cancel context.CancelFunc // ends the requests' contexts: Close cuts delays short

	mu   sync.Mutex
	log  []Request
	done chan struct{}
}

// Start starts a server on 127.0.0.1 at a free port.
func Start(opts Options) (*Server, error) {
	if opts.InputTokens == 0 {
		opts.InputTokens = 100
	}
	if opts.OutputTokens == 0 {
		opts.OutputTokens = 20
	}
	if opts.Scenario != "" {
		abs, err := filepath.Abs(opts.Scenario)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("fakemodel: scenario: %w", err)
		}
		opts.Scenario = abs
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, ln: ln, cancel: cancel, done: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ends with ErrServerClosed at Close
	}()
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server; responses still waiting (sleep) are cut short.
func (s *Server) Close() {
	s.cancel()
	_ = s.srv.Close()
	<-s.done
}

// Requests is a copy of the request log, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	copy(out, s.log)
	return out
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	r.Seq = len(s.log) + 1
	s.log = append(s.log, r)
	s.mu.Unlock()
	if s.opts.Logf != nil {
		what := r.Mode
		if r.Dispatch != nil {
			what += " " + r.Dispatch.String()
		}
		var names []string
		for _, c := range r.Calls {
			names = append(names, c.Name)
		}
		if r.Error != "" {
			what += " error: " + r.Error
		}
		s.opts.Logf("fakemodel: %d %s %s -> %d turn %d %v %s", r.Seq, r.Method, r.Path, r.Status, r.Turn, names, what)
	}
}

// maxBody bounds a request: a long session's history is megabytes.
const maxBody = 64 << 20

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.RequestURI()}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		req.Client = Claude
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		req.Client = Codex
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		req.Client = Claude
		s.countTokens(w, r, req)
		return
	default:
		client := Codex
		if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" {
			client = Claude
		}
		req.Status, req.Error = http.StatusNotFound, "unknown endpoint"
		writeError(w, client, http.StatusNotFound, fmt.Sprintf("fakemodel: no endpoint %s %s", r.Method, r.URL.Path))
		s.record(req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	var conv conversation
	if err == nil {
		conv, err = parseConversation(req.Client, body)
	}
	if err != nil {
		s.fail(w, req, http.StatusBadRequest, "fakemodel: the request does not parse: "+err.Error())
		return
	}
	req.Workdir = conv.workdir
	play, err := s.play(&req, conv)
	if s.opts.APIError != 0 {
		// Every request fails alike, whatever the model would answer.
		req.Status, req.Error = s.opts.APIError, fmt.Sprintf("api-error %d (the server's)", s.opts.APIError)
		writeError(w, req.Client, s.opts.APIError, "")
		s.record(req)
		return
	}
	if err != nil {
		s.fail(w, req, http.StatusBadRequest, "fakemodel: "+err.Error())
		return
	}
	var turn Turn
	req.Turn, turn = play.Next(len(conv.calls))
	if req.Turn > 0 {
		results := conv.results()
		n := min(len(play.Turns[req.Turn-1].Calls), len(results))
		req.Results = results[len(results)-n:]
	}
	req.Delay = turn.Delay
	if turn.Delay > 0 {
		select {
		case <-time.After(turn.Delay):
		case <-r.Context().Done():
			req.Status, req.Error = 499, "the client went away during the delay"
			s.record(req)
			return
		}
	}
	if turn.Error != 0 {
		req.Status, req.Error = turn.Error, fmt.Sprintf("api-error %d", turn.Error)
		writeError(w, req.Client, turn.Error, "")
		s.record(req)
		return
	}
	req.Calls, req.Text, req.Status = turn.Calls, turn.Text, http.StatusOK
	var werr error
	if req.Client == Claude {
		werr = writeMessage(w, conv, turn, play)
	} else {
		werr = writeResponse(w, conv, turn, play)
	}
	if werr != nil {
		req.Error = "writing the answer: " + werr.Error()
	}
	s.record(req)
}

// play is what the model plays for conv: a directive prompt's calls, a
// crucible dispatch's section, or, for any other prompt, only an answer.
func (s *Server) play(req *Request, conv conversation) (Play, error) {
	in, out := s.opts.InputTokens, s.opts.OutputTokens
	turns, err := ParseFakeTools(conv.prompt)
	if err != nil {
		return Play{}, err
	}
	if turns != nil {
		req.Mode = "fake-tools"
		return PlanFakeTools(turns, in, out), nil
	}
	d, ok := ParsePrompt(conv.prompt)
	if !ok || s.opts.Scenario == "" {
		req.Mode = "plain"
		if ok {
			req.Dispatch = &d
		}
		return PlanFakeTools(nil, in, out), nil
	}
	req.Mode, req.Dispatch = "scenario", &d
	sec, err := Select(s.opts.Scenario, d.Conds())
	if err != nil {
		return Play{}, err
	}
	if sec == nil {
		return Play{}, fmt.Errorf("scenario %s has no section for role=%s phase=%s task=%s round=%s",
			s.opts.Scenario, d.Role, d.Phase, d.Task, d.Round)
	}
	req.Section = sec.File + " [" + sec.Header + "]"
	return PlanSection(req.Client, sec, Where{Workdir: conv.workdir, Report: d.ReportPath}, conv.results(), in, out)
}

// fail answers a request the model cannot answer with a 400 error naming
// the reason, so that the client fails visibly.
func (s *Server) fail(w http.ResponseWriter, req Request, status int, msg string) {
	req.Status, req.Error = status, msg
	writeError(w, req.Client, status, msg)
	s.record(req)
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, req Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		s.fail(w, req, http.StatusBadRequest, err.Error())
		return
	}
	req.Status = http.StatusOK
	// About four bytes a token, as a tokenizer would say of English.
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
	s.record(req)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// newID is a fresh id with prefix: the clients key tool results by it.
func newID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// conversation is what a request says, read as the model reads it.
type conversation struct {
	model   string
	stream  bool
	prompt  string // the user's first message: the dispatch's prompt
	workdir string
	calls   []string          // ids of the tool calls the model made, in order
	outputs map[string]Result // the client's answers, by call id
}

// results are the answers to the calls, in order; a call not answered has
// an empty one.
func (c conversation) results() []Result {
	out := make([]Result, len(c.calls))
	for i, id := range c.calls {
		out[i] = c.outputs[id]
	}
	return out
}

var (
	claudeWorkdir = regexp.MustCompile(`(?m)^\s*(?:- )?(?:Primary working directory|Working directory): (/.*?)\s*$`)
	codexWorkdir  = regexp.MustCompile(`<cwd>(/[^<]*)</cwd>`)
)

func parseConversation(c Client, body []byte) (conversation, error) {
	if c == Claude {
		return parseMessages(body)
	}
	return parseResponses(body)
}

// anthropicRequest is what the fake model reads of a Messages request.
type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// blocks reads content that is a string or a list of blocks.
func blocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// text is the text of content that is a string or a list of blocks.
func text(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func parseMessages(body []byte) (conversation, error) {
	var r anthropicRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return conversation{}, err
	}
	conv := conversation{model: r.Model, stream: r.Stream, outputs: map[string]Result{}}
	if m := claudeWorkdir.FindStringSubmatch(text(r.System)); m != nil {
		conv.workdir = m[1]
	}
	var prompt []string
	answered := false // the model answered once: later user messages are not the prompt
	for _, m := range r.Messages {
		for _, b := range blocks(m.Content) {
			switch {
			case m.Role == "user" && !answered && b.Type == "text" && !strings.HasPrefix(b.Text, "<system-reminder>"):
				prompt = append(prompt, b.Text)
			case m.Role == "assistant" && b.Type == "tool_use":
				conv.calls = append(conv.calls, b.ID)
			case m.Role == "user" && b.Type == "tool_result":
				conv.outputs[b.ToolUseID] = Result{Text: text(b.Content), IsError: b.IsError}
			}
		}
		if m.Role == "assistant" {
			answered = true
		}
	}
	conv.prompt = strings.Join(prompt, "\n")
	return conv, nil
}

// openaiRequest is what the fake model reads of a Responses request.
type openaiRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
}

type openaiItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
}

func parseResponses(body []byte) (conversation, error) {
	var r openaiRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return conversation{}, err
	}
	conv := conversation{model: r.Model, stream: r.Stream, outputs: map[string]Result{}}
	var s string
	if json.Unmarshal(r.Input, &s) == nil {
		conv.prompt = s
		return conv, nil
	}
	var items []openaiItem
	if err := json.Unmarshal(r.Input, &items); err != nil {
		return conversation{}, fmt.Errorf("input: %w", err)
	}
	var prompt []string
	answered := false
	for _, it := range items {
		switch it.Type {
		case "message":
			if it.Role == "assistant" {
				answered = true
			}
			if it.Role != "user" {
				continue
			}
			for _, t := range openaiTexts(it.Content) {
				if m := codexWorkdir.FindStringSubmatch(t); m != nil && conv.workdir == "" {
					conv.workdir = m[1]
				}
				if !answered && !strings.HasPrefix(t, "<environment_context>") {
					prompt = append(prompt, t)
				}
			}
		case "function_call", "custom_tool_call", "local_shell_call":
			answered = true
			conv.calls = append(conv.calls, it.CallID)
		case "function_call_output", "custom_tool_call_output":
			var out string
			if json.Unmarshal(it.Output, &out) != nil {
				out = string(it.Output)
			}
			conv.outputs[it.CallID] = Result{Text: out}
		}
	}
	conv.prompt = strings.Join(prompt, "\n")
	return conv, nil
}

// openaiTexts are the texts of a message's content: a string or a list
// of input_text parts.
func openaiTexts(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out
}
