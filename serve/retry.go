package serve

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
)

// maxErrorBody is how much of an upstream error answer is read to tell a
// prompt that was too long from other errors. Error answers are small; a
// longer one is passed on untouched.
const maxErrorBody = 1 << 20

// retryTransport sends requests upstream and, when the answer to a
// compacting request says the prompt is too long for the model, compacts
// the request harder and sends it once more. Any other answer, and the
// second answer, go back to the client as they came.
type retryTransport struct {
	base http.RoundTripper
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if err != nil || x == nil || resp.StatusCode < 400 {
		return resp, err
	}
	head, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), rest), rest}
	if rerr != nil || !isOverflow(resp.StatusCode, decoded(resp.Header, head)) {
		return resp, nil
	}
	body, ok := x.force(req.Context())
	if !ok {
		return resp, nil
	}
	resp.Body.Close()
	again := req.Clone(req.Context())
	again.Header.Del("Content-Encoding") // a forced compaction is sent decoded
	again.Body = io.NopCloser(bytes.NewReader(body))
	again.ContentLength = int64(len(body))
	again.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(again)
}

// decoded returns an error answer's text, gunzipped when the client asked
// for gzip and the upstream used it (the transport then leaves the body
// compressed).
func decoded(h http.Header, body []byte) []byte {
	if h.Get("Content-Encoding") != "gzip" {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxErrorBody))
	if err != nil && len(out) == 0 {
		return body
	}
	return out
}

type readCloser struct {
	io.Reader
	io.Closer
}
