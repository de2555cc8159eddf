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
	"github.com/compactkit/compact/llm"
)

// fakeProvider is an OpenAI-compatible server: each request gets the next
// scripted answer (the last repeats); it records the prompts it was sent.
type fakeProvider struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, prompt string)
	prompts []string
}

func newFakeProvider(t *testing.T, answers ...func(w http.ResponseWriter, prompt string)) (*fakeProvider, *httptest.Server) {
	f := &fakeProvider{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.Unmarshal(body, &req)
		prompt := ""
		for _, m := range req.Messages {
			prompt += m.Content + "\n"
		}
		f.mu.Lock()
		a := f.answers[min(len(f.prompts), len(f.answers)-1)]
		f.prompts = append(f.prompts, prompt)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		a(w, prompt)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func answerHandoff(h compact.Handoff) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, _ string) {
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": h.Render()}}}})
		w.Write(b)
	}
}

func failWith(status int, message string, headers ...string) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, _ string) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "server_error"}})
		w.Write(b)
	}
}

func llmSummarizer(t *testing.T, srv *httptest.Server, retries int) *llm.Summarizer {
	t.Helper()
	cfg := llm.DefaultConfig("sk-test-key")
	cfg.BaseURL, cfg.Model, cfg.Retries = srv.URL+"/v1", "fake-model", retries
	cfg.Timeout, cfg.BackoffBase, cfg.BackoffMax = 5*time.Second, time.Millisecond, 5*time.Millisecond
	s, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var taskHandoff = compact.Handoff{TaskSnapshot: "Fix the failing test in pkg/foo.", Goal: "Make the pkg/foo tests pass."}

func TestLLMHandoff(t *testing.T) {
	_, srv := newFakeProvider(t, answerHandoff(taskHandoff))
	cfg := testConfig()
	cfg.Strategy, cfg.Summarizer = StrategyAuto, llmSummarizer(t, srv, 0)
	in := agentRun(60, 600)
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodLLM || res.Record.Model != "fake-model" || res.Record.LLMAttempts != 1 ||
		res.Fallback != "" || res.SummaryErr != nil || res.Handoff.Goal != taskHandoff.Goal {
		t.Fatalf("%v %+v fallback %q", err, res.Record, res.Fallback)
	}
	checkInvariants(t, in, res)
}

func TestLLMFailureFallsBackOrAborts(t *testing.T) {
	f, srv := newFakeProvider(t, failWith(500, "internal error"))
	in := agentRun(60, 600)
	cfg := testConfig()
	cfg.Strategy, cfg.Summarizer = StrategyLLM, llmSummarizer(t, srv, 1)
	res, err := mustNew(t, cfg).Compact(context.Background(), in)
	if err != nil || res.Record.Method != compact.MethodFallback || res.Record.LLMAttempts != 2 || len(f.prompts) != 2 ||
		!strings.Contains(res.Record.Reason, "HTTP 500") {
		t.Fatalf("%v %+v", err, res.Record)
	}
	if res.Fallback != FallbackSummaryFailed || !errors.Is(res.SummaryErr, ErrSummaryFailed) || !strings.Contains(res.SummaryErr.Error(), "HTTP 500") {
		t.Fatalf("fallback %q, summary error %v", res.Fallback, res.SummaryErr)
	}
	checkInvariants(t, in, res)

	cfg.AbortOnSummaryFailure = true
	res, err = mustNew(t, cfg).Compact(context.Background(), in)
	if !errors.Is(err, ErrSummaryFailed) || res.Changed() || res.Transcript.Hash() != in.Hash() || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("abort: %v, changed %v", err, res.Changed())
	}
}

func TestFallbackCause(t *testing.T) {
	in := agentRun(60, 600)
	for _, tt := range []struct {
		strategy   Strategy
		summarizer compact.Summarizer
		want       FallbackCause
	}{
		{StrategyAuto, nil, FallbackNoSummarizer},
		{StrategyFallback, echoing{}, ""},
		{StrategyLLM, failing{errors.New("down")}, FallbackSummaryFailed},
		{StrategyLLM, splitting{"k3y-part-one", "part-two-k3y"}, FallbackInvalidHandoff},
		{StrategyAuto, echoing{}, ""},
	} {
		cfg := testConfig()
		cfg.Strategy, cfg.Summarizer = tt.strategy, tt.summarizer
		cfg.Redactor = newTestRedactor(t, "k3y-part-one\n- part-two-k3y")
		in := in
		if tt.want == FallbackInvalidHandoff {
			in = agentRun(60, 600)
			in.Messages[20] = result(in.Messages[20].ToolCallIDs[0], "config:\nk3y-part-one\n- part-two-k3y\n")
		}
		res, err := mustNew(t, cfg).Compact(context.Background(), in)
		if err != nil || res.Fallback != tt.want || (tt.want == FallbackSummaryFailed || tt.want == FallbackInvalidHandoff) != (res.SummaryErr != nil) {
			t.Errorf("%s with %T: err %v, fallback %q, summary error %v", tt.strategy, tt.summarizer, err, res.Fallback, res.SummaryErr)
		}
	}
}

func TestLLMEventsAndLogs(t *testing.T) {
	_, srv := newFakeProvider(t, failWith(503, "overloaded", "Retry-After", "0"), failWith(401, "Incorrect API key provided"))
	cfg := testConfig()
	cfg.Strategy, cfg.Summarizer = StrategyLLM, llmSummarizer(t, srv, 3)
	var kinds []string
	var logs strings.Builder
	cfg.Observer = func(e Event) { kinds = append(kinds, string(e.Kind)) }
	cfg.Logger = newTextLogger(&logs)
	if _, err := mustNew(t, cfg).Compact(context.Background(), agentRun(60, 600)); err != nil {
		t.Fatal(err)
	}
	want := []EventKind{EventPlanned, EventPruned, EventSummarizing, EventRetry, EventSummarizing, EventFallback, EventSummarizing, EventDone}
	var ws []string
	for _, k := range want {
		ws = append(ws, string(k))
	}
	if strings.Join(kinds, ",") != strings.Join(ws, ",") {
		t.Fatalf("events %v, want %v", kinds, ws)
	}
	for _, w := range []string{"event=planned", "event=retry", "attempt=1", "level=WARN", "event=fallback", "HTTP 401", "method=fallback", "duration="} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("logs lack %q:\n%s", w, logs.String())
		}
	}
}

func TestSecretsNeverSentOrLogged(t *testing.T) {
	const secret = "hunter2-Secret-Token-0123456789"
	in := agentRun(60, 600)
	in.Messages[20] = result(in.Messages[20].ToolCallIDs[0], "password: "+secret)
	// The server echoes what it got in its error, as some providers do, and
	// (as no honest one would) the secret itself.
	f, srv := newFakeProvider(t, func(w http.ResponseWriter, prompt string) {
		failWith(400, "cannot process "+secret+": "+prompt[:min(len(prompt), 5000)])(w, prompt)
	})
	for _, abort := range []bool{false, true} {
		var logs strings.Builder
		cfg := testConfig()
		cfg.Strategy, cfg.Summarizer = StrategyLLM, llmSummarizer(t, srv, 0)
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
			strings.Contains(res.Record.Reason, secret) || res.SummaryErr != nil && strings.Contains(res.SummaryErr.Error(), secret) {
			t.Fatal("secret in an error, a log line or the record")
		}
	}
}
