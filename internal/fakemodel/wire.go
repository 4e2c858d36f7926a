package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// sse writes events as a text/event-stream, each "event: TYPE" and its
// JSON.
func sse(w http.ResponseWriter, events []map[string]any) error {
	var b bytes.Buffer
	for _, ev := range events {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev["type"], data)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b.Bytes())
	return err
}

// writeMessage answers a Messages request with turn: tool_use blocks
// (stop_reason tool_use) or a text block (end_turn), streamed when the
// request asked for a stream.
func writeMessage(w http.ResponseWriter, conv conversation, turn Turn, p Play) error {
	id := newID("msg_fake")
	var content []map[string]any
	stop := "end_turn"
	for _, c := range turn.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": newID("toolu_fake"), "name": c.Name, "input": c.Input})
		stop = "tool_use"
	}
	if len(turn.Calls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	usage := func(out int) map[string]any {
		return map[string]any{"input_tokens": p.In, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	}
	if !conv.stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": conv.model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage(p.Out)})
		return nil
	}
	events := []map[string]any{{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": conv.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage(1)}}}
	for i, b := range content {
		var start, delta map[string]any
		if b["type"] == "text" {
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		} else {
			// The input comes as JSON in deltas, the start's input empty.
			input, err := json.Marshal(b["input"])
			if err != nil {
				return err
			}
			start = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
		}
		events = append(events,
			map[string]any{"type": "content_block_start", "index": i, "content_block": start},
			map[string]any{"type": "content_block_delta", "index": i, "delta": delta},
			map[string]any{"type": "content_block_stop", "index": i})
	}
	events = append(events,
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": p.Out}},
		map[string]any{"type": "message_stop"})
	return sse(w, events)
}

// writeResponse answers a Responses request with turn: function_call
// items or an assistant message, streamed when the request asked for a
// stream.
func writeResponse(w http.ResponseWriter, conv conversation, turn Turn, p Play) error {
	id := newID("resp_fake")
	var items []map[string]any
	for _, c := range turn.Calls {
		args, err := json.Marshal(c.Input)
		if err != nil {
			return err
		}
		items = append(items, map[string]any{"type": "function_call", "id": newID("fc_fake"), "status": "completed",
			"call_id": newID("call_fake"), "name": c.Name, "arguments": string(args)})
	}
	if len(turn.Calls) == 0 {
		items = append(items, map[string]any{"type": "message", "id": newID("msg_fake"), "status": "completed", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": turn.Text, "annotations": []any{}}}})
	}
	usage := map[string]any{"input_tokens": p.In, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": p.Out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": p.In + p.Out}
	response := func(status string, output []map[string]any, usage any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": conv.model, "output": output, "usage": usage}
	}
	if !conv.stream {
		writeJSON(w, http.StatusOK, response("completed", items, usage))
		return nil
	}
	events := []map[string]any{{"type": "response.created", "response": response("in_progress", []map[string]any{}, nil)}}
	for i, it := range items {
		events = append(events,
			map[string]any{"type": "response.output_item.added", "output_index": i, "item": it},
			map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	events = append(events, map[string]any{"type": "response.completed", "response": response("completed", items, usage)})
	for i, ev := range events {
		ev["sequence_number"] = i
	}
	return sse(w, events)
}

// anthropicErrors and openaiErrors are each API's error type (and for
// OpenAI, code and message) for a status, as the real services answer.
var anthropicErrors = map[int]apiError{
	400: {typ: "invalid_request_error", msg: "invalid request"},
	401: {typ: "authentication_error", msg: "invalid x-api-key"},
	402: {typ: "billing_error", msg: "Your credit balance is too low to access the Anthropic API."},
	403: {typ: "permission_error", msg: "Your API key does not have permission to use the specified resource."},
	404: {typ: "not_found_error", msg: "Not found"},
	413: {typ: "request_too_large", msg: "Request exceeds the maximum allowed number of bytes."},
	429: {typ: "rate_limit_error", msg: "Number of request tokens has exceeded your per-minute rate limit"},
	500: {typ: "api_error", msg: "Internal server error"},
	504: {typ: "timeout_error", msg: "Request timed out"},
	529: {typ: "overloaded_error", msg: "Overloaded"},
}

var openaiErrors = map[int]apiError{
	400: {"invalid_request_error", "", "Invalid request."},
	401: {"invalid_request_error", "invalid_api_key", "Incorrect API key provided: fake. You can find your API key at https://platform.openai.com/account/api-keys."},
	403: {"invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"},
	404: {"invalid_request_error", "unknown_url", "Unknown request URL."},
	429: {"requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."},
	500: {"server_error", "", "The server had an error while processing your request. Sorry about that!"},
	503: {"server_error", "", "The engine is currently overloaded, please try again later."},
	529: {"server_error", "", "The engine is currently overloaded, please try again later."},
}

// writeError answers with status and the error body client's API gives
// for it; msg, when set, replaces the API's message.
func writeError(w http.ResponseWriter, c Client, status int, msg string) {
	errs := openaiErrors
	if c == Claude {
		errs = anthropicErrors
	}
	e := errorFor(errs, status)
	if msg != "" {
		e.msg = msg
	}
	if c == Claude {
		w.Header().Set("request-id", newID("req_fake"))
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": e.typ, "message": e.msg},
			"request_id": w.Header().Get("request-id")})
		return
	}
	var code any
	if e.code != "" {
		code = e.code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": e.msg, "type": e.typ, "param": nil, "code": code}})
}

// apiError is an API's error for a status: its type, code and message.
type apiError struct{ typ, code, msg string }

// errorFor is errs' error for status, or its 400's or 500's.
func errorFor(errs map[int]apiError, status int) apiError {
	if e, ok := errs[status]; ok {
		return e
	}
	if status < 500 {
		return errs[400]
	}
	return errs[500]
}
