package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// callError is one failed summarizer call, described in a short message
// that never includes the request and holds at most a snippet of the
// provider's answer (which the compactor masks before showing).
type callError struct {
	msg        string
	status     int // HTTP status; 0 when there was no answer
	retryable  bool
	retryAfter time.Duration // from Retry-After, when the server sent one
	cause      error         // a sentinel for errors.Is
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.cause }

// Sentinel errors callers branch on.
var (
	// ErrBadResponse marks an answer that is not a usable handoff: empty,
	// refused, cut off by the length limit, or missing sections (then it
	// also wraps compact.ErrIncompleteHandoff).
	ErrBadResponse = errors.New("unusable summarizer response")
	// ErrCircuitOpen is returned without calling the provider while the
	// circuit breaker is open after repeated failures.
	ErrCircuitOpen = errors.New("summarizer circuit breaker open")
	// ErrTimeout matches (errors.Is) the failure of a call that got no
	// answer within Config.Timeout and of a summary past TotalTimeout.
	ErrTimeout = errors.New("summarizer timed out")
)

var (
	errCallTimeout  error = &timeoutError{"call timed out"}
	errTotalTimeout error = &timeoutError{"overall summary timeout reached"}
	errHTTP               = errors.New("summarizer API error")
	errTransport          = errors.New("summarizer unreachable")
)

// timeoutError is a timeout that is ErrTimeout too, its message its own.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string        { return e.msg }
func (e *timeoutError) Is(target error) bool { return target == ErrTimeout }

// tooLargeError is what a bounded answer body returns past its limit.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the answer is larger than %d bytes (MaxAnswerBytes)", e.limit)
}

// traceKey carries a *callTrace in a request's context, so the HTTP layer
// can report what go-openai's errors leave out: the Retry-After header.
type traceKey struct{}

type callTrace struct {
	status     int
	retryAfter time.Duration
}

// tracingDoer records each answer's status and Retry-After in the request
// context's callTrace, and bounds what is read of its body.
type tracingDoer struct {
	next  HTTPDoer
	now   func() time.Time
	limit int64
}

func (d tracingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if tr, ok := req.Context().Value(traceKey{}).(*callTrace); ok && resp != nil {
		tr.status = resp.StatusCode
		tr.retryAfter = parseRetryAfter(resp.Header, d.now())
	}
	if resp != nil && resp.Body != nil && d.limit > 0 {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: d.limit, limit: d.limit}
	}
	return resp, err
}

// boundedBody reads at most limit bytes of an answer; past them it fails
// with a tooLargeError instead of reading on (a 1 GiB answer would otherwise
// be held whole by the JSON decoder).
type boundedBody struct {
	io.ReadCloser
	left, limit int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err // the answer ended exactly at the limit
		}
		return 0, &tooLargeError{limit: b.limit}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// parseRetryAfter reads OpenAI's retry-after-ms, then the standard
// Retry-After in seconds (fractions allowed) or as an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms >= 0 {
			return clampWait(ms / 1000)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return clampWait(s)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// clampWait converts seconds to a duration, capped at a day so that a
// huge or infinite value cannot overflow (the overall timeout gives up on
// such waits anyway).
func clampWait(s float64) time.Duration {
	const day = 24 * time.Hour
	if s >= day.Seconds() {
		return day
	}
	return time.Duration(s * float64(time.Second))
}

// classify turns a go-openai error into a callError. caller is the
// context of the whole Compact call, total the summary's overall timeout,
// call the one call's timeout.
//
// Text from the provider goes through clean before it is cut to a
// snippet, so that a key or secret cut in half is still found.
func classify(err error, tr *callTrace, caller, total, call context.Context, timeout time.Duration, clean func(string) string) error {
	snippet := func(s string) string { return snippet(clean(s)) }
	switch {
	case caller.Err() != nil:
		return caller.Err()
	case total.Err() != nil:
		return &callError{msg: errTotalTimeout.Error(), cause: errTotalTimeout}
	case call.Err() != nil:
		return &callError{msg: fmt.Sprintf("no answer within the call timeout (%s)", timeout), retryable: true, cause: errCallTimeout}
	}
	if tr.status == 0 && isClientSideRejection(err) {
		return &callError{msg: "invalid request: " + snippet(err.Error()), cause: errHTTP}
	}
	if tl := (*tooLargeError)(nil); errors.As(err, &tl) {
		// Not worth a retry: a server that answers this much once will again.
		return &callError{msg: tl.Error(), status: tr.status, cause: ErrBadResponse}
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		code := ""
		if apiErr.Code != nil {
			code = fmt.Sprint(apiErr.Code)
		}
		msg := fmt.Sprintf("HTTP %d", apiErr.HTTPStatusCode)
		if code != "" {
			msg += " " + code
		} else if apiErr.Type != "" {
			msg += " " + apiErr.Type
		}
		if apiErr.Message != "" {
			msg += ": " + snippet(apiErr.Message)
		}
		return statusError(msg, apiErr.HTTPStatusCode, code, tr)
	case errors.As(err, &reqErr):
		msg := fmt.Sprintf("HTTP %d", reqErr.HTTPStatusCode)
		if len(reqErr.Body) > 0 {
			msg += ": " + snippet(string(reqErr.Body))
		}
		return statusError(msg, reqErr.HTTPStatusCode, "", tr)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &callError{msg: "malformed JSON in the answer: " + snippet(err.Error()), retryable: true, cause: ErrBadResponse}
	}
	return &callError{msg: "request failed: " + snippet(err.Error()), retryable: true, cause: errTransport}
}

// isClientSideRejection reports whether go-openai refused the request
// before sending it (a model it knows the endpoint does not serve, a
// parameter a reasoning model does not take): retrying cannot help.
func isClientSideRejection(err error) bool {
	//lint:ignore SA1019 older go-openai paths still return the o1-specific error
	for _, e := range []error{openai.ErrChatCompletionInvalidModel, openai.ErrO1MaxTokensDeprecated,
		openai.ErrReasoningModelMaxTokensDeprecated, openai.ErrO1BetaLimitationsMessageTypes,
		openai.ErrO1BetaLimitationsOther, openai.ErrReasoningModelLimitationsOther} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// statusError decides whether an HTTP failure is worth retrying. Auth,
// unknown models, invalid requests and exhausted quotas are not: they fail
// the same way every time.
func statusError(msg string, status int, code string, tr *callTrace) error {
	e := &callError{msg: msg, status: status, cause: errHTTP}
	switch {
	case status == http.StatusTooManyRequests:
		e.retryable = code != "insufficient_quota"
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooEarly:
		e.retryable = true
	case status >= 500:
		e.retryable = true
	}
	if tr != nil && e.retryable {
		e.retryAfter = tr.retryAfter
	}
	return e
}

// snippet shortens text from a provider to one line of at most 200 bytes.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// backoff returns the wait before retry number n (from 1): exponential from
// base, capped at max, with "equal jitter" (half fixed, half random) so that
// many clients failing together do not retry together.
func backoff(n int, base, limit time.Duration, rnd func(int64) int64) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := int64(d / 2)
	if half <= 0 {
		return d
	}
	return time.Duration(half + rnd(half+1))
}

func randInt64N(n int64) int64 { return rand.Int64N(n) }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
