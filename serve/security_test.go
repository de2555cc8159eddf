package serve_test

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// Secrets a test plants: the clients' API keys (headers) and credentials
// that tool outputs printed in the middle of the conversation.
const (
	openAIKey    = "sk-proj-Q7mZ2xK9vL3pT8nW4rY6bC1dF5gH0jA2sE7uI9oP3kM6qN8zX"
	anthropicKey = "sk-ant-api03-Q7mZ2xK9vL3pT8nW4rY6bC1dF5gH0jA2sE7uI9oP3kM6qN8zXQ7mZ2xK9vL3pT8nW4rY6bC1dF5gH0jA2sE7uI9oP3kM6-AAAAAAA"
	awsKeyID     = "AKIAZ3MHQ7XJ2PLW5TKD"
	middleToken  = "OPENAI_API_KEY=sk-proj-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6Zz5Yy4Xx3Ww"
)

// Clients' keys reach the upstream and nothing else: not the log, not
// the store. Secrets in the summarized middle reach neither the handoff
// nor the store.
func TestKeysNeverInLogsOrStore(t *testing.T) {
	dir := t.TempDir()
	// A store not in redacting mode: the proxy redacts what it stores.
	store, err := checkpoint.NewFileStore(dir, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := newRig(t, func(c *serve.Config) { c.Store = store })
	for _, api := range allAPIs {
		turns := conversation(60, 8)
		// Secrets printed by tools in the middle, and one in the tail.
		turns[12].text += "\nexport AWS_ACCESS_KEY_ID=" + awsKeyID + "\n" + middleToken + "\n"
		turns[len(turns)-1].text += "\n" + middleToken + "\n"
		header := map[string]string{"Authorization": "Bearer " + openAIKey}
		if api == servetest.Messages {
			header = map[string]string{"x-api-key": anthropicKey, "anthropic-version": "2023-06-01"}
		}
		for _, stream := range []bool{false, true} {
			body := request(api, modelFor(api), turns, stream)
			if status, answer := r.post(t, apiPaths[api], body, header); status != 200 {
				t.Fatalf("%s: %d %s", api, status, answer)
			}
			last := r.up.Last()
			for k, v := range header {
				if last.Header.Get(k) != v {
					t.Fatalf("%s: the upstream got %s %q, want the client's", api, k, last.Header.Get(k))
				}
			}
			tr := readForwarded(t, api, last.Body)
			if countHandoffs(tr) != 1 {
				t.Fatalf("%s: not compacted", api)
			}
			for _, m := range tr.Messages {
				if txt := m.Text(); strings.Contains(txt, "<<<compact:handoff>>>") &&
					(strings.Contains(txt, awsKeyID) || strings.Contains(txt, "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6Zz5Yy4Xx3Ww")) {
					t.Fatalf("%s: a secret from the middle is in the handoff", api)
				}
			}
		}
	}
	logs := r.waitLogsN(t, `"msg":"request"`, 6)
	var stored bytes.Buffer
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			stored.Write(b)
		}
		return nil
	})
	if !bytes.Contains(stored.Bytes(), []byte("handler_")) {
		t.Fatalf("the store holds none of the conversation in plain text (%d bytes): the check below would see nothing", stored.Len())
	}
	for _, secret := range []string{openAIKey, anthropicKey, awsKeyID, "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6Zz5Yy4Xx3Ww", "Q7mZ2xK9vL3pT8nW4rY6"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %.12s…", secret)
		}
		if bytes.Contains(stored.Bytes(), []byte(secret)) {
			t.Errorf("the store holds %.12s…", secret)
		}
	}
	if strings.Count(logs, `"msg":"request"`) != 6 {
		t.Fatalf("want one log line per request (6):\n%s", logs)
	}
}

// Listening beyond loopback needs a token; with one, requests without it
// are refused, and the token never reaches the upstream.
func TestAuthToken(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8787": true, "[::1]:8787": true, "localhost:0": true,
		"0.0.0.0:8787": false, ":8787": false, "192.168.1.5:8787": false, "example.com:80": false} {
		err := serve.CheckListen(addr, "")
		if (err == nil) != ok {
			t.Errorf("CheckListen(%q, no token) = %v", addr, err)
		}
		if !ok && !errors.Is(err, serve.ErrAuthRequired) {
			t.Errorf("CheckListen(%q): %v, want ErrAuthRequired", addr, err)
		}
		if err := serve.CheckListen(addr, "t0k3n"); err != nil {
			t.Errorf("CheckListen(%q, token) = %v", addr, err)
		}
	}

	const token = "proxy-token-5b1f"
	r := newRig(t, func(c *serve.Config) { c.AuthToken = token })
	body := request(servetest.Chat, gptModel, conversation(2, 2), false)
	if status, _ := r.post(t, apiPaths[servetest.Chat], body, nil); status != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", status)
	}
	if status, _ := r.post(t, apiPaths[servetest.Chat], body, map[string]string{serve.AuthHeader: "wrong"}); status != http.StatusUnauthorized {
		t.Fatalf("wrong token: status %d", status)
	}
	if len(r.up.Requests()) != 0 {
		t.Fatal("an unauthorized request reached the upstream")
	}
	for _, h := range []map[string]string{{serve.AuthHeader: token}, {"Proxy-Authorization": "Bearer " + token}} {
		if status, answer := r.post(t, apiPaths[servetest.Chat], body, h); status != 200 {
			t.Fatalf("token %v: %d %s", h, status, answer)
		}
		got := r.up.Last().Header
		if got.Get(serve.AuthHeader) != "" || got.Get("Proxy-Authorization") != "" {
			t.Fatal("the proxy's token reached the upstream")
		}
	}
	if resp, err := http.Get(r.proxy.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz without a token: %v %v", resp, err)
	}
	if resp, err := http.Get(r.proxy.URL + "/metrics"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("metrics without a token: %v %v", resp, err)
	}
}

// Bodies over the limit are refused with 413, compacting path or not.
func TestBodyBound(t *testing.T) {
	r := newRig(t, func(c *serve.Config) { c.MaxBodyBytes = 4096 })
	body := request(servetest.Chat, gptModel, conversation(10, 5), false)
	status, answer := r.post(t, apiPaths[servetest.Chat], body, nil)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(answer), "limit") {
		t.Fatalf("status %d: %s", status, answer)
	}
	if status, _ := r.post(t, "/v1/embeddings", body, nil); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("passthrough: status %d", status)
	}
	// A body of unknown length is cut at the limit too.
	req, _ := http.NewRequest(http.MethodPost, r.proxy.URL+apiPaths[servetest.Chat], struct{ *bytes.Reader }{bytes.NewReader(body)})
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: %v %v", resp, err)
	}
	if len(r.up.Requests()) != 0 {
		t.Fatal("an oversized body reached the upstream")
	}
	if !strings.Contains(r.get(t, "/metrics"), "compact_serve_body_too_large_total 3") {
		t.Fatal("oversized bodies not counted")
	}
}
