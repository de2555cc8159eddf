package serve_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/llm"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// With an LLM summarizer configured, it writes the handoff, with its own
// key: the client's key never reaches it, and neither does a secret of the
// summarized middle.
func TestLLMSummarizerUsesItsOwnKey(t *testing.T) {
	const operatorKey = "sk-proj-Op3r4t0rK3yZx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A"
	var mu sync.Mutex
	var auth []string
	var bodies bytes.Buffer
	sum := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		bodies.Write(b)
		mu.Unlock()
		h := compact.Handoff{TaskSnapshot: "Fix the failing test in pkg/server.", Goal: "A green build.",
			CompletedActions: []string{"Read the handlers."}, ActiveState: []string{"Reading handler_40.go."}}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "model": "gpt-4o-mini",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]string{"role": "assistant", "content": h.Render()}}}})
	}))
	defer sum.Close()
	lc := llm.DefaultConfig(operatorKey)
	lc.BaseURL, lc.Retries, lc.Timeout = sum.URL+"/v1", 0, 10*time.Second
	summarizer, err := llm.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(c *serve.Config) { c.Compaction.Summarizer = summarizer })
	turns := conversation(60, 8)
	turns[12].text += "\nexport AWS_ACCESS_KEY_ID=" + awsKeyID + "\n"
	status, answer := r.post(t, apiPaths[servetest.Chat], request(servetest.Chat, gptModel, turns, false),
		map[string]string{"Authorization": "Bearer " + openAIKey})
	if status != 200 {
		t.Fatalf("status %d: %s", status, answer)
	}
	tr := readForwarded(t, servetest.Chat, r.up.Last().Body)
	if countHandoffs(tr) != 1 || !strings.Contains(r.waitLogs(t, `"compaction":"llm"`), `"compaction":"llm"`) {
		t.Fatalf("not compacted by the LLM: %s", r.logs.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 {
		t.Fatal("the summarizer was not called")
	}
	for _, a := range auth {
		if a != "Bearer "+operatorKey {
			t.Fatalf("the summarizer got Authorization %q, want the operator's key", a)
		}
	}
	for _, secret := range []string{openAIKey, awsKeyID} {
		if bytes.Contains(bodies.Bytes(), []byte(secret)) {
			t.Fatalf("the summarizer was sent %.12s…", secret)
		}
	}
	if !bytes.Contains(bodies.Bytes(), []byte("handler_")) {
		t.Fatal("the summarizer got none of the conversation")
	}
}
