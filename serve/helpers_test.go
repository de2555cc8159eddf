package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/syncbuffer"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
	"github.com/compactkit/compact/tokens"
)

// Test models: small windows, so that a few dozen turns pass the threshold.
// tiny-gpt counts exactly (o200k_base), tiny-claude is estimated.
const (
	gptModel    = "tiny-gpt"
	claudeModel = "tiny-claude"
	testWindow  = 16000
	testReserve = 2000
)

func testModels(t testing.TB) *tokens.Models {
	t.Helper()
	m := tokens.NewModels()
	if err := m.Set(
		tokens.Model{Name: gptModel, Encoding: tokens.O200kBase, Window: testWindow, OutputReserve: testReserve, Provider: "openai"},
		tokens.Model{Name: claudeModel, Encoding: "estimate", Window: testWindow, OutputReserve: testReserve, Provider: "anthropic"},
	); err != nil {
		t.Fatal(err)
	}
	return m
}

// counting wraps the fallback summarizer and counts its calls.
type counting struct {
	calls atomic.Int64
	fail  bool
}

func (c *counting) Summarize(ctx context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	c.calls.Add(1)
	if c.fail {
		return compact.Summary{}, fmt.Errorf("scripted summarizer failure")
	}
	h, err := fallback.Build(req.Window, fallback.Config{MaxTokens: req.MaxTokens, Count: req.Count, Redacted: req.Redacted})
	return compact.Summary{Handoff: h, Method: compact.MethodFallback}, err
}

// rig is a proxy in front of a scripted upstream.
type rig struct {
	up      *servetest.Upstream
	upSrv   *httptest.Server
	srv     *serve.Server
	proxy   *httptest.Server
	logs    *syncbuffer.Buffer
	summary *counting
}

type rigOption func(*serve.Config)

func newRig(t testing.TB, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{up: &servetest.Upstream{}, logs: &syncbuffer.Buffer{}, summary: &counting{}}
	r.upSrv = httptest.NewServer(r.up)
	t.Cleanup(r.upSrv.Close)
	cfg := serve.Config{
		OpenAIUpstream:    r.upSrv.URL + "/v1",
		AnthropicUpstream: r.upSrv.URL,
		Models:            testModels(t),
		Compaction:        compactor.DefaultConfig(),
		Logger:            slog.New(slog.NewJSONHandler(r.logs, nil)),
	}
	cfg.Compaction.Summarizer = r.summary
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	if r.srv, err = serve.New(cfg); err != nil {
		t.Fatal(err)
	}
	r.proxy = httptest.NewServer(r.srv)
	t.Cleanup(r.proxy.Close)
	return r
}

// post sends body to the proxy and returns the status and answer.
func (r *rig) post(t testing.TB, path string, body []byte, header map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.proxy.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

// turn is one message of a test conversation, in no API's shape.
type turn struct {
	role   compact.Role // user, assistant, tool
	text   string
	calls  []servetest.ToolCall
	callID string // for tool results
}

const systemPrompt = "You are a coding agent. Work in the repository, run the tests, keep changes small."

// conversation returns a coding session: a first ask, then n rounds of an
// assistant reading a file and the file's contents, with a new ask every
// seventh round. size scales the tool outputs (lines per output).
func conversation(n, size int) []turn {
	turns := []turn{{role: compact.RoleUser, text: "Fix the failing test in pkg/server and make the build green."}}
	for k := 0; k < n; k++ {
		if k > 0 && k%7 == 0 {
			turns = append(turns, turn{role: compact.RoleUser, text: fmt.Sprintf("Also check handler_%d.go for the same bug.", k)})
		}
		id := fmt.Sprintf("call_%03d", k)
		path := fmt.Sprintf("pkg/server/handler_%d.go", k)
		turns = append(turns,
			turn{role: compact.RoleAssistant, text: fmt.Sprintf("Reading %s to find the bug.", path),
				calls: []servetest.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, path)}}},
			turn{role: compact.RoleTool, callID: id, text: fileBody(k, size)})
	}
	return turns
}

// openFileStore opens the file store in dir, closed when the test ends: a
// store a restarted proxy opens again.
func openFileStore(t testing.TB, dir string) checkpoint.Store {
	t.Helper()
	s, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// roundEnds returns where the rounds of turns end: the index after each
// tool result, so that turns[:end] is a request that ends on a result.
func roundEnds(turns []turn) []int {
	var ends []int
	for i, tn := range turns {
		if tn.role == compact.RoleTool {
			ends = append(ends, i+1)
		}
	}
	return ends
}

func fileBody(k, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package server\n\n// handler_%d serves requests of kind %d.\n", k, k)
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "func handle%d_%d(w http.ResponseWriter, r *http.Request) error { return serveKind(w, r, %d, %q) }\n", k, i, i, fmt.Sprintf("route-%d-%d", k, i))
	}
	return b.String()
}

// request encodes turns as a request body of api, with the fields real
// clients send beside the conversation, laid out unevenly (spaces, key
// order, escapes) so that byte-exact forwarding is tested.
func request(api servetest.API, model string, turns []turn, stream bool) []byte {
	var b strings.Builder
	switch api {
	case servetest.Chat:
		msgs := []any{map[string]any{"role": "system", "content": systemPrompt}}
		for _, tn := range turns {
			msgs = append(msgs, chatMessage(tn))
		}
		fmt.Fprintf(&b, "{\n  \"model\" : %q,\n  \"temperature\":0.2, \"messages\": %s,\n", model, list(msgs))
		b.WriteString(`  "tools":[{"type":"function","function":{"name":"read_file","description":"Read a file \u0026 return it","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}],` + "\n")
		fmt.Fprintf(&b, "  \"stream\": %t, \"parallel_tool_calls\": true, \"user\": \"u-1\", \"x_vendor\": {\"keep\": [1, 2.50, \"\\u00e9\"]}\n}", stream)
		if stream {
			return []byte(strings.Replace(b.String(), `"user": "u-1"`, `"stream_options":{"include_usage":true},"user": "u-1"`, 1))
		}
	case servetest.Responses:
		var items []any
		for _, tn := range turns {
			items = append(items, responsesItems(tn)...)
		}
		fmt.Fprintf(&b, `{"model":%q,"instructions":%q,"input":%s,`, model, systemPrompt, list(items))
		b.WriteString(`"tools":[{"type":"function","name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}},"strict":false}],`)
		fmt.Fprintf(&b, `"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"low"},"store":false,"stream":%t,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k-1"}`, stream)
	case servetest.Messages:
		var msgs []any
		for i, tn := range turns {
			msgs = appendAnthropic(msgs, tn, i == len(turns)-1)
		}
		fmt.Fprintf(&b, `{"model":%q,"max_tokens":1024,"system":[{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}],"messages":%s,`, model, systemPrompt, list(msgs))
		b.WriteString(`"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],`)
		fmt.Fprintf(&b, `"metadata":{"user_id":"u-1"},"top_k":5,"stream":%t}`, stream)
	}
	return []byte(b.String())
}

// list writes elements one per line, as SDKs that pretty-print do not but
// as some clients do; the proxy must not care.
func list(elems []any) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range elems {
		if i > 0 {
			b.WriteString(",\n    ")
		}
		raw, _ := json.Marshal(e)
		b.Write(raw)
	}
	b.WriteString("]")
	return b.String()
}

func chatMessage(tn turn) any {
	switch tn.role {
	case compact.RoleTool:
		return map[string]any{"role": "tool", "tool_call_id": tn.callID, "content": tn.text}
	case compact.RoleAssistant:
		m := map[string]any{"role": "assistant", "content": tn.text}
		var calls []any
		for _, c := range tn.calls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}})
		}
		if calls != nil {
			m["tool_calls"] = calls
		}
		return m
	}
	return map[string]any{"role": "user", "content": tn.text}
}

func responsesItems(tn turn) []any {
	switch tn.role {
	case compact.RoleTool:
		return []any{map[string]any{"type": "function_call_output", "call_id": tn.callID, "output": tn.text}}
	case compact.RoleAssistant:
		items := []any{map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": tn.text}}}}
		for _, c := range tn.calls {
			items = append(items, map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Arguments})
		}
		return items
	}
	return []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": tn.text}}}}
}

// appendAnthropic adds a turn; tool results join a user message, as the
// API wants. The last message carries a cache_control breakpoint, which
// moves as the conversation grows (as Claude Code's does).
func appendAnthropic(msgs []any, tn turn, last bool) []any {
	var block map[string]any
	role := "user"
	switch tn.role {
	case compact.RoleTool:
		block = map[string]any{"type": "tool_result", "tool_use_id": tn.callID, "content": tn.text}
	case compact.RoleAssistant:
		role = "assistant"
		blocks := []any{map[string]any{"type": "text", "text": tn.text}}
		for _, c := range tn.calls {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Arguments)})
		}
		return append(msgs, map[string]any{"role": role, "content": blocks})
	default:
		block = map[string]any{"type": "text", "text": tn.text}
	}
	if last {
		block["cache_control"] = map[string]string{"type": "ephemeral"}
	}
	return append(msgs, map[string]any{"role": role, "content": []any{block}})
}

var apiPaths = map[servetest.API]string{
	servetest.Chat: "/v1/chat/completions", servetest.Responses: "/v1/responses", servetest.Messages: "/v1/messages",
}

var apiFormats = map[servetest.API]format.Name{
	servetest.Chat: format.OpenAIChat, servetest.Responses: format.OpenAIResponses, servetest.Messages: format.Anthropic,
}

func modelFor(api servetest.API) string {
	if api == servetest.Messages {
		return claudeModel
	}
	return gptModel
}

var allAPIs = []servetest.API{servetest.Chat, servetest.Responses, servetest.Messages}

// listKey is the member holding each API's conversation.
func listKey(api servetest.API) string {
	if api == servetest.Responses {
		return "input"
	}
	return "messages"
}

// split returns the body's conversation list elements (raw) and the body
// with the list's value cut out, to compare what surrounds it.
func split(t testing.TB, api servetest.API, body []byte) (elems []json.RawMessage, rest string) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("forwarded body is not JSON: %v", err)
	}
	raw := obj[listKey(api)]
	if err := json.Unmarshal(raw, &elems); err != nil {
		t.Fatalf("forwarded list: %v", err)
	}
	i := bytes.Index(body, raw)
	if i < 0 {
		t.Fatal("list value not found in the body")
	}
	return elems, string(body[:i]) + "<LIST>" + string(body[i+len(raw):])
}

// readForwarded reads a forwarded body with the format reader.
func readForwarded(t testing.TB, api servetest.API, body []byte) compact.Transcript {
	t.Helper()
	tr, err := format.Read(bytes.NewReader(body), "forwarded", apiFormats[api])
	if err != nil {
		t.Fatalf("forwarded body does not read as %s: %v", api, err)
	}
	return tr
}

func countHandoffs(tr compact.Transcript) int {
	n := 0
	for _, m := range tr.Messages {
		if compact.IsHandoffText(m.Text()) {
			n++
		}
	}
	return n
}

// get fetches a path of the proxy.
func (r *rig) get(t testing.TB, path string) string {
	t.Helper()
	resp, err := http.Get(r.proxy.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.String()
}

// waitLogs waits for the proxy's log to hold substr: a request's line is
// written once its answer is sent, which a streaming client may not wait for.
func (r *rig) waitLogs(t testing.TB, substr string) string {
	t.Helper()
	return r.waitLogsN(t, substr, 1)
}

// waitLogsN waits for n occurrences of substr in the proxy's log.
func (r *rig) waitLogsN(t testing.TB, substr string, n int) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := r.logs.String()
		if strings.Count(s, substr) >= n || time.Now().After(deadline) {
			return s
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitMetrics waits for /metrics to hold substr (a request is counted once
// its answer is sent) and returns the page.
func (r *rig) waitMetrics(t testing.TB, substr string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := r.get(t, "/metrics")
		if strings.Contains(m, substr) || time.Now().After(deadline) {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
}
