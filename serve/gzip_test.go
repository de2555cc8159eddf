package serve_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestGzipBodies (QA-14.5): a request body sent with Content-Encoding: gzip
// is decoded and compacted like any other (sent on decoded); one under the
// window goes upstream as it came, encoded; the decoded size is bounded by
// --max-body; a body that is not gzip is forwarded as it came.
func TestGzipBodies(t *testing.T) {
	gzipHeader := map[string]string{"Content-Encoding": "gzip"}
	t.Run("over the window", func(t *testing.T) {
		for _, api := range allAPIs {
			r := newRig(t)
			body := request(api, modelFor(api), conversation(40, 8), false)
			if status, answer := r.post(t, apiPaths[api], gz(t, body), gzipHeader); status != http.StatusOK {
				t.Fatalf("%s: %d %s", api, status, answer)
			}
			got := r.up.Last()
			if got.Header.Get("Content-Encoding") != "" || !bytes.Equal(got.Body, got.Decoded) {
				t.Fatalf("%s: a compacted body should go upstream decoded (Content-Encoding %q)", api, got.Header.Get("Content-Encoding"))
			}
			checkCompacted(t, api, body, got.Body)
		}
	})
	t.Run("under the window", func(t *testing.T) {
		r := newRig(t)
		wire := gz(t, request(servetest.Chat, gptModel, conversation(3, 8), false))
		if status, answer := r.post(t, apiPaths[servetest.Chat], wire, gzipHeader); status != http.StatusOK {
			t.Fatalf("%d %s", status, answer)
		}
		got := r.up.Last()
		if got.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(got.Body, wire) {
			t.Fatal("a body under the window should go upstream byte for byte, encoded as it came")
		}
	})
	t.Run("decoded size bounded", func(t *testing.T) {
		r := newRig(t, func(c *serve.Config) { c.MaxBodyBytes = 64 << 10 })
		// 10 MiB of one repeated message: about 10 KB encoded.
		body := `{"model":"tiny-gpt","messages":[{"role":"user","content":"` + strings.Repeat("a", 10<<20) + `"}]}`
		wire := gz(t, []byte(body))
		if len(wire) > 64<<10 {
			t.Fatalf("the encoded body is %d bytes; the test needs it under the limit", len(wire))
		}
		status, answer := r.post(t, apiPaths[servetest.Chat], wire, gzipHeader)
		if status != http.StatusRequestEntityTooLarge || len(r.up.Requests()) != 0 {
			t.Fatalf("a body decoding past --max-body: %d %s", status, answer)
		}
	})
	t.Run("not gzip", func(t *testing.T) {
		r := newRig(t)
		wire := []byte("this is not gzip")
		r.post(t, apiPaths[servetest.Chat], wire, gzipHeader)
		if reqs := r.up.Requests(); len(reqs) != 1 || !bytes.Equal(reqs[0].Body, wire) {
			t.Fatal("a body that is not gzip should be forwarded as it came, for the upstream to answer")
		}
		if logs := r.waitLogs(t, "not valid gzip"); !strings.Contains(logs, "not valid gzip") {
			t.Fatalf("no warning: %s", logs)
		}
	})
}
