// Package servetest is a scripted LLM API for testing the proxy and the
// agents behind it: one http.Handler that speaks OpenAI Chat Completions,
// OpenAI Responses and Anthropic Messages, in JSON and in server-sent
// events, answers what a script says, and records every request it gets.
package servetest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request the upstream received, and the answer it sent.
type Request struct {
	Path   string
	Header http.Header
	// Body is the body as it arrived; Decoded is it gunzipped when it
	// came with Content-Encoding: gzip, else Body.
	Body, Decoded []byte
	Response      []byte
}

// Reply is what the upstream answers: text, and tool calls the client
// should make.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// Status, when not zero, is an error answer's status; Text is then its
	// message, written in the API's error shape.
	Status int
}

// ToolCall is a call the scripted model makes.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON
}

// API names the request shapes the upstream speaks.
type API string

// The three APIs.
const (
	Chat      API = "chat"
	Responses API = "responses"
	Messages  API = "messages"
)

// Upstream is the scripted server. The zero value answers "ok" to every
// request.
type Upstream struct {
	// Script decides the answer to a request; nil answers "ok".
	Script func(api API, body []byte) Reply
	// ChunkSize is how many bytes of text each streamed delta carries
	// (default 8).
	ChunkSize int
	// ChunkDelay, when set, is slept between streamed events.
	ChunkDelay time.Duration

	mu       sync.Mutex
	requests []Request
	answers  atomic.Int64
}

// Requests returns the requests received so far.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.requests...)
}

// Last returns the last request received.
func (u *Upstream) Last() Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		return Request{}
	}
	return u.requests[len(u.requests)-1]
}

// Reset forgets the requests received.
func (u *Upstream) Reset() {
	u.mu.Lock()
	u.requests = nil
	u.mu.Unlock()
}

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	wire, _ := io.ReadAll(r.Body)
	body, err := wire, error(nil)
	if r.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(wire)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	u.mu.Lock()
	k := len(u.requests)
	u.requests = append(u.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: wire, Decoded: body})
	u.mu.Unlock()
	if err != nil {
		writeAPIError(w, Chat, http.StatusBadRequest, "invalid gzip body: "+err.Error())
		return
	}
	tee := &teeWriter{ResponseWriter: w}
	defer func() {
		u.mu.Lock()
		if k < len(u.requests) {
			u.requests[k].Response = tee.b.Bytes()
		}
		u.mu.Unlock()
	}()
	u.serve(tee, r, body)
}

// teeWriter keeps a copy of what is written.
type teeWriter struct {
	http.ResponseWriter
	b bytes.Buffer
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.b.Write(p)
	return t.ResponseWriter.Write(p)
}

func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request, body []byte) {

	var api API
	switch r.URL.Path {
	case "/v1/chat/completions":
		api = Chat
	case "/v1/responses":
		api = Responses
	case "/v1/messages":
		api = Messages
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"scripted","object":"model","created":0,"owned_by":"servetest"}]}`)
		return
	case "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4)
		return
	default:
		http.Error(w, `{"error":{"message":"no such path"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(body, &req)
	reply := Reply{Text: "ok"}
	if u.Script != nil {
		reply = u.Script(api, body)
	}
	if reply.Status != 0 {
		writeAPIError(w, api, reply.Status, reply.Text)
		return
	}
	usage := len(body) / 4
	// Every answer has ids of its own: clients merge the blocks of one
	// message id (Claude Code) and may drop repeated item ids.
	id := fmt.Sprintf("scripted%04d", u.answers.Add(1))
	if req.Stream {
		u.stream(w, api, id, req.Model, reply, usage)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(jsonAnswer(api, id, req.Model, reply, usage))
}

func writeAPIError(w http.ResponseWriter, api API, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if api == Messages {
		json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": msg}})
		return
	}
	code := "invalid_request_error"
	if strings.Contains(strings.ToLower(msg), "context") {
		code = "context_length_exceeded"
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": "messages", "code": code}})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// jsonAnswer is a whole, unstreamed answer.
func jsonAnswer(api API, id, model string, r Reply, usage int) []byte {
	switch api {
	case Chat:
		msg := map[string]any{"role": "assistant", "content": r.Text}
		finish := "stop"
		if len(r.ToolCalls) > 0 {
			var calls []any
			for _, c := range r.ToolCalls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}})
			}
			msg["tool_calls"], finish = calls, "tool_calls"
		}
		return mustJSON(map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]int{"prompt_tokens": usage, "completion_tokens": len(r.Text) / 4, "total_tokens": usage + len(r.Text)/4}})
	case Responses:
		return mustJSON(responseObject(id, model, r, usage, "completed"))
	default:
		stop := "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
		return mustJSON(map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": model,
			"content": anthropicBlocks(r), "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": usage, "output_tokens": len(r.Text) / 4}})
	}
}

func anthropicBlocks(r Reply) []any {
	var blocks []any
	if r.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Text})
	}
	for _, c := range r.ToolCalls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Arguments)})
	}
	return blocks
}

func responseItems(id string, r Reply, status string) []any {
	var items []any
	if r.Text != "" || len(r.ToolCalls) == 0 {
		items = append(items, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": status,
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}})
	}
	for i, c := range r.ToolCalls {
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%s_%d", id, i), "call_id": c.ID,
			"name": c.Name, "arguments": c.Arguments, "status": status})
	}
	return items
}

func responseObject(id, model string, r Reply, usage int, status string) map[string]any {
	out := []any{}
	if status == "completed" {
		out = responseItems(id, r, status)
	}
	return map[string]any{"id": "resp_" + id, "object": "response", "created_at": 1700000000, "status": status,
		"model": model, "output": out, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"usage": map[string]any{"input_tokens": usage, "output_tokens": len(r.Text) / 4, "total_tokens": usage + len(r.Text)/4,
			"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}}
}

// stream writes the answer as the API's server-sent events, flushing each.
func (u *Upstream) stream(w http.ResponseWriter, api API, id, model string, r Reply, usage int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(event string, data any) {
		var b bytes.Buffer
		if event != "" {
			fmt.Fprintf(&b, "event: %s\n", event)
		}
		switch d := data.(type) {
		case string:
			fmt.Fprintf(&b, "data: %s\n\n", d)
		default:
			fmt.Fprintf(&b, "data: %s\n\n", mustJSON(d))
		}
		w.Write(b.Bytes())
		rc.Flush()
		if u.ChunkDelay > 0 {
			time.Sleep(u.ChunkDelay)
		}
	}
	chunks := split(r.Text, u.ChunkSize)
	switch api {
	case Chat:
		chunk := func(delta map[string]any, finish any) map[string]any {
			return map[string]any{"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		}
		send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, c := range chunks {
			send("", chunk(map[string]any{"content": c}, nil))
		}
		finish := "stop"
		for i, c := range r.ToolCalls {
			finish = "tool_calls"
			send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
				"function": map[string]string{"name": c.Name, "arguments": c.Arguments}}}}, nil))
		}
		send("", chunk(map[string]any{}, finish))
		send("", "[DONE]")
	case Responses:
		seq := 0
		ev := func(typ string, fields map[string]any) {
			fields["type"], fields["sequence_number"] = typ, seq
			seq++
			send(typ, fields)
		}
		ev("response.created", map[string]any{"response": responseObject(id, model, r, usage, "in_progress")})
		ev("response.in_progress", map[string]any{"response": responseObject(id, model, r, usage, "in_progress")})
		items := responseItems(id, r, "completed")
		for i, it := range items {
			item := it.(map[string]any)
			if item["type"] == "message" {
				open := map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}
				ev("response.output_item.added", map[string]any{"output_index": i, "item": open})
				ev("response.content_part.added", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0,
					"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
				for _, c := range chunks {
					ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "delta": c})
				}
				ev("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "text": r.Text})
				ev("response.content_part.done", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0,
					"part": map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}})
			} else {
				ev("response.output_item.added", map[string]any{"output_index": i, "item": item})
				ev("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": i, "arguments": item["arguments"]})
			}
			ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
		}
		ev("response.completed", map[string]any{"response": responseObject(id, model, r, usage, "completed")})
	default:
		send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_" + id, "type": "message",
			"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": usage, "output_tokens": 1}}})
		index := 0
		if r.Text != "" {
			send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, c := range chunks {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": c}})
			}
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
		stop := "end_turn"
		for _, c := range r.ToolCalls {
			stop = "tool_use"
			send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
				"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": c.Arguments}})
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
		send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]int{"output_tokens": len(r.Text)/4 + 1}})
		send("message_stop", map[string]any{"type": "message_stop"})
	}
}

// split cuts s into pieces of about n bytes, on rune boundaries.
func split(s string, n int) []string {
	if n <= 0 {
		n = 8
	}
	var out []string
	for len(s) > n {
		k := n
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
