package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	goredis "github.com/redis/go-redis/v9"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/redact/casegen"
)

// The every-secret-every-sink harness (issue 17). A secret of every family
// the redaction generator knows (package redact/casegen: vendor tokens,
// keys, passwords, values only their name makes secret) is planted in every
// place data enters compact: the head, the dropped middle and the kept tail
// of a transcript, in plain, JSON-escaped (\u escapes as json.dumps writes
// them), URL, base64, percent-encoded and line-split forms; the API key in
// the environment; credentials in --base-url and in a Redis store's URL;
// --focus; and the LLM server's answers (a handoff that repeats a secret,
// an error that echoes the key). Every place data goes is then read:
// stdout, stderr (progress and error messages), -o, --report, --handoff,
// checkpoint files and every Redis value (a real redis-server with a
// password), the request bodies the LLM server received, the outputs and
// report of compact batch, and what compact checkpoint list/show print.
// No secret may survive anywhere, but the head's and tail's in the
// transcripts written without --redact-kept, which keep those messages
// byte for byte by design.
//
// The planted forms are issue 17's leaks: a token after a \u escape (1), a
// URL password holding # / ? (2), --summarizer prune (3), a provider error
// echoing the key (4), credentials in --base-url and the store's URL (5),
// --focus (6), base64, percent-encoded and line-split secrets (7), and
// --redact-kept (8); a failure names the form and the sink.

// planted is a secret and where it was put.
type planted struct {
	where, family, value string
}

// leakedStrict reports whether a run of secret of min(len, max(12,
// ceil(len/2))) bytes survives in out: the redaction scorer's strict test,
// which also catches a secret masked only in part.
func leakedStrict(secret, out string) bool {
	n := len(secret)
	tl := min(n, max(12, int(math.Ceil(float64(n)/2))))
	for i := 0; i+tl <= n; i++ {
		if strings.Contains(out, secret[i:i+tl]) {
			return true
		}
	}
	return false
}

// secretLine writes a sample as a tool would print it: vendor-shaped
// values bare, the others after their name.
func secretLine(s casegen.Sample) string {
	if s.Shaped && !s.Multiline {
		return "found credential " + s.Value
	}
	return s.Name + "=" + s.Value
}

// plantTranscript writes an OpenAI chat transcript long enough to compact,
// with a secret of every family in its head, its middle and its tail, and
// the middle's secrets again in the forms that hid them from redaction
// before (issue 17 leaks 1, 2, 7). The file escapes every non-ASCII
// character, as Python's json.dumps does.
func plantTranscript(t *testing.T) (string, []planted) {
	t.Helper()
	var secrets []planted
	head, middle, tail := casegen.Samples(1001), casegen.Samples(1002), casegen.Samples(1003)
	type msg map[string]any
	var lines []string
	for _, s := range head {
		lines = append(lines, secretLine(s))
		secrets = append(secrets, planted{"head", s.Family, s.Value})
	}
	msgs := []msg{{"role": "system", "content": "You are a coding agent."},
		{"role": "user", "content": "Fix the flaky test in pkg/cache. My setup:\n" + strings.Join(lines, "\n")}}
	call := 0
	toolCmd := func(cmd, output string) {
		id := fmt.Sprintf("call_%03d", call)
		call++
		args, _ := json.Marshal(map[string]string{"cmd": cmd})
		msgs = append(msgs, msg{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
			"function": map[string]any{"name": "bash", "arguments": string(args)}}}})
		msgs = append(msgs, msg{"role": "tool", "tool_call_id": id, "content": output + "\n" +
			strings.Repeat("--- FAIL: TestEvict (0.01s) cache_test.go:42: got 3 entries, want 2\n", 30)})
	}
	tool := func(output string) { toolCmd("go test ./pkg/cache -run TestEvict -count=1", output) }
	tool("ok") // the first exchange is kept with the head
	for _, s := range middle {
		secrets = append(secrets, planted{"middle", s.Family, s.Value})
		tool(secretLine(s))
	}
	// The forms that hid secrets (a secret of each planted again, in each
	// form, so that no form rides on a plain copy).
	forms := casegen.Samples(1004)
	pick := func(id string) casegen.Sample {
		for _, s := range forms {
			if s.Family == id {
				return s
			}
		}
		t.Fatalf("no family %s", id)
		return casegen.Sample{}
	}
	gh, pw, ant, dd := pick("github-token"), pick("password-strong"), pick("anthropic-api-key"), pick("datadog-api-key")
	jsonOut, _ := json.Marshal(map[string]string{"note": "la clé “" + gh.Value + "” — café", "env": dd.Name + "=«" + dd.Value + "»"})
	tool(asciiEscaped(string(jsonOut))) // leak 1: a token right after \u201c
	secrets = append(secrets, planted{"middle-json-u-escape", gh.Family, gh.Value}, planted{"middle-json-u-escape", dd.Family, dd.Value})
	tool("DATABASE_URL=postgres://admin:" + pw.Value + "#x/y?z@db.internal:5432/app") // leak 2: # / ? in the password
	secrets = append(secrets, planted{"middle-url", pw.Family, pw.Value + "#x/y?z"})
	b64 := base64.StdEncoding.EncodeToString([]byte("ANTHROPIC_API_KEY=" + ant.Value + "\n"))
	tool("$ echo " + b64 + " | base64 -d >> .env") // leak 7: base64-wrapped
	secrets = append(secrets, planted{"middle-base64", ant.Family, b64})
	tool("GET /cb?state=" + url.QueryEscape("token="+gh.Value+"&x=1")) // leak 7: percent-encoded
	secrets = append(secrets, planted{"middle-percent", gh.Family, gh.Value})
	split := len(ant.Value) / 2
	tool("api_key = \"" + ant.Value[:split] + "\n    " + ant.Value[split:] + "\"") // leak 7: split by a line break
	secrets = append(secrets, planted{"middle-split", ant.Family, ant.Value[:split]}, planted{"middle-split", ant.Family, ant.Value[split:]})
	split = len(gh.Value) / 2
	tool("[auth]\r\ntoken = '" + gh.Value[:split] + "\r\n" + gh.Value[split:] + "'\r\n") // QA-3: split by a Windows line break
	secrets = append(secrets, planted{"middle-split-crlf", gh.Family, gh.Value[:split]}, planted{"middle-split-crlf", gh.Family, gh.Value[split:]})

	// Clean calls between the middle and the tail: the kept tail holds at
	// least four messages, and must not reach into the planted middle.
	for range 3 {
		tool("ok")
	}
	lines = lines[:0]
	for _, s := range tail {
		lines = append(lines, secretLine(s))
		secrets = append(secrets, planted{"tail", s.Family, s.Value})
	}
	tool(strings.Join(lines, "\n"))
	// A kept call's command holding a token (QA-20): the reader tags the
	// call with the command (ToolCall.Target), which checkpoints store.
	for _, s := range tail {
		if s.Family == "github-token" {
			toolCmd(`curl -s -H "Authorization: Bearer `+s.Value+`" https://api.github.com/user`, `{"login": "dev"}`)
			secrets = append(secrets, planted{"tail-command", s.Family, s.Value})
		}
	}
	msgs = append(msgs, msg{"role": "assistant", "content": "Fixed: eviction now runs before insert."})
	b, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return asciiEscaped(string(b)), secrets
}

// asciiEscaped escapes every non-ASCII character of a JSON text as \uXXXX.
func asciiEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// redisWithPassword starts a redis-server that requires password, and
// returns its address.
func redisWithPassword(t *testing.T, password string) string {
	t.Helper()
	return storetest.StartRedis(t, "--requirepass", password).Addr()
}

// redisDump returns every key and value of a Redis database, as text.
func redisDump(t *testing.T, addr, password string, db int) string {
	t.Helper()
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: addr, Password: password, DB: db})
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\n")
		switch typ, _ := c.Type(ctx, k).Result(); typ {
		case "string":
			v, _ := c.Get(ctx, k).Result()
			b.WriteString(v)
		case "hash":
			m, _ := c.HGetAll(ctx, k).Result()
			for f, v := range m {
				b.WriteString(f + "=" + v + "\n")
			}
		case "list":
			l, _ := c.LRange(ctx, k, 0, -1).Result()
			b.WriteString(strings.Join(l, "\n"))
		case "set":
			l, _ := c.SMembers(ctx, k).Result()
			b.WriteString(strings.Join(l, "\n"))
		case "zset":
			l, _ := c.ZRange(ctx, k, 0, -1).Result()
			b.WriteString(strings.Join(l, "\n"))
		case "stream":
			xs, _ := c.XRange(ctx, k, "-", "+").Result()
			for _, x := range xs {
				fmt.Fprintf(&b, "%v\n", x.Values)
			}
		default:
			t.Fatalf("redis key %s of type %s: the dump does not read it", k, typ)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// harnessLLM speaks the OpenAI chat completions API. It records every
// request body; it answers with a handoff that repeats answerSecret (a
// model echoing what it should not), or, with echoKey, fails with a 401
// whose message echoes the API key it was sent.
func harnessLLM(t *testing.T, answerSecret string, echoKey bool) (*httptest.Server, func() string) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.String()+"\n"+string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if echoKey {
			key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			w.WriteHeader(http.StatusUnauthorized)
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + key,
				"type": "invalid_request_error", "code": "invalid_api_key"}})
			w.Write(b)
			return
		}
		h := compact.Handoff{TaskSnapshot: "Fix the flaky test in pkg/cache.", Goal: "A green pkg/cache.",
			ErrorsAndFixes: []string{"TestEvict: got 3 entries, want 2", "the deploy used " + answerSecret}}
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": h.Render()}}}})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(bodies, "\n")
	}
}

// filesUnder returns what every regular file under dir holds, by path.
func filesUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// checkSinks fails for every planted secret that survives in a sink.
// kept names the sinks that may hold the head's and tail's secrets (the
// transcripts written without --redact-kept).
func checkSinks(t *testing.T, run string, secrets []planted, sinks map[string]string, kept func(sink string) bool) {
	t.Helper()
	names := make([]string, 0, len(sinks))
	for n := range sinks {
		names = append(names, n)
	}
	sort.Strings(names)
	leaks := 0
	for _, s := range secrets {
		for _, n := range names {
			if (s.where == "head" || strings.HasPrefix(s.where, "tail")) && kept(n) {
				continue
			}
			if leakedStrict(s.value, sinks[n]) {
				leaks++
				if leaks <= 40 {
					t.Errorf("%s: the %s secret (%s, %.12s…) survives in %s", run, s.where, s.family, s.value, n)
				}
			}
		}
	}
	if leaks > 40 {
		t.Errorf("%s: %d leaks in all", run, leaks)
	}
}

// TestEverySecretReachesNoSink is the harness.
func TestEverySecretReachesNoSink(t *testing.T) {
	doc, secrets := plantTranscript(t)
	const (
		apiKey    = "gw-7Hk2pQ9rT4vX8zL1mN6bC3dF5gJ0sA2eHarness"
		basePass  = "Bq7#pZ2/m?Base"
		redisPass = "Rz8!kW3qRedisPass"
		focus     = "the smtp login is deploy and SMTP_PASSWORD=Fq9#tX2m!Focus"
	)
	answer := casegen.Samples(1005)[2].Value // a token the LLM's answer repeats
	secrets = append(secrets,
		planted{"env", "api-key", apiKey},
		planted{"flag", "base-url-password", basePass},
		planted{"flag", "redis-password", redisPass},
		planted{"flag", "focus", "Fq9#tX2m!Focus"},
		planted{"llm-answer", "github-token", answer})
	addr := redisWithPassword(t, redisPass)
	store := "redis://:" + url.PathEscape(redisPass) + "@" + addr + "/0"
	if strings.Contains(store, url.PathEscape(redisPass)) && url.PathEscape(redisPass) != redisPass {
		secrets = append(secrets, planted{"flag", "redis-password", url.PathEscape(redisPass)})
	}

	for _, tc := range []struct {
		name       string
		echoKey    bool // the LLM fails, echoing the key: the fallback writes the handoff (leak 4)
		redactKept bool
		extra      []string
	}{
		{"llm", false, true, nil},
		{"llm-kept-verbatim", false, false, nil},
		{"llm-fails-echoing-the-key", true, true, nil},
		{"prune", false, true, []string{"--summarizer", "prune"}}, // leak 3
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, requests := harnessLLM(t, answer, tc.echoKey)
			u, _ := url.Parse(srv.URL)
			baseURL := "http://harness:" + url.PathEscape(basePass) + "@" + u.Host + "/v1"
			dir := t.TempDir()
			out, files := filepath.Join(dir, "out"), filepath.Join(dir, "store")
			os.Mkdir(out, 0o700)
			environ := map[string]string{"OPENAI_API_KEY": apiKey}
			args := []string{"--force", "--retries", "0", "--keep-tail-tokens", "400", "--base-url", baseURL, "--focus", focus,
				"-o", filepath.Join(out, "compacted.json"), "--report", filepath.Join(out, "report.json"),
				"--handoff", filepath.Join(out, "handoff.md")}
			if tc.redactKept {
				args = append(args, "--redact-kept")
			}
			args = append(args, tc.extra...)
			withStore := func(spec, session string) []string {
				return append(append(args[:len(args):len(args)], "--checkpoint", spec, "--session", session), "-")
			}
			code, stdout, stderr := runCmd(t, doc, environ, withStore(store, "harness-"+tc.name)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// The same with a file store.
			code, stdout2, stderr2 := runCmd(t, doc, environ, withStore(files, "harness-files")...)
			if code != exitOK {
				t.Fatalf("file store: exit %d: %s", code, stderr2)
			}
			sinks := filesUnder(t, dir)
			sinks["stdout"], sinks["stderr"], sinks["stdout (file store)"], sinks["stderr (file store)"] = stdout, stderr, stdout2, stderr2
			sinks["redis"] = redisDump(t, addr, redisPass, 0)
			sinks["llm requests"] = requests()
			for _, cmd := range [][]string{{"checkpoint", "list", "--store", store}, {"checkpoint", "show", "harness-" + tc.name, "--store", store},
				{"checkpoint", "show", "harness-" + tc.name, "--store", store, "--json"}, {"checkpoint", "list", "--store", files},
				{"checkpoint", "list", "--store", "redis://:wrong-" + redisPass + "@" + addr + "/0"}} {
				_, o, e := runCmd(t, "", nil, cmd...)
				sinks[strings.Join(cmd[:2], " ")+" "+strings.Join(cmd[2:], " ")] = o + e
			}
			if !strings.Contains(sinks["llm requests"], "chat/completions") && tc.extra == nil {
				t.Fatal("the LLM server got no request")
			}
			checkSinks(t, tc.name, secrets, sinks, func(sink string) bool {
				return !tc.redactKept && (strings.HasSuffix(sink, "compacted.json") || strings.HasPrefix(sink, "stdout"))
			})
		})
	}

	t.Run("batch", func(t *testing.T) {
		srv, requests := harnessLLM(t, answer, false)
		u, _ := url.Parse(srv.URL)
		in, out, dir := t.TempDir(), t.TempDir(), t.TempDir()
		writeFiles(t, in, map[string]string{"a.json": doc})
		rep := filepath.Join(dir, "batch-report.json")
		environ := map[string]string{"OPENAI_API_KEY": apiKey}
		code, stdout, stderr := runCmd(t, "", environ, "batch", in, "--out", out, "--store", store, "--report", rep, "--force", "--keep-tail-tokens", "400",
			"--retries", "0", "--base-url", "http://harness:"+url.PathEscape(basePass)+"@"+u.Host+"/v1", "--focus", focus)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		sinks := filesUnder(t, out)
		for p, s := range filesUnder(t, dir) {
			sinks[p] = s
		}
		sinks["stdout"], sinks["stderr"], sinks["redis"], sinks["llm requests"] = stdout, stderr, redisDump(t, addr, redisPass, 0), requests()
		_, o, e := runCmd(t, "", nil, "checkpoint", "list", "--store", store)
		sinks["checkpoint list"] = o + e
		checkSinks(t, "batch", secrets, sinks, func(sink string) bool {
			return strings.HasPrefix(sink, out) && strings.HasSuffix(sink, "a.json") // the compacted transcript
		})
	})

	t.Run("redact", func(t *testing.T) {
		code, stdout, stderr := runCmd(t, doc, nil, "redact", "--report", "-")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var transcriptSecrets []planted
		for _, s := range secrets {
			if s.where != "env" && s.where != "flag" && s.where != "llm-answer" {
				transcriptSecrets = append(transcriptSecrets, s)
			}
		}
		checkSinks(t, "redact", transcriptSecrets, map[string]string{"stdout": stdout, "stderr": stderr}, func(string) bool { return false })
		if !json.Valid([]byte(stdout)) {
			t.Fatal("compact redact broke the JSON")
		}
	})
}
