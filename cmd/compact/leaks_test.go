package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/compactkit/compact"
)

// plantedChat is chat(40) with a database password in the first ask (the
// head), in a tool output of the middle and in the last tool output (the
// tail).
func plantedChat(t *testing.T, head, middle, tail string) string {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(chat(40)), &msgs); err != nil {
		t.Fatal(err)
	}
	if head != "" {
		msgs[1]["content"] = msgs[1]["content"].(string) + " The database is postgres://admin:" + head + "@db.internal/app."
	}
	if middle != "" {
		msgs[41]["content"] = "DATABASE_URL=postgres://admin:" + middle + "@db.internal/app\n" + msgs[41]["content"].(string)
	}
	if tail != "" {
		msgs[len(msgs)-2]["content"] = "connected to postgres://admin:" + tail + "@db.internal/app\n" + msgs[len(msgs)-2]["content"].(string)
	}
	b, _ := json.MarshalIndent(msgs, "", "  ")
	return string(b)
}

// sinks returns what every file under dirs holds, and stdout and stderr.
func sinks(t *testing.T, stdout, stderr string, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
	}
	return out
}

func assertAbsent(t *testing.T, secret string, sinks map[string]string) {
	t.Helper()
	for name, s := range sinks {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret", name)
		}
	}
}

// Issue 17, leak 3: --summarizer prune writes no secret of the middle to
// -o, the report or the checkpoint.
func TestPruneLeavesNoMiddleSecret(t *testing.T) {
	const secret = "Kq7mZ2pXw9vBmiddle"
	dir := t.TempDir()
	out, store := filepath.Join(dir, "out"), filepath.Join(dir, "store")
	os.Mkdir(out, 0o700)
	code, stdout, stderr := runCmd(t, plantedChat(t, "", secret, ""), nil, "--summarizer", "prune", "--force", "-o", filepath.Join(out, "o.json"),
		"--report", filepath.Join(out, "r.json"), "--checkpoint", store, "--session", "s1", "--checkpoint-plain", "-")
	if code != exitOK || !strings.Contains(stderr, "prune") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := sinks(t, stdout, stderr, out, store)
	assertAbsent(t, secret, got)
	if !strings.Contains(got[filepath.Join(out, "o.json")], "[REDACTED:") {
		t.Fatal("no mask in the output")
	}
}

// keyEchoingLLM answers every call with a 401 whose message echoes the
// key, as some gateways do, and records the prompts it was sent.
func keyEchoingLLM(t *testing.T, prompts *[]string, mu *sync.Mutex) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		*prompts = append(*prompts, string(body))
		mu.Unlock()
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + key + ". See https://gateway.example/keys.",
			"type": "invalid_request_error", "code": "invalid_api_key"}})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Issue 17, leak 4: a provider error that echoes the API key reaches no
// sink: stderr, --report, the checkpoint, batch's report and checkpoint.
func TestProviderEchoOfTheKeyReachesNoSink(t *testing.T) {
	const key = "gw-7Hk2pQ9rT4vX8zL1mN6bC3dF5gJ0sA2e"
	var prompts []string
	var mu sync.Mutex
	srv := keyEchoingLLM(t, &prompts, &mu)
	environ := map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.URL + "/v1"}
	dir := t.TempDir()
	out, store := filepath.Join(dir, "out"), filepath.Join(dir, "store")
	os.Mkdir(out, 0o700)
	all := map[string]string{}
	// The fallback path: the failure is in the report's reason and warnings.
	code, stdout, stderr := runCmd(t, chat(40), environ, "--force", "--retries", "0", "-o", filepath.Join(out, "o.json"),
		"--report", filepath.Join(out, "r.json"), "--checkpoint", store, "--session", "s1", "--checkpoint-plain", "-")
	if code != exitOK || !strings.Contains(stderr, "LLM failed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for k, v := range sinks(t, stdout, stderr, out, store) {
		all["fallback "+k] = v
	}
	if !strings.Contains(all["fallback "+filepath.Join(out, "r.json")], "HTTP 401") {
		t.Fatal("the report does not say what failed")
	}
	// The abort path: the error goes to stderr.
	code, stdout, stderr = runCmd(t, chat(40), environ, "--force", "--retries", "0", "--abort-on-summary-failure",
		"--report", filepath.Join(out, "r2.json"), "-")
	if code != exitFailure || !strings.Contains(stderr, "HTTP 401") {
		t.Fatalf("abort: exit %d: %s", code, stderr)
	}
	for k, v := range sinks(t, stdout, stderr, out) {
		all["abort "+k] = v
	}
	// Batch: its report and its checkpoint.
	in, bout := filepath.Join(dir, "in"), filepath.Join(dir, "bout")
	os.Mkdir(in, 0o700)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(chat(40)), 0o600)
	code, stdout, stderr = runCmd(t, "", environ, "batch", in, "--out", bout, "--force", "--retries", "0", "--abort-on-summary-failure",
		"--report", filepath.Join(dir, "batch.json"), "--quiet")
	if !strings.Contains(stdout+stderr, "fail") {
		t.Fatalf("batch: exit %d: %s %s", code, stdout, stderr)
	}
	for k, v := range sinks(t, stdout, stderr, bout) {
		all["batch "+k] = v
	}
	b, _ := os.ReadFile(filepath.Join(dir, "batch.json"))
	all["batch report"] = string(b)
	if !strings.Contains(string(b), "HTTP 401") {
		t.Fatalf("the batch report does not say what failed: %.500s", b)
	}
	for _, piece := range []string{key, key[:12], key[len(key)-12:]} {
		assertAbsent(t, piece, all)
	}
}

// Issue 17, leak 6: --focus is redacted before it is sent.
func TestFocusIsRedactedBeforeItIsSent(t *testing.T) {
	const secret = "Kq7mZ2pXw9vBfocus"
	var prompts []string
	var mu sync.Mutex
	srv := keyEchoingLLM(t, &prompts, &mu)
	environ := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1"}
	code, _, stderr := runCmd(t, chat(40), environ, "--force", "--retries", "0",
		"--focus", "the migration to postgres://admin:"+secret+"@db.internal/app", "-")
	if code != exitOK || len(prompts) != 1 {
		t.Fatalf("exit %d, %d calls: %s", code, len(prompts), stderr)
	}
	if strings.Contains(prompts[0], secret) || !strings.Contains(prompts[0], "the migration to postgres://admin:[REDACTED:") {
		t.Fatalf("the request body holds the focus unredacted, or no focus: %.3000s", prompts[0])
	}
}

var maskRE = regexp.MustCompile(`\[REDACTED:[^\]]+\]`)

// Issue 17, leak 8: --redact-kept masks the secrets of the kept head and
// tail, and the output's bytes change only inside the masks.
func TestRedactKept(t *testing.T) {
	secrets := []string{"Kq7mZ2pXw9vBhead", "Kq7mZ2pXw9vBtail"}
	in := plantedChat(t, secrets[0], "", secrets[1])
	dir := t.TempDir()
	plain, masked := filepath.Join(dir, "plain.json"), filepath.Join(dir, "masked.json")
	for _, run := range []struct {
		out  string
		args []string
	}{{plain, nil}, {masked, []string{"--redact-kept"}}} {
		args := append([]string{"--force", "--summarizer", "fallback", "-o", run.out}, run.args...)
		if code, _, stderr := runCmd(t, in, nil, append(args, "-")...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(masked)
	for _, s := range secrets {
		if !strings.Contains(string(a), s) {
			t.Fatalf("%s is not kept verbatim without --redact-kept: the test plants it outside the head or tail", s)
		}
		if strings.Contains(string(b), s) {
			t.Fatalf("--redact-kept left %s", s)
		}
	}
	// Every byte outside a mask is unchanged.
	ua := string(a)
	for _, s := range secrets {
		ua = strings.ReplaceAll(ua, s, "\x00")
	}
	ub := maskRE.ReplaceAllString(string(b), "\x00")
	if ua != ub {
		t.Fatalf("the outputs differ outside the masks:\n%s", firstDifference(ua, ub))
	}
	var tr []any
	if json.Unmarshal(b, &tr) != nil {
		t.Fatal("the masked output is not valid JSON")
	}
}

func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return "…" + a[max(i-80, 0):min(i+80, len(a))] + "\n---\n…" + b[max(i-80, 0):min(i+80, len(b))]
}

var _ = compact.MethodLLM
