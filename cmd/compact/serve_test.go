package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/syncbuffer"
	"github.com/compactkit/compact/serve/servetest"
)

func TestServeRefusesBadSetups(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "0.0.0.0:0"},
		{"serve", "--summarizer", "prune"},
		{"serve", "--max-body", "lots"},
		{"serve", "--threshold", "2"},
		{"serve", "--target", "0%"},
		{"serve", "--openai-upstream", "ftp://x"},
		{"serve", "extra"},
	} {
		code, _, stderr := runCmd(t, "", nil, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
	code, _, stderr := runCmd(t, "", nil, "serve", "--listen", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(stderr, "auth") {
		t.Fatalf("open listen without a token: %d %s", code, stderr)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "10MB": 10e6, "4096": 4096, "2M": 2 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "0", "x", "1TB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// compact serve end to end: flags, model table, store, one compacted
// request and its log line, and a clean stop.
func TestServeCommand(t *testing.T) {
	up := &servetest.Upstream{}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	dir := t.TempDir()
	models := filepath.Join(dir, "models.toml")
	os.WriteFile(models, []byte("[[models]]\nname = \"tiny-gpt\"\nencoding = \"o200k_base\"\nwindow = 4000\noutput_reserve = 500\n"), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncbuffer.Buffer{}
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: stderr, getenv: func(string) string { return "" }}
	done := make(chan int)
	go func() {
		done <- run(ctx, e, []string{"serve", "--listen", "127.0.0.1:0", "--openai-upstream", upSrv.URL + "/v1",
			"--models", models, "--store", filepath.Join(dir, "store"), "--summarizer", "fallback"})
	}()
	addr := ""
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("serve did not start: %s", stderr.String())
	}

	var msgs []string
	msgs = append(msgs, `{"role":"system","content":"You are a coding agent."}`, `{"role":"user","content":"Fix the build."}`)
	for k := 0; k < 40; k++ {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":"","tool_calls":[{"id":"c%d","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"go test ./pkg%d\"}"}}]}`, k, k),
			fmt.Sprintf(`{"role":"tool","tool_call_id":"c%d","content":%q}`, k, strings.Repeat(fmt.Sprintf("--- FAIL: TestHandler%d (0.01s) handler_test.go:%d: got 500, want 200\n", k, k), 6)))
	}
	body := `{"model":"tiny-gpt","messages":[` + strings.Join(msgs, ",") + `],"stream":false}`
	resp, err := http.Post(addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("request: %v %v", resp, err)
	}
	resp.Body.Close()
	if !bytes.Contains(up.Last().Body, []byte("<<<compact:handoff>>>")) {
		t.Fatal("the upstream got the request uncompacted")
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"msg":"request"`) || !strings.Contains(logs, `"compaction":"fallback"`) {
		t.Fatalf("no request log line: %s", logs)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "store")); len(entries) == 0 {
		t.Fatal("nothing stored")
	}
}
