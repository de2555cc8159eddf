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
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/corpus"
)

// runCmd runs one command line with the given stdin and environment.
func runCmd(t *testing.T, stdin string, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return environ[k] }}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func readReport(t *testing.T, path string) compactReport {
	t.Helper()
	raw := readJSON[map[string]any](t, path)
	for _, k := range []string{"tokens_before", "tokens_after", "method", "dropped_messages", "llm_attempts", "warnings"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("report lacks %q: %v", k, raw)
		}
	}
	return readJSON[compactReport](t, path)
}

// readJSON decodes the JSON file at path, failing the test when it cannot.
func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// chat is an OpenAI Chat Completions transcript long enough to compact:
// a task, then tool calls with sizeable outputs.
func chat(calls int) string {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type tc struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCalls  []tc   `json:"tool_calls,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	msgs := []msg{{Role: "system", Content: "You are a coding agent."}, {Role: "user", Content: "Fix the flaky test in pkg/cache."}}
	for i := range calls {
		id := "call_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		msgs = append(msgs, msg{Role: "assistant", Content: nil, ToolCalls: []tc{{ID: id, Type: "function", Function: fn{Name: "bash", Arguments: `{"cmd":"go test ./pkg/cache -run TestEvict -count=1"}`}}}})
		msgs = append(msgs, msg{Role: "tool", ToolCallID: id, Content: strings.Repeat("--- FAIL: TestEvict (0.01s) cache_test.go:42: got 3 entries, want 2\n", 40)})
	}
	msgs = append(msgs, msg{Role: "assistant", Content: "Fixed: eviction now runs before insert."})
	b, _ := json.MarshalIndent(msgs, "", "  ")
	return string(b)
}

func TestCompactCommandFallbackWithoutLLM(t *testing.T) {
	dir := t.TempDir()
	out, rep, hand := filepath.Join(dir, "out.json"), filepath.Join(dir, "report.json"), filepath.Join(dir, "handoff.md")
	code, stdout, stderr := runCmd(t, chat(40), nil, "--force", "-o", out, "--report", rep, "--handoff", hand, "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Fatalf("stdout not empty with -o: %q", stdout)
	}
	if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.Contains(stderr, "→") || !strings.Contains(stderr, "fallback (no LLM configured)") {
		t.Fatalf("stderr is not the one summary line: %q", stderr)
	}
	r := readReport(t, rep)
	if r.Method != compact.MethodFallback || r.LLMConfigured || !strings.Contains(r.Reason, "no LLM configured") ||
		r.DroppedMessages == 0 || r.TokensAfter >= r.TokensBefore || r.LLMAttempts != 0 {
		t.Fatalf("report %+v", r)
	}
	tr := readTranscriptFile(t, out)
	if tr.Format != string(format.OpenAIChat) || len(tr.Orphans()) != 0 {
		t.Fatalf("output format %s, orphans %v", tr.Format, tr.Orphans())
	}
	h, err := os.ReadFile(hand)
	if err != nil || !strings.HasPrefix(string(h), "## Task snapshot") {
		t.Fatalf("handoff file: %v %.200q", err, h)
	}
	// The output holds the same handoff, as a marked user message.
	var found bool
	for _, m := range tr.Messages {
		found = found || compact.IsHandoffText(m.Text()) && strings.Contains(m.Text(), strings.TrimSpace(string(h)))
	}
	if !found {
		t.Fatal("the output has no handoff message matching --handoff")
	}
}

func TestCompactCommandBelowThreshold(t *testing.T) {
	in := chat(3)
	code, stdout, stderr := runCmd(t, in, nil, "-")
	if code != exitOK || !strings.Contains(stderr, "unchanged (below the trigger") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tr, err := format.Read(strings.NewReader(stdout), "out", "")
	orig, _ := format.Read(strings.NewReader(in), "in", "")
	if err != nil || tr.Hash() != orig.Hash() {
		t.Fatalf("unchanged transcript differs: %v", err)
	}
}

// fakeLLM answers chat completions with a fixed handoff, or fails with
// status when it is set.
func fakeLLM(t *testing.T, status int, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if status != 0 {
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
			return
		}
		w.Write(handoffCompletion())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// handoffCompletion is a Chat Completions answer whose content is a
// handoff: what the fake providers of these tests answer.
func handoffCompletion() []byte {
	h := compact.Handoff{TaskSnapshot: "Fix the flaky test in pkg/cache.", Goal: "A green pkg/cache.",
		ErrorsAndFixes: []string{"TestEvict: got 3 entries, want 2"}}
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": h.Render()}}}})
	return b
}

func TestCompactCommandLLM(t *testing.T) {
	var calls atomic.Int32
	srv := fakeLLM(t, 0, &calls)
	dir := t.TempDir()
	rep := filepath.Join(dir, "r.json")
	environ := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "sk-test"}
	code, stdout, stderr := runCmd(t, chat(40), environ, "--force", "--report", rep, "--summary-model", "small-model", "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, rep)
	if r.Method != compact.MethodLLM || r.LLMAttempts != 1 || r.SummaryModel != "small-model" || calls.Load() != 1 {
		t.Fatalf("report %+v, calls %d", r, calls.Load())
	}
	if !strings.Contains(stdout, "A green pkg/cache.") || !strings.Contains(stderr, "llm (small-model, 1 attempts)") {
		t.Fatalf("stdout lacks the LLM handoff or stderr %q", stderr)
	}
	// --base-url wins over the environment.
	var other atomic.Int32
	srv2 := fakeLLM(t, 0, &other)
	code, _, stderr = runCmd(t, chat(40), environ, "--force", "--base-url", srv2.URL+"/v1", "-")
	if code != exitOK || other.Load() != 1 || calls.Load() != 1 {
		t.Fatalf("exit %d, base-url server %d calls, env server %d: %s", code, other.Load(), calls.Load(), stderr)
	}
}

func TestCompactCommandLLMFailure(t *testing.T) {
	var calls atomic.Int32
	srv := fakeLLM(t, http.StatusServiceUnavailable, &calls)
	environ := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1"}
	dir := t.TempDir()
	out, rep := filepath.Join(dir, "out.json"), filepath.Join(dir, "r.json")

	code, _, stderr := runCmd(t, chat(40), environ, "--force", "--retries", "1", "--report", rep, "-o", out, "-")
	r := readReport(t, rep)
	if code != exitOK || r.Method != compact.MethodFallback || r.LLMAttempts != 2 || calls.Load() != 2 ||
		!strings.Contains(stderr, "LLM failed: summary failed: HTTP 503") {
		t.Fatalf("exit %d, report %+v, calls %d, stderr %q", code, r, calls.Load(), stderr)
	}
	// Off a terminal each retry is said as it happens (QA-39.6), before the
	// final line.
	if i, j := strings.Index(stderr, "compact: LLM call 1 failed: "), strings.Index(stderr, "LLM failed: summary"); i < 0 || j < i ||
		!strings.Contains(stderr[i:j], "HTTP 503") || !strings.Contains(stderr[i:j], "; retrying in ") {
		t.Fatalf("no retry line before the final line: %q", stderr)
	}

	os.Remove(out)
	code, stdout, stderr := runCmd(t, chat(40), environ, "--force", "--retries", "0", "--abort-on-summary-failure", "--report", rep, "-o", out, "-")
	r = readReport(t, rep)
	if code != exitFailure || stdout != "" || r.Method != compact.MethodNone || r.Error == "" || !strings.Contains(stderr, "summary failed") {
		t.Fatalf("abort: exit %d, report %+v, stderr %q", code, r, stderr)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("abort wrote the output: %v", err)
	}
}

func TestCompactCommandPrune(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "r.json")
	code, _, stderr := runCmd(t, chat(40), nil, "--force", "--summarizer", "prune", "--report", rep, "-")
	r := readReport(t, rep)
	if code != exitOK || r.Method != compact.MethodPrune || r.DroppedMessages != 0 || r.TokensAfter >= r.TokensBefore {
		t.Fatalf("exit %d, report %+v: %s", code, r, stderr)
	}
}

func TestCompactCommandUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		in   string
		want string
	}{
		{"threshold", []string{"--threshold", "1.5", "-"}, chat(2), "--threshold"},
		{"summarizer", []string{"--summarizer", "magic", "-"}, chat(2), "unknown summarizer"},
		{"target", []string{"--target", "half", "-"}, chat(2), "--target"},
		{"retries", []string{"--retries", "-1", "-"}, chat(2), "--retries"},
		{"llm without a provider", []string{"--summarizer", "llm", "-"}, chat(2), "API key or a base URL"},
		{"misspelt model", []string{"--model", "gpt4o", "-"}, chat(2), `--model "gpt4o": the model table does not know it`},
		{"report to stdout", []string{"--report", "-", "-"}, chat(2), "need a file"},
		{"two files", []string{"a", "b"}, "", "expected one FILE"},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, "", "no such file"},
		{"directory", []string{dir}, "", "is a directory"},
		{"not a transcript", []string{"-"}, "hello world", "unrecognised transcript format"},
		{"empty input", []string{"-"}, "", "empty input"},
		{"unknown flag", []string{"--frobnicate"}, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.in, nil, tt.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 mentioning %q", code, stdout, stderr, tt.want)
			}
		})
	}
}

func TestCompactCommandHelp(t *testing.T) {
	code, _, stderr := runCmd(t, "", nil, "--force", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"-model", "-window", "-threshold", "-target", "-keep-head", "-keep-tail-tokens", "-summarizer",
		"-base-url", "-summary-model", "-timeout", "-retries", "-abort-on-summary-failure", "-focus", "-force", "-o", "-report", "-handoff"} {
		if !strings.Contains(stderr, "  "+f+" ") && !strings.Contains(stderr, "  "+f+"\n") {
			t.Errorf("help lacks %s", f)
		}
	}
}

// TestCompactCommandCorpus compacts every corpus transcript with the
// fallback, forced, then runs "compact inspect --json" on the input and the
// output: the output is in the input's format, has no orphaned tool call or
// result the input did not have (the input's own, such as a call still
// running when the session stopped, stay in the verbatim tail), and holds
// exactly one compact handoff when one was written.
func TestCompactCommandCorpus(t *testing.T) {
	dir := t.TempDir()
	for _, path := range corpusTranscripts(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := readTranscript(path)
			if err != nil {
				t.Fatalf("read input: %v", err) // every corpus format has a reader
			}
			if f, _ := format.Lookup(format.Name(in.Format)); f.Write == nil {
				t.Fatalf("no writer registered for %s", in.Format)
			}
			out, rep := filepath.Join(dir, name), filepath.Join(dir, name+".report.json")
			code, _, stderr := runCmd(t, "", nil, path, "--summarizer", "fallback", "--force", "-o", out, "--report", rep)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r := readReport(t, rep)
			before, after := inspectJSON(t, path), inspectJSON(t, out)
			if after.Format != before.Format {
				t.Fatalf("output format %s, input %s", after.Format, before.Format)
			}
			known := map[string]bool{}
			for _, o := range before.Orphans {
				known[string(o.Kind)+" "+o.CallID] = true
			}
			for _, o := range after.Orphans {
				if !known[string(o.Kind)+" "+o.CallID] {
					t.Fatalf("compaction orphaned %s %q (output message %d)", o.Kind, o.CallID, o.Index)
				}
				t.Logf("kept the input's own orphan: %s %q", o.Kind, o.CallID)
			}
			compactHandoffs := 0
			for _, h := range after.Handoffs {
				if h.Kind == "compact" {
					compactHandoffs++
				}
			}
			if want := boolToInt(r.Method == compact.MethodFallback); compactHandoffs != want {
				t.Fatalf("%d compact handoffs in the output after method %s", compactHandoffs, r.Method)
			}
			t.Logf("%s: %s", after.Format, strings.TrimSpace(stderr))
		})
	}
}

func inspectJSON(t *testing.T, path string) inspectReport {
	t.Helper()
	code, stdout, stderr := runCmd(t, "", nil, "inspect", "--json", path)
	if code != exitOK {
		t.Fatalf("inspect %s: exit %d: %s", path, code, stderr)
	}
	var r inspectReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("inspect --json: %v", err)
	}
	return r
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readTranscriptFile reads the transcript at path, failing the test when
// it cannot.
func readTranscriptFile(t *testing.T, path string) compact.Transcript {
	t.Helper()
	tr, err := readTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// readTranscript reads the transcript at path in the format it is in.
func readTranscript(path string) (compact.Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return compact.Transcript{}, err
	}
	defer f.Close()
	return format.Read(f, path, "")
}

func TestHelpShowsMainCommandFlags(t *testing.T) {
	code, stdout, _ := runCmd(t, "", nil, "--help")
	if code != exitOK || !strings.Contains(stdout, "-keep-tail-tokens") || !strings.Contains(stdout, "OPENAI_BASE_URL") ||
		!strings.Contains(stdout, "checkpoint") {
		t.Fatalf("exit %d, help:\n%s", code, stdout)
	}
}

func TestCompactCommandProgressOnATerminal(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(chat(40)), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, stderrTTY: true}
	if code := run(context.Background(), e, []string{"--force", "-"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := errb.String()
	last := s[strings.LastIndex(s, "\r\033[K")+len("\r\033[K"):]
	if !strings.Contains(s, "compact: summarizing (attempt 1)") || !strings.HasPrefix(last, "compact: ") || !strings.Contains(last, "→") {
		t.Fatalf("progress output %q", s)
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, stdout, stderr := runCmd(t, "", nil, args...)
		if code != exitOK || !strings.HasPrefix(stdout, "compact ") || strings.Count(stdout, "\n") != 1 {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/compactkit/compact", Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	for _, tt := range []struct {
		set  string
		info func() (*debug.BuildInfo, bool)
		want string
	}{
		{"v9.9.9", info("v1.2.3"), "v9.9.9"}, // -ldflags wins
		{"dev", info("v1.2.3"), "v1.2.3"},    // go install ...@v1.2.3
		{"dev", info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "true"),
			"devel 0123456789ab 2025-01-02T03:04:05Z, modified"},
		{"dev", info("(devel)"), "dev"},
		{"dev", func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	} {
		if got := versionString(tt.set, tt.info); got != tt.want {
			t.Errorf("versionString(%q) = %q, want %q", tt.set, got, tt.want)
		}
	}
}

// One token total: the "before" figure of a compaction is exactly what
// "compact count" says of the same file, for an exact model, an estimated
// one and a model table override.
func TestCompactBeforeEqualsCount(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "models.toml")
	os.WriteFile(table, []byte("[[models]]\nname = \"my-local-model\"\nencoding = \"cl100k_base\"\nwindow = 32000\noutput_reserve = 4000\n"), 0o644)
	inputs := map[string]string{"chat": filepath.Join(dir, "chat.json")}
	os.WriteFile(inputs["chat"], []byte(chat(40)), 0o644)
	if corpus.Available() || corpus.Required() {
		d := corpus.Dir(t, corpus.Transcripts)
		for _, name := range []string{"claudecode_agentcmd_full-session-four.jsonl", "codex_agentcmd_rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl"} {
			inputs[name] = filepath.Join(d, name)
		}
	}
	for name, path := range inputs {
		for _, setup := range []struct {
			args    []string
			environ map[string]string
		}{
			{nil, nil},
			{[]string{"--model", "gpt-4o"}, nil},
			{[]string{"--model", "claude-sonnet-4-5"}, nil},
			{[]string{"--model", "my-local-model"}, map[string]string{"COMPACT_MODELS": table}},
		} {
			code, stdout, stderr := runCmd(t, "", setup.environ, append(append([]string{"count", "--json"}, setup.args...), path)...)
			var c countReport
			if code != exitOK || json.Unmarshal([]byte(stdout), &c) != nil {
				t.Fatalf("%s %v: count exit %d: %s", name, setup.args, code, stderr)
			}
			rep := filepath.Join(dir, "r.json")
			code, _, stderr = runCmd(t, "", setup.environ, append(append([]string{"--summarizer", "fallback", "--force", "--report", rep, "-o", filepath.Join(dir, "out")}, setup.args...), path)...)
			if code != exitOK {
				t.Fatalf("%s %v: compact exit %d: %s", name, setup.args, code, stderr)
			}
			if r := readReport(t, rep); r.TokensBefore != c.Total || r.Window != c.Window {
				t.Errorf("%s %v: compaction before %d (window %d), count %d (window %d)", name, setup.args, r.TokensBefore, r.Window, c.Total, c.Window)
			}
		}
	}
}

// --window below the default model's reserve works: the reserve is scaled
// to the window, and the report says so.
func TestCompactSmallWindow(t *testing.T) {
	dir := t.TempDir()
	for _, w := range []string{"8000", "16000"} {
		rep := filepath.Join(dir, "r.json")
		code, _, stderr := runCmd(t, chat(40), nil, "--window", w, "--summarizer", "fallback", "--report", rep, "-o", filepath.Join(dir, "out.json"), "-")
		if code != exitOK {
			t.Fatalf("--window %s: exit %d: %s", w, code, stderr)
		}
		r := readReport(t, rep)
		if r.Method != compact.MethodFallback || !strings.Contains(strings.Join(r.Warnings, "\n"), "output reserve scaled to") {
			t.Fatalf("--window %s: method %s, warnings %q", w, r.Method, r.Warnings)
		}
	}
}
