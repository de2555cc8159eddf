package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/tokens"
)

// The loop in process, under the race detector: every strategy that keeps
// the session inside the window ends with the same answer and receipts;
// pruning alone does not keep it inside, and the provider refuses it.
func TestRunStrategies(t *testing.T) {
	t.Parallel()
	var finals []string
	for _, tc := range []struct {
		strategy string
		method   string // of every compaction
		fails    string
	}{
		{strategy: "auto", method: "llm"},
		{strategy: "fallback", method: "fallback"},
		{strategy: "prune", fails: "maximum context length is 2800 tokens"},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			dir := t.TempDir()
			var out, errs bytes.Buffer
			err := run(context.Background(), []string{"--dir", dir, "--strategy", tc.strategy}, &out, &errs)
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("want an error saying %q, got %v", tc.fails, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
			}
			if n := strings.Count(out.String(), "compacted ("+tc.method+")"); n < 2 {
				t.Errorf("%d compactions by %s, want at least 2:\n%s", n, tc.method, out.String())
			}
			final := lastLine(out.String())
			checkReceiptsKept(t, dir, final)
			finals = append(finals, final)

			// Run again: the session is complete, and says so.
			out.Reset()
			if err := run(context.Background(), []string{"--dir", dir, "--strategy", tc.strategy}, &out, &errs); err != nil {
				t.Fatal(err)
			}
			mustContain(t, out.String(), "completed at checkpoint")
			if got := lastLine(out.String()); got != final {
				t.Errorf("a completed session's rerun answered %q, want %q", got, final)
			}
		})
	}
	if len(finals) == 2 && finals[0] != finals[1] {
		t.Errorf("the strategies' answers differ:\n%s\n%s", finals[0], finals[1])
	}
}

// checkReceiptsKept checks that the final answer quotes every receipt the
// services gave out, and that the staging deploy's receipt reached it
// through a handoff: the turn that returned it was compacted away.
func checkReceiptsKept(t *testing.T, dir, final string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, receiptsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, line := range lines {
		if receipt, _, _ := strings.Cut(line, "\t"); !strings.Contains(final, receipt) {
			t.Errorf("the final answer lost receipt %s: %s", receipt, final)
		}
	}
	store, err := checkpoint.NewFileStore(filepath.Join(dir, ".agentloop"), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.Latest(context.Background(), "agentloop")
	if err != nil {
		t.Fatal(err)
	}
	staging, _, _ := strings.Cut(lines[0], "\t")
	msgs := c.Transcript.Messages[:len(c.Transcript.Messages)-1] // all but the answer
	inHandoff := false
	for _, m := range msgs {
		text := m.Text() + m.ResultText()
		switch {
		case !strings.Contains(text, staging):
		case m.Summary:
			inHandoff = true
		default:
			t.Errorf("the staging deploy's receipt is still in a %s message: the test wants it compacted away", m.Role)
		}
	}
	if !inHandoff {
		t.Errorf("no handoff carries the staging deploy's receipt %s", staging)
	}
}

// Two processes on one session: the one that resumed last owns it; the
// other's next save fails with ErrConflict instead of overwriting it, and
// nothing it did reaches the checkpoint.
func TestSecondWorkerConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	o, err := parseOptions([]string{"--dir", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	first, closeFirst, err := newAgent(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFirst()
	second, closeSecond, err := newAgent(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSecond()

	if _, done, err := first.start(ctx); err != nil || done {
		t.Fatalf("first start: done %v, err %v", done, err)
	}
	if _, done, err := second.start(ctx); err != nil || done {
		t.Fatalf("second start: done %v, err %v", done, err)
	}
	if second.state.Seq != 2 || second.state.RetryCount != 1 {
		t.Fatalf("the second worker should have resumed the first's checkpoint: seq %d, retries %d", second.state.Seq, second.state.RetryCount)
	}
	if _, err := first.loop(ctx); !errors.Is(err, checkpoint.ErrConflict) {
		t.Fatalf("the first worker's next save: want ErrConflict, got %v", err)
	}
	final, err := second.loop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(final, "Done.") {
		t.Errorf("final answer %q", final)
	}
}

// A deploy whose response is lost after the service acted: the run stops
// with the step failed, and the next run retries the call under the same
// key, which the service answers with its first receipt.
func TestLostResponseRetriedUnderSameKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	o, err := parseOptions([]string{"--dir", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, closeAgent, err := newAgent(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAgent()
	services, lost := a.tools.services, false
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, services+r.URL.Path, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if strings.HasSuffix(r.URL.Path, "/deploy") && !lost {
			lost = true // the deploy happened; its answer never arrives
			http.Error(w, "upstream timed out", http.StatusGatewayTimeout)
			return
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	a.tools.services = proxy.URL

	if _, err := a.run(ctx); err == nil || !strings.Contains(err.Error(), "504") {
		t.Fatalf("want the run stopped by the lost answer, got %v", err)
	}
	c, err := a.store.Latest(ctx, "agentloop")
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != checkpoint.StatusFailed || c.Step(c.CurrentStep) == nil || c.Step(c.CurrentStep).Status != checkpoint.StepFailed {
		t.Fatalf("want the session and its deploy step failed; status %s, current step %q", c.Status, c.CurrentStep)
	}
	if got := readReceipts(t, dir); len(got) != 1 {
		t.Fatalf("%d deploys before the retry, want 1", len(got))
	}

	var out bytes.Buffer
	if err := run(ctx, []string{"--dir", dir}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	mustContain(t, out.String(), "interrupted, to finish: "+c.CurrentStep)
	mustContain(t, out.String(), "[deploy service] key seen before")
	for key, n := range readReceipts(t, dir) {
		if n != 1 {
			t.Errorf("%s performed %d times", key, n)
		}
	}
}

// The services act once per idempotency key and answer a repeated key with
// the first response, marked as replayed.
func TestServicesIdempotency(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), receiptsFile)
	effects := 0
	svc := &services{path: path, log: io.Discard, pause: func(string) { effects++ }}
	mux := http.NewServeMux()
	svc.register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(key, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/services/deploy", strings.NewReader(body))
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	const body = `{"service":"inventory","env":"staging","version":"v1"}`
	r1, b1 := post("s/deploy:1", body)
	r2, b2 := post("s/deploy:1", body)
	r3, _ := post("s/deploy:2", body)
	if r1.StatusCode != 200 || r2.StatusCode != 200 || r3.StatusCode != 200 {
		t.Fatalf("statuses %d %d %d", r1.StatusCode, r2.StatusCode, r3.StatusCode)
	}
	if b1 != b2 || r1.Header.Get("Idempotent-Replayed") != "" || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a repeated key should replay the first answer: %q / %q, replayed %q", b1, b2, r2.Header.Get("Idempotent-Replayed"))
	}
	if effects != 2 {
		t.Errorf("%d effects for two keys", effects)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("%d receipt lines for two keys:\n%s", n, b)
	}
	for _, tc := range []struct {
		key, body string
		status    int
	}{
		{"", body, http.StatusBadRequest},
		{"k", `{"service":`, http.StatusBadRequest},
		{"k", `{"service":"inventory"}`, http.StatusUnprocessableEntity},
	} {
		if r, b := post(tc.key, tc.body); r.StatusCode != tc.status {
			t.Errorf("key %q body %q: status %d (%s), want %d", tc.key, tc.body, r.StatusCode, b, tc.status)
		}
	}
}

// The fake provider holds requests to the API's rules.
func TestFakeModelRefuses(t *testing.T) {
	t.Parallel()
	counter, err := tokens.ForModel(model)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	(&fakeModel{windows: map[string]int{model: 200}, counter: counter}).register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)

	call := openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
		Function: openai.FunctionCall{Name: "run_tests", Arguments: "{}"}}}}
	result := openai.ChatCompletionMessage{Role: "tool", ToolCallID: "c1", Content: "ok"}
	user := openai.ChatCompletionMessage{Role: "user", Content: "go"}
	tools := toOpenAITools(newToolbox("", "", "", nil).defs()[:1])
	for _, tc := range []struct {
		name  string
		model string
		msgs  []openai.ChatCompletionMessage
		want  string // in the error; "" for success
	}{
		{"paired", model, []openai.ChatCompletionMessage{user, call, result}, ""},
		{"result without call", model, []openai.ChatCompletionMessage{user, result}, "must be a response to a preceding message"},
		{"call without result", model, []openai.ChatCompletionMessage{user, call}, "have no responses"},
		{"call answered late", model, []openai.ChatCompletionMessage{user, call, user, result}, "must be followed by tool messages"},
		{"over the window", model, []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("stock ", 300)}}, "maximum context length is 200 tokens"},
		{"another model's window", "gpt-4.1-mini", []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("stock ", 300)}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: tc.model, Messages: tc.msgs, Tools: tools})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || !strings.Contains(apiErr.Message, tc.want) {
				t.Fatalf("want a 400 saying %q, got %v", tc.want, err)
			}
		})
	}
}

// The fake summarizer folds the previous handoff into the new one and
// keeps the receipts it sees, under every heading compact expects.
func TestFakeSummary(t *testing.T) {
	t.Parallel()
	prev := compact.Handoff{CompletedActions: []string{"read_file {\"path\":\"inventory.go\"}"}, CriticalContext: []string{"receipt dep-0000aaaa"}}
	prompt := "Previous summary of even earlier turns (update it with the turns below):\n<previous-summary>\n" + prev.Render() +
		"\n</previous-summary>\n\nTurns to summarize:\n<transcript>\n[assistant]\nStaging first.\n→ call deploy {\"env\":\"staging\"}\n\n" +
		"[tool result of deploy]\ndeployed inventory v1.4.1 to staging: receipt dep-1234abcd\n</transcript>\n"
	text := (&fakeModel{}).summarize([]openai.ChatCompletionMessage{{Role: "system", Content: "x"}, {Role: "user", Content: prompt}})
	h, err := compact.ParseHandoff(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(h.CompletedActions) != 2 || !strings.HasPrefix(h.CompletedActions[1], "deploy ") {
		t.Errorf("completed actions %q", h.CompletedActions)
	}
	if strings.Join(h.CriticalContext, ",") != "receipt dep-0000aaaa,receipt dep-1234abcd" {
		t.Errorf("critical context %q", h.CriticalContext)
	}
}

// Idempotency keys: equal for the same call however its arguments are
// spelled, new when a file the call reads has changed.
func TestToolKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := seedWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	tb := newToolbox(dir, "s", "", nil)
	key := func(name, args string) string {
		t.Helper()
		k, err := tb.key(compact.ToolCall{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if a, b := key("deploy", `{"env":"staging","version":"v1"}`), key("deploy", `{ "version": "v1", "env": "staging" }`); a != b {
		t.Errorf("one deploy spelled two ways got two keys: %s, %s", a, b)
	}
	if a, b := key("deploy", `{"env":"staging"}`), key("deploy", `{"env":"production"}`); a == b {
		t.Error("two deploys share a key")
	}
	before := key("run_tests", `{}`)
	if err := os.WriteFile(filepath.Join(dir, sourceFile), []byte(strings.Replace(seedSource, buggyLine, fixedLine, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if after := key("run_tests", `{}`); after == before {
		t.Error("run_tests after a fix kept its key: it would be answered with the failing run's result")
	}
	for _, tc := range []struct{ name, args, want string }{
		{"read_file", `{"path":"../etc/passwd"}`, "not a path inside the work dir"},
		{"read_file", `{"path":"missing.go"}`, "does not exist"},
		{"read_file", `{"path":"receipts.log"}`, "belongs to the deploy and mail services"},
		{"rm", `{}`, "there is no tool"},
	} {
		_, err := tb.key(compact.ToolCall{Name: tc.name, Arguments: json.RawMessage(tc.args)})
		if !isToolError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: want a tool error saying %q, got %v", tc.name, tc.args, tc.want, err)
		}
	}
}

func TestParseCrashSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want crashSpec
		err  bool
	}{
		{in: "effect", want: crashSpec{point: "effect", n: 1}},
		{in: "effect:deploy", want: crashSpec{point: "effect", tool: "deploy", n: 1}},
		{in: "running:deploy@2", want: crashSpec{point: "running", tool: "deploy", n: 2}},
		{in: "*@7", want: crashSpec{point: "*", n: 7}},
		{in: "efect", err: true},
		{in: "effect@0", err: true},
		{in: "effect@x", err: true},
	} {
		got, err := parseCrashSpec(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("%q: want an error", tc.in)
			}
			continue
		}
		if err != nil || *got != tc.want {
			t.Errorf("%q: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--window", "10"},
		{"--strategy", "magic"},
		{"--session", "../x"},
		{"--crash-at", "nowhere"},
		{"extra"},
		{"--no-such-flag"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: want a usage error, got %v", args, err)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "final: ")
}
