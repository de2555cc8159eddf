package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

// fakeOpenAI is an OpenAI-compatible server speaking /v1/chat/completions
// over real HTTP. Each request runs the next scripted step; the last step
// repeats.
type fakeOpenAI struct {
	t     testing.TB
	mu    sync.Mutex
	steps []step
	calls int
	// prompts holds the user message of each request.
	prompts []string
	models  []string
	auth    []string
}

type step func(w http.ResponseWriter, r *http.Request)

func newFakeOpenAI(t testing.TB, steps ...step) (*fakeOpenAI, *httptest.Server) {
	f := &fakeOpenAI{t: t, steps: steps}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 {
		http.Error(w, `{"error":{"message":"bad request body","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	s := f.steps[min(f.calls, len(f.steps)-1)]
	f.calls++
	f.prompts = append(f.prompts, req.Messages[1].Content)
	f.models = append(f.models, req.Model)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	s(w, r)
}

func (f *fakeOpenAI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func completion(content, finish, refusal string) []byte {
	msg := map[string]any{"role": "assistant", "content": content}
	if refusal != "" {
		msg["refusal"] = refusal
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
	return b
}

var goodHandoff = compact.Handoff{
	TaskSnapshot:     "Fix the failing test in pkg/foo.",
	Goal:             "Make the pkg/foo tests pass.",
	CompletedActions: []string{"Ran the tests", "Found the bug in foo.go"},
	RelevantFiles:    []string{"pkg/foo/foo.go"},
}.Render()

func answer(content string) step { return answerWith(content, "stop", "") }

func answerWith(content, finish, refusal string) step {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(completion(content, finish, refusal))
	}
}

func status(code int, body string, headers ...string) step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// slow answers after d, or gives up when the client goes away.
func slow(d time.Duration) step {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
			answer(goodHandoff)(w, r)
		case <-r.Context().Done():
		}
	}
}

func malformed(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"chatcmpl-1","choices":[{"message":{"content":"## Task`)
}

const (
	serverError  = `{"error":{"message":"internal error","type":"server_error"}}`
	unauthorized = `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`
	noModel      = `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`
	badRequest   = `{"error":{"message":"Invalid value for messages","type":"invalid_request_error","code":null}}`
	rateLimited  = `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`
	noQuota      = `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`
)

func testConfig(srv *httptest.Server) Config {
	cfg := DefaultConfig("sk-test-key")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.Model = "fake-model"
	cfg.Timeout = time.Second
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, 5*time.Millisecond
	return cfg
}

func mustNew(t testing.TB, cfg Config) *Summarizer {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// window is an agent's work on one ask: n tool calls with outputs of
// about outBytes each.
func window(n, outBytes int) []compact.Message {
	text := func(role compact.Role, s string) compact.Message {
		return compact.Message{Role: role, Parts: []compact.Part{{Type: compact.PartText, Text: s}}}
	}
	msgs := []compact.Message{text(compact.RoleUser, "Fix the failing test in pkg/foo."), text(compact.RoleAssistant, "Looking.")}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartToolCall,
				ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: json.RawMessage(`{"cmd":"ls ` + id + `"}`)}}}},
			compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: []compact.Part{{Type: compact.PartText,
				Text: fmt.Sprintf("output %d\n", i) + strings.Repeat(fmt.Sprintf("line %d of a long output\n", i), outBytes/26)}}})
	}
	return msgs
}

func request(w []compact.Message) compact.SummaryRequest {
	return compact.SummaryRequest{Window: w, MaxTokens: 2000}
}

func TestScriptedResponses(t *testing.T) {
	incomplete := "## Task snapshot\n\nfix it\n\n## Goal\n\npass\n"
	tests := []struct {
		name         string
		steps        []step
		wantErr      string // "" for a handoff
		wantAttempts int
		minElapsed   time.Duration
	}{
		{"success", []step{answer(goodHandoff)}, "", 1, 0},
		{"fenced answer", []step{answer("```markdown\n" + goodHandoff + "```")}, "", 1, 0},
		{"429 with Retry-After", []step{status(429, rateLimited, "Retry-After", "1"), answer(goodHandoff)}, "", 2, time.Second},
		{"429 with retry-after-ms", []step{status(429, rateLimited, "Retry-After-Ms", "300"), answer(goodHandoff)}, "", 2, 300 * time.Millisecond},
		{"500s then success", []step{status(500, serverError), status(502, "<html>bad gateway</html>"), answer(goodHandoff)}, "", 3, 0},
		{"500s throughout", []step{status(500, serverError)}, "HTTP 500", 4, 0},
		{"slower than the timeout, then fast", []step{slow(10 * time.Second), answer(goodHandoff)}, "", 2, time.Second},
		{"always slower than the timeout", []step{slow(10 * time.Second)}, "call timeout", 4, 0},
		{"empty content, then success", []step{answer(""), answer(goodHandoff)}, "", 2, 0},
		{"empty content throughout", []step{answer("  \n")}, "empty", 4, 0},
		{"finish_reason length", []step{answerWith(goodHandoff[:200], "length", "")}, "length limit", 1, 0},
		{"malformed JSON, then success", []step{malformed, answer(goodHandoff)}, "", 2, 0},
		{"malformed JSON throughout", []step{malformed}, "malformed JSON", 4, 0},
		{"refusal field", []step{answerWith("", "stop", "I can't help with that.")}, "refused", 1, 0},
		{"refusal in content", []step{answer("I'm sorry, but I can't assist with that request.")}, "refused", 1, 0},
		{"content filter", []step{answerWith("", "content_filter", "")}, "content filter", 1, 0},
		{"missing sections throughout", []step{answer(incomplete)}, "missing sections", 4, 0},
		{"401 is fatal", []step{status(401, unauthorized)}, "HTTP 401", 1, 0},
		{"403 is fatal", []step{status(403, `{"error":{"message":"forbidden","type":"permission_error"}}`)}, "HTTP 403", 1, 0},
		{"unknown model is fatal", []step{status(404, noModel)}, "model_not_found", 1, 0},
		{"invalid request is fatal", []step{status(400, badRequest)}, "HTTP 400", 1, 0},
		{"exhausted quota is fatal", []step{status(429, noQuota)}, "insufficient_quota", 1, 0},
	}
	w := window(60, 600)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFakeOpenAI(t, tt.steps...)
			start := time.Now()
			sum, err := mustNew(t, testConfig(srv)).Summarize(context.Background(), request(w))
			elapsed := time.Since(start)
			// A call that times out may never reach a loaded server, so
			// the server may see fewer calls than were made.
			timing := strings.Contains(tt.name, "slower")
			if sum.Attempts != tt.wantAttempts || f.count() > tt.wantAttempts || !timing && f.count() != tt.wantAttempts {
				t.Fatalf("attempts: summary %d, server saw %d, want %d (err %v)", sum.Attempts, f.count(), tt.wantAttempts, err)
			}
			if elapsed < tt.minElapsed {
				t.Fatalf("finished in %s, before the %s the server asked for", elapsed, tt.minElapsed)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Model != "fake-model" || sum.Method != compact.MethodLLM || sum.Handoff.Goal != "Make the pkg/foo tests pass." {
				t.Fatalf("summary %+v", sum)
			}
			if f.auth[0] != "Bearer sk-test-key" || f.models[0] != "fake-model" {
				t.Fatalf("auth %q model %q", f.auth[0], f.models[0])
			}
		})
	}
}

func TestBadResponseIsTyped(t *testing.T) {
	_, srv := newFakeOpenAI(t, answer("## Task snapshot\n\nfix it\n"))
	cfg := testConfig(srv)
	cfg.Retries = 0
	_, err := mustNew(t, cfg).Summarize(context.Background(), request(window(3, 100)))
	if !errors.Is(err, ErrBadResponse) || !errors.Is(err, compact.ErrIncompleteHandoff) {
		t.Fatalf("err %v, want ErrBadResponse wrapping ErrIncompleteHandoff", err)
	}
}

func TestPrompt(t *testing.T) {
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	w := window(60, 600)
	earlier := compact.Handoff{TaskSnapshot: "earlier task: set up CI", CompletedActions: []string{"did it"}}.Message()
	w = append([]compact.Message{earlier}, w...)
	req := request(w)
	req.Focus = "the database migration"
	if _, err := mustNew(t, testConfig(srv)).Summarize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	p := f.prompts[0]
	for _, want := range []string{"<previous-summary>", "earlier task: set up CI", "Focus: pay special attention to the database migration",
		"<transcript>", "→ call bash", "tool result of bash", "all 11 headings"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(p, compact.HandoffBegin) {
		t.Error("prompt passes the previous handoff with its markers")
	}
	for _, s := range compact.HandoffSections {
		if !strings.Contains(systemPrompt, "## "+s+"\n") {
			t.Errorf("system prompt lacks heading %q", s)
		}
	}
}

func TestChunksLargeWindows(t *testing.T) {
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	cfg := testConfig(srv)
	cfg.ContextTokens = 4000 // chunks of 2000 tokens
	cfg.MaxInputTokens = 5000
	sum, err := mustNew(t, cfg).Summarize(context.Background(), request(window(60, 600)))
	if err != nil {
		t.Fatal(err)
	}
	if f.count() < 2 || sum.Attempts != f.count() {
		t.Fatalf("%d calls (summary %d), want several chunks", f.count(), sum.Attempts)
	}
	for i, p := range f.prompts {
		if !strings.Contains(p, "(part ") {
			t.Fatalf("prompt %d does not say which part it is", i)
		}
		if i > 0 && !strings.Contains(p, "<previous-summary>") {
			t.Fatalf("chunk %d does not carry the summary of the chunks before", i)
		}
	}
	if !strings.Contains(strings.Join(f.prompts, ""), "messages omitted to fit the summarizer's input") {
		t.Fatal("input beyond MaxInputTokens was not cut")
	}
}

func TestOverallTimeout(t *testing.T) {
	f, srv := newFakeOpenAI(t, slow(5*time.Second))
	cfg := testConfig(srv)
	cfg.Timeout = 400 * time.Millisecond
	cfg.TotalTimeout = 600 * time.Millisecond
	start := time.Now()
	_, err := mustNew(t, cfg).Summarize(context.Background(), request(window(60, 600)))
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s, the overall timeout is 600ms", d)
	}
	if n := f.count(); n < 1 || n > 2 || err == nil || !strings.Contains(err.Error(), "overall") {
		t.Fatalf("calls %d, err %v", f.count(), err)
	}
}

func TestRetryAfterBeyondTheDeadline(t *testing.T) {
	f, srv := newFakeOpenAI(t, status(429, rateLimited, "Retry-After", "3600"))
	start := time.Now()
	_, err := mustNew(t, testConfig(srv)).Summarize(context.Background(), request(window(60, 600)))
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("%v after %s", err, time.Since(start))
	}
	if f.count() != 1 || !strings.Contains(err.Error(), "overall timeout") {
		t.Fatalf("calls %d, err %v", f.count(), err)
	}
}

func TestCircuitBreaker(t *testing.T) {
	f, srv := newFakeOpenAI(t, status(500, serverError))
	cfg := testConfig(srv)
	cfg.BreakerFailures = 2
	cfg.BreakerCooldown = time.Hour
	s := mustNew(t, cfg)
	now := time.Now()
	s.now = func() time.Time { return now }
	req := request(window(60, 600))
	sum, err := s.Summarize(context.Background(), req)
	if !errors.Is(err, ErrCircuitOpen) || f.count() != 2 || sum.Attempts != 2 {
		t.Fatalf("first: %v calls %d %+v", err, f.count(), sum)
	}
	sum, err = s.Summarize(context.Background(), req)
	if !errors.Is(err, ErrCircuitOpen) || f.count() != 2 || sum.Attempts != 0 {
		t.Fatalf("while open: %v calls %d %+v", err, f.count(), sum)
	}
	// After the cooldown one probe goes through; it fails and reopens.
	now = now.Add(time.Hour + time.Second)
	sum, _ = s.Summarize(context.Background(), req)
	if f.count() != 3 || sum.Attempts != 1 {
		t.Fatalf("probe: calls %d, attempts %d", f.count(), sum.Attempts)
	}
	// A probe that succeeds closes the breaker.
	f.mu.Lock()
	f.steps = []step{answer(goodHandoff)}
	f.mu.Unlock()
	now = now.Add(2 * time.Hour)
	if _, err := s.Summarize(context.Background(), req); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

func TestNotifiesCallsAndRetries(t *testing.T) {
	_, srv := newFakeOpenAI(t, status(503, serverError, "Retry-After", "0"), answer(goodHandoff))
	var events []compact.SummaryEvent
	req := request(window(60, 600))
	req.Notify = func(e compact.SummaryEvent) { events = append(events, e) }
	if _, err := mustNew(t, testConfig(srv)).Summarize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%s:%d", e.Kind, e.Attempt))
	}
	if strings.Join(got, ",") != "call:1,retry:1,call:2" || events[1].Err == nil || !strings.Contains(events[1].Err.Error(), "HTTP 503") {
		t.Fatalf("events %v (%+v)", got, events)
	}
}

func TestClientSideRejectionIsFatal(t *testing.T) {
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	cfg := testConfig(srv)
	cfg.Model = "text-davinci-003" // a completions-only model go-openai refuses for chat
	sum, err := mustNew(t, cfg).Summarize(context.Background(), request(window(60, 600)))
	if err == nil || sum.Attempts != 1 || f.count() != 0 || !strings.Contains(err.Error(), "invalid request") {
		t.Fatalf("%v, calls %d, %+v", err, f.count(), sum)
	}
}

func TestNewRejectsValuesThatCannotWork(t *testing.T) {
	for name, change := range map[string]func(*Config){
		"negative retries":  func(c *Config) { c.Retries = -1 },
		"negative timeout":  func(c *Config) { c.Timeout = -time.Second },
		"negative output":   func(c *Config) { c.MaxOutputTokens = -5 },
		"azure without url": func(c *Config) { c.Azure = true; c.BaseURL = "" },
	} {
		cfg := DefaultConfig("k")
		change(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	s := mustNew(t, Config{})
	if c := s.Config(); c.Model != DefaultModel || c.MaxOutputTokens != defaultMaxOutputTokens || c.ContextTokens == 0 || c.Retries != 0 {
		t.Fatalf("zero config filled as %+v", c)
	}
}

// endless is an HTTP client whose every answer is a chat completion whose
// content never ends (up to size bytes), counting what the caller reads.
type endless struct {
	size int64
	read atomic.Int64
}

type countingBody struct {
	r    io.Reader
	read *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (countingBody) Close() error { return nil }

func (e *endless) Do(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	head := `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"## Task snapshot\n\n`
	body := io.MultiReader(strings.NewReader(head), io.LimitReader(repeatReader('a'), e.size), strings.NewReader(`"}}]}`))
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: countingBody{r: body, read: &e.read}, Request: req}, nil
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// An answer larger than the summary budget × a margin is a failed
// attempt, read no further than the bound: a hostile or broken server
// cannot make the summarizer hold its whole body.
func TestAnswerSizeIsBounded(t *testing.T) {
	e := &endless{size: 64 << 20}
	cfg := DefaultConfig("k")
	cfg.BaseURL, cfg.HTTPClient, cfg.Retries = "http://llm.invalid/v1", e, 2
	s := mustNew(t, cfg)
	sum, err := s.Summarize(context.Background(), request(window(3, 100)))
	limit := s.Config().MaxAnswerBytes
	if limit <= 0 || limit > 4<<20 {
		t.Fatalf("MaxAnswerBytes %d, want a positive bound of a few MB at most", limit)
	}
	if err == nil || !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v, want a bad response naming the size", err)
	}
	if sum.Attempts != 1 {
		t.Fatalf("%d attempts: an oversized answer is not retried", sum.Attempts)
	}
	if got := e.read.Load(); got > limit+64<<10 {
		t.Fatalf("read %d bytes of the answer, the bound is %d", got, limit)
	}
	// Through real HTTP too, with a body just over the bound.
	_, srv := newFakeOpenAI(t, answer(goodHandoff+"\n"+strings.Repeat("x", int(limit))))
	_, err = mustNew(t, testConfig(srv)).Summarize(context.Background(), request(window(3, 100)))
	if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("over HTTP: %v", err)
	}
	// A large answer within the bound is read whole.
	_, srv = newFakeOpenAI(t, answer(goodHandoff+"\n"+strings.Repeat("x", int(limit)/2)))
	if _, err := mustNew(t, testConfig(srv)).Summarize(context.Background(), request(window(3, 100))); err != nil {
		t.Fatalf("within the bound: %v", err)
	}
}

// A provider error that echoes the API key (whole, cut by the snippet, or
// a long piece of it) or a secret never reaches the returned error or an
// event: the key is masked as an exact value, and the rest goes through
// the redactor before it is cut short.
func TestProviderErrorsAreMasked(t *testing.T) {
	const key = "gw-7Hk2pQ9rT4vX8zL1mN6bC3dF5gJ0sA2e"
	const dbPassword = "S3cr3tPassw0rdQ7"
	pad := strings.Repeat("x", 183) // puts the key across the 200-byte snippet cut
	for name, body := range map[string]string{
		"whole key":   "Incorrect API key provided: " + key + ". You can find your API key at https://example.com.",
		"cut short":   pad + " " + key,
		"key piece":   "Incorrect API key provided: " + key[:20] + "****" + key[len(key)-4:],
		"a secret":    "cannot process the prompt: it holds postgres://admin:" + dbPassword + "@db.example.com/app",
		"in raw body": "<html>" + key + "</html>",
	} {
		t.Run(name, func(t *testing.T) {
			msg := body
			st := status(401, mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}}))
			if name == "in raw body" {
				st = status(503, body) // not JSON: go-openai keeps the raw body
			}
			_, srv := newFakeOpenAI(t, st)
			cfg := testConfig(srv)
			cfg.APIKey, cfg.Retries = key, 1
			var events []string
			req := request(window(3, 100))
			req.Notify = func(e compact.SummaryEvent) {
				if e.Err != nil {
					events = append(events, e.Err.Error())
				}
			}
			_, err := mustNew(t, cfg).Summarize(context.Background(), req)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range append(events, err.Error()) {
				if strings.Contains(s, dbPassword) || strings.Contains(s, key[:minKeyPiece]) || strings.Contains(s, key[len(key)-minKeyPiece:]) {
					t.Fatalf("leaked: %s", s)
				}
			}
			if name != "a secret" && !strings.Contains(err.Error(), "[REDACTED:api-") {
				t.Fatalf("no key mask in %q", err)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
