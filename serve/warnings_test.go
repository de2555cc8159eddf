package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
	"github.com/compactkit/compact/llm"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// TestUnreachableUpstreamLogged (QA-8.5): a 502 for an upstream that cannot
// be reached says why in its log line, compacting path or not.
func TestUnreachableUpstreamLogged(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // nothing listens there now
	r := newRig(t, func(c *serve.Config) { c.OpenAIUpstream = dead.URL })
	body := request(servetest.Chat, gptModel, conversation(2, 5), false)
	for _, path := range []string{"/v1/chat/completions", "/v1/embeddings"} {
		if status, answer := r.post(t, path, body, nil); status != http.StatusBadGateway {
			t.Fatalf("%s: %d %s", path, status, answer)
		}
	}
	logs := r.waitLogsN(t, `"status":502`, 2)
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !strings.Contains(l, `"status":502`) {
			continue
		}
		if !strings.Contains(l, `"warning":"upstream: `) || !strings.Contains(l, "connection refused") {
			t.Errorf("a 502 line without its reason: %s", l)
		}
	}
}

// TestForcedRetryWarning (QA-8.5): when the upstream says the prompt is too
// long and the forced compaction changes nothing, the warning is about the
// retry, and the first compaction is still reported as done.
func TestForcedRetryWarning(t *testing.T) {
	r := newRig(t, func(c *serve.Config) { c.Compaction.Summarizer = &bloating{} })
	r.up.Script = func(a servetest.API, body []byte) servetest.Reply {
		return servetest.Reply{Status: 400, Text: tooLong[a]}
	}
	body := request(servetest.Chat, gptModel, conversation(40, 8), false)
	if status, _ := r.post(t, apiPaths[servetest.Chat], body, nil); status != 400 {
		t.Fatalf("status %d, want the upstream's 400", status)
	}
	logs := r.waitLogs(t, `"msg":"request"`)
	if !strings.Contains(logs, `"compaction":"fallback"`) || !strings.Contains(logs, `"warning":"the upstream said the prompt is too long and the forced retry changed nothing: ineffective`) {
		t.Errorf("want the first compaction reported and a warning about the forced retry:\n%s", logs)
	}
}

// bloating writes the fallback's handoff the first time, and after that
// one far longer than what it replaces, so a second compaction is
// ineffective.
type bloating struct{ calls int }

func (b *bloating) Summarize(ctx context.Context, req compact.SummaryRequest) (compact.Summary, error) {
	b.calls++
	h, err := fallback.Build(req.Window, fallback.Config{MaxTokens: req.MaxTokens, Count: req.Count, Redacted: req.Redacted})
	if b.calls > 1 {
		for i := range 2000 {
			h.CompletedActions = append(h.CompletedActions, fmt.Sprintf("step %d of a very long account of everything", i))
		}
	}
	return compact.Summary{Handoff: h, Method: compact.MethodFallback}, err
}

// TestLLMFailureLogged (QA-8.5): an LLM summarizer that hangs past its
// timeout, then has its circuit opened, leaves the fallback to write the
// handoff; each request's log line says why (fallback_cause, a warning)
// and /metrics counts the causes.
func TestLLMFailureLogged(t *testing.T) {
	release := make(chan struct{})
	sum := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer sum.Close()
	defer close(release)
	lc := llm.DefaultConfig("sk-test-operator")
	lc.BaseURL, lc.Retries, lc.Timeout = sum.URL+"/v1", 0, 200*time.Millisecond
	lc.BreakerFailures, lc.BreakerCooldown = 2, time.Minute
	summarizer, err := llm.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(c *serve.Config) { c.Compaction.Summarizer = summarizer })
	turns := conversation(60, 8)
	for k := range 3 {
		// A new conversation each time, so each one is compacted.
		h := map[string]string{serve.SessionHeader: "llm-down-" + string(rune('a'+k))}
		if status, answer := r.post(t, apiPaths[servetest.Chat], request(servetest.Chat, gptModel, turns, false), h); status != 200 {
			t.Fatalf("request %d: %d %s", k, status, answer)
		}
		if !bytes.Contains(r.up.Last().Body, []byte("<<<compact:handoff>>>")) {
			t.Fatalf("request %d not compacted", k)
		}
	}
	logs := r.waitLogsN(t, `"msg":"request"`, 3)
	if n := strings.Count(logs, `"fallback_cause":"timeout"`); n != 2 {
		t.Errorf("%d lines say fallback_cause timeout, want 2:\n%s", n, logs)
	}
	if n := strings.Count(logs, `"fallback_cause":"circuit-open"`); n != 1 {
		t.Errorf("%d lines say fallback_cause circuit-open, want 1:\n%s", n, logs)
	}
	if n := strings.Count(logs, `"level":"WARN","msg":"request"`); n != 3 {
		t.Errorf("%d of 3 lines are warnings:\n%s", n, logs)
	}
	m := r.waitMetrics(t, `compact_serve_summary_fallbacks_total{cause="timeout"} 2`)
	for _, want := range []string{`compact_serve_summary_fallbacks_total{cause="timeout"} 2`, `compact_serve_summary_fallbacks_total{cause="circuit-open"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(m, "fallbacks"))
		}
	}
}
