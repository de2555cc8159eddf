package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// tooLong is each API's answer to a prompt over the model's context, as
// the providers word it.
var tooLong = map[servetest.API]string{
	servetest.Chat:      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
	servetest.Responses: "Your input exceeds the context window of this model. Please adjust your input and try again.",
	servetest.Messages:  "prompt is too long: 210000 tokens > 200000 maximum",
}

// An upstream that says the prompt is too long gets the request once
// more, compacted by force; the client sees only the second answer.
func TestOverflowRetriedWithForcedCompaction(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			// The proxy thinks the window is large; the upstream's is smaller.
			r := newRig(t, func(c *serve.Config) { c.Compaction.Window = 1_000_000 })
			r.up.Script = func(a servetest.API, body []byte) servetest.Reply {
				if !bytes.Contains(body, []byte("<<<compact:handoff>>>")) {
					return servetest.Reply{Status: 400, Text: tooLong[a]}
				}
				return servetest.Reply{Text: "fits now"}
			}
			body := request(api, modelFor(api), conversation(40, 8), false)
			status, answer := r.post(t, apiPaths[api], body, nil)
			if status != 200 || !bytes.Contains(answer, []byte("fits now")) {
				t.Fatalf("status %d: %s", status, answer)
			}
			reqs := r.up.Requests()
			if len(reqs) != 2 || !bytes.Equal(reqs[0].Body, body) {
				t.Fatalf("%d upstream requests; the first must be the client's body", len(reqs))
			}
			checkCompacted(t, api, body, reqs[1].Body)
			logs := r.waitLogs(t, "overflow_retry")
			if !strings.Contains(logs, `"overflow_retry":true`) || !strings.Contains(r.get(t, "/metrics"), "compact_serve_overflow_retries_total 1") {
				t.Fatalf("retry not reported: %s", logs)
			}
		})
	}
}

// Other errors go back to the client untouched, and are not retried.
func TestUpstreamErrorsPassedThrough(t *testing.T) {
	r := newRig(t)
	r.up.Script = func(servetest.API, []byte) servetest.Reply {
		return servetest.Reply{Status: 429, Text: "rate limited: retry after 20s"}
	}
	body := request(servetest.Chat, gptModel, conversation(3, 3), false)
	status, answer := r.post(t, apiPaths[servetest.Chat], body, nil)
	if status != 429 || !bytes.Equal(answer, r.up.Last().Response) {
		t.Fatalf("status %d: %s", status, answer)
	}
	if n := len(r.up.Requests()); n != 1 {
		t.Fatalf("%d upstream requests, want 1 (no retry)", n)
	}
	// An unreachable upstream is a 502 in the APIs' error shape.
	dead := newRig(t, func(c *serve.Config) { c.OpenAIUpstream = "http://127.0.0.1:1" })
	status, answer = dead.post(t, apiPaths[servetest.Chat], body, nil)
	if status != http.StatusBadGateway || !strings.Contains(string(answer), `"error"`) {
		t.Fatalf("dead upstream: %d %s", status, answer)
	}
}

// Whatever goes wrong in compaction, the request goes out as it came, and
// the log line says why.
func TestCompactionFailureForwardsOriginal(t *testing.T) {
	for name, opt := range map[string]rigOption{
		"summarizer fails, abort": func(c *serve.Config) {
			c.Compaction.Summarizer = &counting{fail: true}
			c.Compaction.AbortOnSummaryFailure = true
		},
		"cancelled summarizer": func(c *serve.Config) { c.Compaction.Summarizer = blocking{} },
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, opt)
			body := request(servetest.Chat, gptModel, conversation(60, 8), false)
			if name == "cancelled summarizer" {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.proxy.URL+apiPaths[servetest.Chat], bytes.NewReader(body))
				http.DefaultClient.Do(req)
				if logs := r.waitLogs(t, "warning"); !strings.Contains(logs, "compaction failed, forwarded as is") {
					t.Fatalf("no warning: %s", logs)
				}
				return
			}
			status, answer := r.post(t, apiPaths[servetest.Chat], body, nil)
			if status != 200 {
				t.Fatalf("status %d: %s", status, answer)
			}
			if !bytes.Equal(r.up.Last().Body, body) {
				t.Fatal("a failed compaction changed the body")
			}
			logs := r.waitLogs(t, "warning")
			if !strings.Contains(logs, `"level":"WARN"`) || !strings.Contains(logs, "forwarded as is") {
				t.Fatalf("no warning: %s", logs)
			}
			if strings.Contains(logs, "handler_") {
				t.Fatal("the warning quotes the conversation")
			}
		})
	}
	// A body the readers do not understand is forwarded as is.
	r := newRig(t)
	for _, body := range []string{`{"model":"tiny-gpt","messages":"not a list"}`, `{"model": tiny}`, `[1,2,3]`} {
		status, _ := r.post(t, apiPaths[servetest.Chat], []byte(body), nil)
		if status != 200 || string(r.up.Last().Body) != body {
			t.Fatalf("%s: status %d, forwarded %q", body, status, r.up.Last().Body)
		}
	}
	if !strings.Contains(r.waitMetrics(t, "compact_serve_warnings_total 3"), "compact_serve_warnings_total 3") {
		t.Fatal("warnings not counted")
	}
}

// blocking is a summarizer that waits for its context to end.
type blocking struct{}

func (blocking) Summarize(ctx context.Context, _ compact.SummaryRequest) (compact.Summary, error) {
	<-ctx.Done()
	return compact.Summary{}, ctx.Err()
}

// Streamed answers reach the client as the upstream sends them, not when
// it is done: the upstream sends one event and waits until the client has
// it before sending the rest, which a buffering proxy would never let
// happen.
func TestStreamNotBuffered(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			got := make(chan struct{})
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: first\ndata: {\"n\":1}\n\n")
				http.NewResponseController(w).Flush()
				select {
				case <-got:
				case <-time.After(10 * time.Second):
					return // the client never saw the first event
				}
				io.WriteString(w, "event: last\ndata: {\"n\":2}\n\n")
			}))
			defer up.Close()
			r := newRig(t, func(c *serve.Config) { c.OpenAIUpstream, c.AnthropicUpstream = up.URL, up.URL })
			body := request(api, modelFor(api), conversation(60, 8), true) // compacted on the way
			resp, err := http.Post(r.proxy.URL+apiPaths[api], "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "event: first\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			close(got)
			rest, _ := io.ReadAll(br)
			if !strings.Contains(string(rest), "event: last") {
				t.Fatalf("the rest of the stream is missing: %q", rest)
			}
			if resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}

// Paths the proxy does not compact go to the right upstream as they are.
func TestPassThrough(t *testing.T) {
	r := newRig(t)
	resp, err := http.Get(r.proxy.URL + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %v %v", resp, err)
	}
	resp.Body.Close()
	body := []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`)
	status, answer := r.post(t, "/v1/messages/count_tokens", body, map[string]string{"anthropic-version": "2023-06-01"})
	if status != 200 || !strings.Contains(string(answer), "input_tokens") || !bytes.Equal(r.up.Last().Body, body) {
		t.Fatalf("count_tokens: %d %s", status, answer)
	}
	if r.up.Last().Path != "/v1/messages/count_tokens" {
		t.Fatalf("path %q", r.up.Last().Path)
	}
	// GET on a compacting path is passed through, not read.
	resp, err = http.Get(r.proxy.URL + "/v1/responses")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r.up.Last().Path != "/v1/responses" {
		t.Fatal("GET /v1/responses not passed through")
	}
	h := r.get(t, "/healthz")
	if !strings.Contains(h, `"ok"`) {
		t.Fatalf("healthz: %s", h)
	}
	m := r.get(t, "/metrics")
	for _, series := range []string{"compact_serve_requests_total{api=\"passthrough\"", "compact_serve_added_latency_seconds_bucket", "compact_serve_prefix_stability", "compact_serve_in_flight"} {
		if !strings.Contains(m, series) {
			t.Fatalf("metrics lack %s:\n%s", series, m)
		}
	}
}

// A restarted proxy sharing the store forwards the next request of a
// conversation with the stored prefix: same bytes, no summarizer call.
func TestPrefixSurvivesRestart(t *testing.T) {
	for _, api := range allAPIs {
		t.Run(string(api), func(t *testing.T) {
			dir := t.TempDir()
			open := func() checkpoint.Store { return openFileStore(t, dir) }
			turns := conversation(70, 8)
			a := newRig(t, func(c *serve.Config) { c.Store = open() })
			a.post(t, apiPaths[api], request(api, modelFor(api), turns[:120], false), nil)
			first := a.up.Last().Body
			b := newRig(t, func(c *serve.Config) { c.Store = open() })
			b.post(t, apiPaths[api], request(api, modelFor(api), turns[:122], false), nil)
			second := b.up.Last().Body
			if b.summary.calls.Load() != 0 {
				t.Fatal("the restarted proxy compacted again")
			}
			out1, _ := split(t, api, first)
			out2, _ := split(t, api, second)
			for i := range out1[:len(out1)-1] { // the last element carries the moving breakpoint
				if !bytes.Equal(normalize(api, out1[i]), normalize(api, out2[i])) {
					t.Fatalf("prefix element %d differs after the restart", i)
				}
			}
			if countHandoffs(readForwarded(t, api, second)) != 1 {
				t.Fatal("not forwarded with the stored prefix")
			}
		})
	}
}

// Paths that end like an API's are that API (Azure OpenAI deployments,
// gateways); OpenAI's Assistants messages are not Anthropic's.
func TestAPIByPathSuffix(t *testing.T) {
	r := newRig(t)
	body := request(servetest.Chat, gptModel, conversation(60, 8), false)
	r.post(t, "/openai/deployments/tiny/chat/completions", body, nil)
	if last := r.up.Last(); last.Path != "/openai/deployments/tiny/chat/completions" || !bytes.Contains(last.Body, []byte("<<<compact:handoff>>>")) {
		t.Fatalf("a deployment path was not compacted and forwarded as is: %s", last.Path)
	}
	thread := []byte(`{"role":"user","content":"hello"}`)
	r.post(t, "/v1/threads/thread_1/messages", thread, nil)
	if last := r.up.Last(); last.Path != "/v1/threads/thread_1/messages" || !bytes.Equal(last.Body, thread) {
		t.Fatalf("an Assistants message went astray: %s %s", last.Path, last.Body)
	}
	if !strings.Contains(r.waitLogs(t, `"api":"passthrough"`), `"path":"/v1/threads/thread_1/messages"`) {
		t.Fatal("the Assistants request was not passed through")
	}
	// A body in an encoding the proxy does not decode (gzip it does) goes
	// out as is, with a warning.
	r.post(t, apiPaths[servetest.Chat], []byte("\xce\xb2..."), map[string]string{"Content-Encoding": "br"})
	if !bytes.Equal(r.up.Last().Body, []byte("\xce\xb2...")) || !strings.Contains(r.waitLogs(t, "br-encoded"), "br-encoded") {
		t.Fatal("a compressed body was not forwarded as is with a warning")
	}
}
