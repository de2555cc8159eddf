package main

// QA-2 (issue 17 leak 5): a password in a store, upstream or base URL is
// never printed, whether the URL is unreachable, malformed, or fine.

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/internal/syncbuffer"
	"github.com/compactkit/compact/serve/servetest"
	"github.com/redis/go-redis/v9"
)

const urlPassword = "UrlPw55zzQA"

// storeForms are store URLs holding urlPassword that cannot be opened:
// malformed (a bad database number, a malformed host, a password with
// characters net/url will not take, an unknown scheme), and, on the redis
// server at addr, a password the server refuses (as written, with a user,
// percent-encoded, as the user name).
func storeForms(addr string) []string {
	return []string{
		"redis://user:" + urlPassword + "@127.0.0.1:1/notanumber",
		"redis://user:" + urlPassword + "@[::1:1/0",
		"rediss://user:" + urlPassword + "#/x@127.0.0.1:1/0",
		"memcache://user:" + urlPassword + "@127.0.0.1:1",
		"redis://:" + urlPassword + "@" + addr + "/0",
		"redis://user:" + urlPassword + "@" + addr + "/0",
		"redis://user:" + urlPassword + "%40x@" + addr + "/0",
		"redis://" + urlPassword + "@" + addr + "/0",
	}
}

func assertNoPassword(t *testing.T, what string, code int, out ...string) {
	t.Helper()
	all := strings.Join(out, "")
	if strings.Contains(all, urlPassword) || strings.Contains(all, "UrlPw55zzQA@x") {
		t.Errorf("%s: exit %d, the password is printed:\n%s", what, code, all)
	}
	if code == 0 {
		t.Errorf("%s: exit 0", what)
	}
}

func TestStorePasswordNeverPrinted(t *testing.T) {
	srv := storetest.StartRedis(t)
	// A server with another password: every form below is refused.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	if err := rdb.ConfigSet(context.Background(), "requirepass", "the-right-one").Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
	in := filepath.Join(t.TempDir(), "chat.json")
	os.WriteFile(in, []byte(chat(40)), 0o600)
	outDir := t.TempDir()
	forms := storeForms(srv.Addr())
	// One unreachable server (go-redis retries for a second or two).
	forms = append(forms, "redis://:"+urlPassword+"@127.0.0.1:1/0")
	for k, spec := range forms {
		cmds := [][]string{
			{"checkpoint", "list", "--store", spec},
			{"checkpoint", "verify", "--store", spec},
			{"checkpoint", "show", "--store", spec, "s1"},
			{"--force", "--summarizer", "fallback", "--checkpoint", spec, "--session", "s1", "-o", filepath.Join(outDir, "o.json"), in},
			{"batch", "--store", spec, "--summarizer", "fallback", "--out", filepath.Join(outDir, "b"), in},
			{"serve", "--listen", "127.0.0.1:0", "--store", spec},
		}
		if k == len(forms)-1 {
			cmds = cmds[:1]
		}
		for _, args := range cmds {
			code, stdout, stderr := runCmd(t, "", nil, args...)
			assertNoPassword(t, strings.Join(args, " "), code, stdout, stderr)
		}
		code, stdout, stderr := runCmd(t, "", map[string]string{checkpointStoreEnv: spec}, "checkpoint", "list")
		assertNoPassword(t, "$"+checkpointStoreEnv+"="+spec, code, stdout, stderr)
	}
}

// TestUpstreamAndBaseURLPasswordNeverPrinted: serve's upstreams (its
// start-up line, malformed ones) and the LLM base URL (unreachable or
// malformed, in the main command and in serve).
func TestUpstreamAndBaseURLPasswordNeverPrinted(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--openai-upstream", "http://admin:" + urlPassword + "@[::1:9901"},
		{"serve", "--listen", "127.0.0.1:0", "--anthropic-upstream", "ftp://admin:" + urlPassword + "@127.0.0.1:9901"},
		{"serve", "--listen", "127.0.0.1:0", "--summarizer", "llm", "--base-url", "http://u:" + urlPassword + "@[::1:1/v1"},
	} {
		code, stdout, stderr := runCmd(t, "", nil, args...)
		assertNoPassword(t, strings.Join(args, " "), code, stdout, stderr)
	}
	in := filepath.Join(t.TempDir(), "chat.json")
	os.WriteFile(in, []byte(chat(40)), 0o600)
	for i, base := range []string{"http://u:" + urlPassword + "@127.0.0.1:1/v1", "http://u:" + urlPassword + "@[::1:1/v1", "http://u:" + urlPassword + "/x@127.0.0.1:1/v1"} {
		tmp := t.TempDir()
		report, handoff := filepath.Join(tmp, "report.json"), filepath.Join(tmp, "handoff.md")
		code, stdout, stderr := runCmd(t, "", map[string]string{"OPENAI_API_KEY": "sk-test"}, "--force", "--summarizer", "auto", "--base-url", base,
			"--retries", "0", "--timeout", "2s", "--report", report, "--handoff", handoff, "-o", filepath.Join(tmp, "o.json"), in)
		rep, _ := os.ReadFile(report)
		ho, _ := os.ReadFile(handoff)
		if code == 0 {
			code = -1 // a fallback compaction succeeds: only the text matters
		}
		assertNoPassword(t, "--base-url "+base, code, stdout, stderr, string(rep), string(ho))
		// The first is unreachable (a fallback compaction with the
		// failure in its warnings); the others do not parse (usage error).
		if i == 0 && !strings.Contains(string(rep), "warnings") || i > 0 && code != exitUsage {
			t.Errorf("--base-url %s: no report: %s %s", base, rep, stderr)
		}
	}

	// A working upstream with a password: the start-up line masks it.
	upSrv := httptest.NewServer(&servetest.Upstream{})
	defer upSrv.Close()
	withPw := strings.Replace(upSrv.URL, "http://", "http://admin:"+urlPassword+"@", 1)
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncbuffer.Buffer{}
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: stderr, getenv: func(string) string { return "" }}
	done := make(chan int)
	go func() {
		done <- run(ctx, e, []string{"serve", "--listen", "127.0.0.1:0", "--openai-upstream", withPw, "--anthropic-upstream", withPw, "--summarizer", "fallback"})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "listening on") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if !strings.Contains(stderr.String(), "listening on") || !strings.Contains(stderr.String(), "admin:[REDACTED:url-password]@") {
		t.Errorf("serve's start-up line: %s", stderr.String())
	}
	assertNoPassword(t, "serve start-up", 1, stderr.String())
}
