package serve_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

// stalled opens a connection to the proxy, sends a POST announcing size
// bytes and only the first sent of them, and returns the connection.
func stalled(t *testing.T, proxyURL, path string, size, sent int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(proxyURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		path, size, strings.Repeat("x", sent))
	return c
}

// TestStalledBodyTimesOut (QA-13): a client that announces a body and stops
// sending it gets 408 once the body has brought nothing for the idle
// timeout, and its connection is closed, on the compacting paths and on
// pass-through ones alike.
func TestStalledBodyTimesOut(t *testing.T) {
	r := newRig(t, func(c *serve.Config) { c.BodyIdleTimeout = 300 * time.Millisecond })
	for _, path := range []string{"/v1/chat/completions", "/v1/models"} {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			c := stalled(t, r.proxy.URL, path, 1000, 13)
			c.SetDeadline(time.Now().Add(10 * time.Second))
			start := time.Now()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer to a stalled body: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "request_timeout") {
				t.Errorf("stalled body: %d %s, want 408 request_timeout", resp.StatusCode, b)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("answered after %s, the idle timeout is 300ms", d)
			}
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Errorf("the connection stays open after the timeout")
			}
		})
	}
	r.waitLogsN(t, `"status":408`, 2)
	if m := r.waitMetrics(t, "compact_serve_body_timeouts_total 2"); !strings.Contains(m, "compact_serve_body_timeouts_total 2") {
		t.Errorf("/metrics does not count two body timeouts:\n%s", grepLines(m, "body_timeouts"))
	}
}

// TestSlowBodyServed: a client sending its body slowly but steadily, each
// piece within the idle timeout and the whole longer than it, is served,
// and a streamed answer after it is not cut by the body's deadline.
func TestSlowBodyServed(t *testing.T) {
	r := newRig(t, func(c *serve.Config) { c.BodyIdleTimeout = 1500 * time.Millisecond })
	for _, path := range []string{"/v1/chat/completions", "/v1/models"} {
		t.Run(strings.TrimPrefix(path, "/v1/"), func(t *testing.T) {
			body := request(servetest.Chat, gptModel, conversation(3, 20), true)
			pr, pw := io.Pipe()
			go func() {
				const pieces = 8
				step := (len(body) + pieces - 1) / pieces
				for i := 0; i < len(body); i += step {
					pw.Write(body[i:min(i+step, len(body))])
					time.Sleep(300 * time.Millisecond) // the whole takes longer than the idle timeout
				}
				pw.Close()
			}()
			req, _ := http.NewRequest(http.MethodPost, r.proxy.URL+path, pr)
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("slow body: %d %s", resp.StatusCode, b)
			}
		})
	}
}

// TestBodyBudget (QA-13): bodies take memory as their bytes arrive, not as
// announced, and the bytes held by all requests are bounded: stalled
// clients announcing the maximum body each hold one small chunk, a normal
// request beside them is served, and once the budget is spent a new
// request is answered 503 at once.
func TestBodyBudget(t *testing.T) {
	const chunk = 64 << 10
	r := newRig(t, func(c *serve.Config) {
		c.MaxBodyBytes = 1 << 20
		c.MaxBodyBytesInFlight = 4*chunk + 32<<10
		c.BodyIdleTimeout = 20 * time.Second
	})
	for range 3 {
		stalled(t, r.proxy.URL, "/v1/chat/completions", 1<<20, 13)
	}
	// Each stalled request holds its first chunk, not what it announced.
	held := func(n int) func() bool {
		return func() bool {
			return strings.Contains(r.get(t, "/metrics"), fmt.Sprintf("compact_serve_body_bytes_in_flight %d\n", n))
		}
	}
	waitFor(t, held(3*chunk), "3 stalled requests holding 64 KiB each")
	body := request(servetest.Chat, gptModel, conversation(2, 250), false)
	if len(body) < 40<<10 || len(body) > 90<<10 {
		t.Fatalf("the test body is %d bytes; it must fit beside 3 stalled requests and not beside 4", len(body))
	}
	if status, answer := r.post(t, "/v1/chat/completions", body, nil); status != http.StatusOK {
		t.Fatalf("a request beside 3 stalled 1 MiB announcements: %d %s", status, answer)
	}
	waitFor(t, held(3*chunk), "the request's body released")
	stalled(t, r.proxy.URL, "/v1/chat/completions", 1<<20, 13)
	waitFor(t, held(4*chunk), "4 stalled requests")
	status, answer := r.post(t, "/v1/chat/completions", body, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(answer), "in flight") {
		t.Errorf("a request over the body budget: %d %s, want 503", status, answer)
	}
}

func waitFor(t *testing.T, ok func() bool, what ...any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(append([]any{"timed out waiting"}, what...)...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
