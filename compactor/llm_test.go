package compactor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

func llmConfig(srv *httptest.Server) Config {
	cfg := testConfig()
	cfg.Strategy = StrategyLLM
	cfg.LLM = LLMConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key", Model: "fake-model",
		Timeout: time.Second, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond}
	return cfg
}

func TestLLMScriptedResponses(t *testing.T) {
	incomplete := "## Task snapshot\n\nfix it\n\n## Goal\n\npass\n"
	tests := []struct {
		name         string
		steps        []step
		wantMethod   compact.Method
		wantAttempts int
		wantReason   string
		minElapsed   time.Duration
	}{
		{"success", []step{answer(goodHandoff)}, compact.MethodLLM, 1, "", 0},
		{"fenced answer", []step{answer("```markdown\n" + goodHandoff + "```")}, compact.MethodLLM, 1, "", 0},
		{"429 with Retry-After", []step{status(429, rateLimited, "Retry-After", "1"), answer(goodHandoff)}, compact.MethodLLM, 2, "", time.Second},
		{"429 with retry-after-ms", []step{status(429, rateLimited, "Retry-After-Ms", "300"), answer(goodHandoff)}, compact.MethodLLM, 2, "", 300 * time.Millisecond},
		{"500s then success", []step{status(500, serverError), status(502, "<html>bad gateway</html>"), answer(goodHandoff)}, compact.MethodLLM, 3, "", 0},
		{"500s throughout", []step{status(500, serverError)}, compact.MethodFallback, 4, "HTTP 500", 0},
		{"slower than the timeout, then fast", []step{slow(10 * time.Second), answer(goodHandoff)}, compact.MethodLLM, 2, "", time.Second},
		{"always slower than the timeout", []step{slow(10 * time.Second)}, compact.MethodFallback, 4, "call timeout", 0},
		{"empty content, then success", []step{answer(""), answer(goodHandoff)}, compact.MethodLLM, 2, "", 0},
		{"empty content throughout", []step{answer("  \n")}, compact.MethodFallback, 4, "empty", 0},
		{"finish_reason length", []step{answerWith(goodHandoff[:200], "length", "")}, compact.MethodFallback, 1, "length limit", 0},
		{"malformed JSON, then success", []step{malformed, answer(goodHandoff)}, compact.MethodLLM, 2, "", 0},
		{"malformed JSON throughout", []step{malformed}, compact.MethodFallback, 4, "malformed JSON", 0},
		{"refusal field", []step{answerWith("", "stop", "I can't help with that.")}, compact.MethodFallback, 1, "refused", 0},
		{"refusal in content", []step{answer("I'm sorry, but I can't assist with that request.")}, compact.MethodFallback, 1, "refused", 0},
		{"content filter", []step{answerWith("", "content_filter", "")}, compact.MethodFallback, 1, "content filter", 0},
		{"missing sections throughout", []step{answer(incomplete)}, compact.MethodFallback, 4, "missing sections", 0},
		{"401 is fatal", []step{status(401, unauthorized)}, compact.MethodFallback, 1, "HTTP 401", 0},
		{"403 is fatal", []step{status(403, `{"error":{"message":"forbidden","type":"permission_error"}}`)}, compact.MethodFallback, 1, "HTTP 403", 0},
		{"unknown model is fatal", []step{status(404, noModel)}, compact.MethodFallback, 1, "model_not_found", 0},
		{"invalid request is fatal", []step{status(400, badRequest)}, compact.MethodFallback, 1, "HTTP 400", 0},
		{"exhausted quota is fatal", []step{status(429, noQuota)}, compact.MethodFallback, 1, "insufficient_quota", 0},
	}
	in := agentRun(60, 600)
	for _, tt := range tests {
		for _, abort := range []bool{false, true} {
			name := tt.name
			if abort {
				name += "/abort"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f, srv := newFakeOpenAI(t, tt.steps...)
				cfg := llmConfig(srv)
				cfg.AbortOnSummaryFailure = abort
				start := time.Now()
				res, err := mustNew(t, cfg).Compact(context.Background(), in)
				elapsed := time.Since(start)
				// A call that times out may never reach a loaded server, so
				// the server may see fewer calls than were made.
				timing := strings.Contains(tt.name, "slower")
				if res.Record.LLMAttempts != tt.wantAttempts || f.count() > tt.wantAttempts || !timing && f.count() != tt.wantAttempts {
					t.Fatalf("attempts: record %d, server saw %d, want %d (err %v, reason %q)",
						res.Record.LLMAttempts, f.count(), tt.wantAttempts, err, res.Record.Reason)
				}
				if elapsed < tt.minElapsed {
					t.Fatalf("finished in %s, before the %s the server asked for", elapsed, tt.minElapsed)
				}
				if abort && tt.wantMethod != compact.MethodLLM {
					if !errors.Is(err, ErrSummaryFailed) || res.Changed() || res.Transcript.Hash() != in.Hash() {
						t.Fatalf("abort: err %v, changed %v", err, res.Changed())
					}
					if !strings.Contains(err.Error(), tt.wantReason) {
						t.Fatalf("error %q, want it to mention %q", err, tt.wantReason)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.Record.Method != tt.wantMethod || !strings.Contains(res.Record.Reason, tt.wantReason) {
					t.Fatalf("method %s reason %q, want %s mentioning %q", res.Record.Method, res.Record.Reason, tt.wantMethod, tt.wantReason)
				}
				checkInvariants(t, in, res)
				if tt.wantMethod == compact.MethodLLM {
					if res.Record.Model != "fake-model" || res.Handoff.Goal != "Make the pkg/foo tests pass." {
						t.Fatalf("model %q, handoff %+v", res.Record.Model, res.Handoff)
					}
				}
				if f.count() > 0 && (f.auth[0] != "Bearer sk-test-key" || f.models[0] != "fake-model") {
					t.Fatalf("auth %q model %q", f.auth[0], f.models[0])
				}
			})
		}
	}
}

func TestLLMPrompt(t *testing.T) {
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	cfg := llmConfig(srv)
	cfg.Focus = "the database migration"
	in := agentRun(60, 600)
	in.Messages = append(in.Messages[:3:3], append([]compact.Message{handoffMsg("earlier task: set up CI")}, in.Messages[3:]...)...)
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodLLM {
		t.Fatalf("%v %+v", err, res.Record)
	}
	checkInvariants(t, in, res)
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

func TestLLMChunksLargeWindows(t *testing.T) {
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	cfg := llmConfig(srv)
	cfg.LLM.ContextTokens = 4000 // chunks of 2000 tokens
	cfg.LLM.MaxInputTokens = 5000
	in := agentRun(60, 600)
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodLLM {
		t.Fatalf("%v %+v", err, res.Record)
	}
	if f.count() < 2 || res.Record.LLMAttempts != f.count() {
		t.Fatalf("%d calls (record %d), want several chunks", f.count(), res.Record.LLMAttempts)
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

func TestLLMOverallTimeout(t *testing.T) {
	f, srv := newFakeOpenAI(t, slow(5*time.Second))
	cfg := llmConfig(srv)
	cfg.LLM.Timeout = 400 * time.Millisecond
	cfg.LLM.TotalTimeout = 600 * time.Millisecond
	start := time.Now()
	res, err := mustNew(t, cfg).Compact(context.Background(), agentRun(60, 600))
	if err != nil || res.Record.Method != compact.MethodFallback {
		t.Fatalf("%v %+v", err, res.Record)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s, the overall timeout is 600ms", d)
	}
	if n := f.count(); n < 1 || n > 2 || !strings.Contains(res.Record.Reason, "overall") {
		t.Fatalf("calls %d, reason %q", f.count(), res.Record.Reason)
	}
}

func TestLLMRetryAfterBeyondTheDeadline(t *testing.T) {
	f, srv := newFakeOpenAI(t, status(429, rateLimited, "Retry-After", "3600"))
	cfg := llmConfig(srv)
	start := time.Now()
	res, err := mustNew(t, cfg).Compact(context.Background(), agentRun(60, 600))
	if err != nil || res.Record.Method != compact.MethodFallback || time.Since(start) > 2*time.Second {
		t.Fatalf("%v %+v after %s", err, res.Record, time.Since(start))
	}
	if f.count() != 1 || !strings.Contains(res.Record.Reason, "overall timeout") {
		t.Fatalf("calls %d, reason %q", f.count(), res.Record.Reason)
	}
}

func TestCircuitBreaker(t *testing.T) {
	f, srv := newFakeOpenAI(t, status(500, serverError))
	cfg := llmConfig(srv)
	cfg.LLM.BreakerFailures = 2
	cfg.LLM.BreakerCooldown = time.Hour
	c := mustNew(t, cfg)
	llm := c.primary.(*LLM)
	now := time.Now()
	llm.now = func() time.Time { return now }
	in := agentRun(60, 600)
	res, err := c.Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodFallback || f.count() != 2 {
		t.Fatalf("first: %v calls %d %+v", err, f.count(), res.Record)
	}
	if !strings.Contains(res.Record.Reason, "circuit breaker open") {
		t.Fatalf("reason %q", res.Record.Reason)
	}
	res, err = c.Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodFallback || f.count() != 2 || res.Record.LLMAttempts != 0 {
		t.Fatalf("while open: %v calls %d %+v", err, f.count(), res.Record)
	}
	// After the cooldown one probe goes through; it fails and reopens.
	now = now.Add(time.Hour + time.Second)
	res, _ = c.Compact(context.Background(), in)
	if f.count() != 3 || res.Record.LLMAttempts != 1 {
		t.Fatalf("probe: calls %d, attempts %d", f.count(), res.Record.LLMAttempts)
	}
	// A probe that succeeds closes the breaker.
	f.mu.Lock()
	f.steps = []step{answer(goodHandoff)}
	f.mu.Unlock()
	now = now.Add(2 * time.Hour)
	res, err = c.Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodLLM {
		t.Fatalf("after recovery: %v %+v", err, res.Record)
	}
}

func TestLLMEventsAndLogs(t *testing.T) {
	_, srv := newFakeOpenAI(t, status(503, serverError, "Retry-After", "0"), status(401, unauthorized))
	cfg := llmConfig(srv)
	var kinds []EventKind
	var logs strings.Builder
	cfg.Observer = func(e Event) { kinds = append(kinds, e.Kind) }
	cfg.Logger = newTextLogger(&logs)
	if _, err := mustNew(t, cfg).Compact(context.Background(), agentRun(60, 600)); err != nil {
		t.Fatal(err)
	}
	want := []EventKind{EventPlanned, EventPruned, EventSummarizing, EventRetry, EventSummarizing, EventFallback, EventSummarizing, EventDone}
	if strings.Join(kindStrings(kinds), ",") != strings.Join(kindStrings(want), ",") {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for _, w := range []string{"event=planned", "event=retry", "attempt=1", "level=WARN", "event=fallback", "HTTP 401", "method=fallback", "duration="} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("logs lack %q:\n%s", w, logs.String())
		}
	}
}

func kindStrings(k []EventKind) []string {
	s := make([]string, len(k))
	for i := range k {
		s[i] = string(k[i])
	}
	return s
}

func TestSecretsNeverSentOrLogged(t *testing.T) {
	const secret = "hunter2-Secret-Token-0123456789"
	in := agentRun(60, 600)
	in.Messages[20] = result(in.Messages[20].ToolCallIDs[0], "password: "+secret)
	// The server echoes what it got in its error, as some providers do, and
	// (as no honest one would) the secret itself.
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	f.steps = []step{func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		p := f.prompts[len(f.prompts)-1]
		f.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "cannot process " + secret + ": " + p[:min(len(p), 5000)], "type": "invalid_request_error"}})
		status(400, string(b))(w, r)
	}}
	for _, abort := range []bool{false, true} {
		var logs strings.Builder
		cfg := llmConfig(srv)
		cfg.Redactor = newTestRedactor(t, secret)
		cfg.Logger = newTextLogger(&logs)
		cfg.AbortOnSummaryFailure = abort
		res, err := mustNew(t, cfg).Compact(context.Background(), in)
		for i, p := range f.prompts {
			if strings.Contains(p, secret) {
				t.Fatalf("prompt %d holds the secret", i)
			}
		}
		if err != nil && strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) ||
			strings.Contains(res.Record.Reason, secret) {
			t.Fatal("secret in an error, a log line or the record")
		}
	}
}

func TestLLMClientSideRejectionIsFatal(t *testing.T) {
	f, srv := newFakeOpenAI(t, answer(goodHandoff))
	cfg := llmConfig(srv)
	cfg.LLM.Model = "text-davinci-003" // a completions-only model go-openai refuses for chat
	res, err := mustNew(t, cfg).Compact(context.Background(), agentRun(60, 600))
	if err != nil || res.Record.Method != compact.MethodFallback || res.Record.LLMAttempts != 1 || f.count() != 0 ||
		!strings.Contains(res.Record.Reason, "invalid request") {
		t.Fatalf("%v, calls %d, %+v", err, f.count(), res.Record)
	}
}
