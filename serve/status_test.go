package serve_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact/serve/servetest"
)

// TestExpectContinueLoggedAs200 (QA-17): a client sending "Expect:
// 100-continue" gets 200 after the upstream's informational 100 Continue;
// the log line and /metrics say 200, not 100.
func TestExpectContinueLoggedAs200(t *testing.T) {
	r := newRig(t)
	body := request(servetest.Chat, gptModel, conversation(2, 200), false)
	req, _ := http.NewRequest(http.MethodPost, r.proxy.URL+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("client got %d", resp.StatusCode)
	}
	logs := r.waitLogs(t, `"msg":"request"`)
	if !strings.Contains(logs, `"status":200`) || strings.Contains(logs, `"status":100`) {
		t.Errorf("the log line does not say status 200:\n%s", logs)
	}
	m := r.waitMetrics(t, `code="2xx"`)
	if strings.Contains(m, `code="1xx"`) || !strings.Contains(m, `compact_serve_responses_total{code="2xx"} 1`) {
		t.Errorf("/metrics does not count one 2xx and no 1xx:\n%s", grepLines(m, "responses_total"))
	}
}
