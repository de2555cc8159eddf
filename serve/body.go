package serve

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file reads request bodies: with deadlines a slow but live client
// meets and a stalled one does not, into memory that grows as bytes arrive,
// within a budget shared by every request.

// Body reading defaults.
const (
	// DefaultBodyIdleTimeout is how long a request body may bring no byte.
	DefaultBodyIdleTimeout = 30 * time.Second
	// DefaultBodyTimeout bounds the reading of a whole request body: 64 MiB
	// at 256 KiB/s.
	DefaultBodyTimeout = 5 * time.Minute
)

// ErrBodyTimeout is the error of a request body that stalled or took too
// long; the client is answered 408.
var ErrBodyTimeout = errors.New("request body timed out")

// errBusy is returned when buffering a body would pass the budget of body
// bytes held by all requests; the client is answered 503.
var errBusy = errors.New("too many request body bytes in flight")

// deadlineBody reads a request body with a read deadline on the connection,
// pushed back before each read: a read that brings nothing for idle fails,
// and so does any read after end. Once the body is read to its end the
// deadline is lifted, so that a long streamed answer is not cut; after a
// timeout it is left in the past, so the connection is closed rather than
// drained.
type deadlineBody struct {
	rc   *http.ResponseController
	body io.Reader
	idle time.Duration
	end  time.Time
	read int64
	// err is the first error other than io.EOF the body gave; the
	// transport reads the body on a goroutine of its own, so others ask
	// failure.
	mu  sync.Mutex
	err error
}

// failure returns the first error other than io.EOF the body gave.
func (b *deadlineBody) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func newDeadlineBody(w http.ResponseWriter, body io.Reader, idle, total time.Duration) *deadlineBody {
	return &deadlineBody{rc: http.NewResponseController(w), body: body, idle: idle, end: time.Now().Add(total)}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if err := b.failure(); err != nil {
		return 0, err
	}
	d := time.Now().Add(b.idle)
	if d.After(b.end) {
		d = b.end
	}
	b.rc.SetReadDeadline(d) // not supported (HTTP/2): no deadline, as before
	n, err := b.body.Read(p)
	b.read += int64(n)
	switch {
	case err == io.EOF:
		b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		what := fmt.Sprintf("no byte for %s", b.idle)
		if !time.Now().Before(b.end) {
			what = "it took too long"
		}
		err = fmt.Errorf("%w after %d bytes: %s", ErrBodyTimeout, b.read, what)
		fallthrough
	case err != nil:
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	if c, ok := b.body.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// done lifts the deadline once the body was read as far as it is needed
// without an error.
func (b *deadlineBody) done() {
	if b.failure() == nil {
		b.rc.SetReadDeadline(time.Time{})
	}
}

// byteBudget bounds the body bytes held in memory by all requests at once.
type byteBudget struct {
	max  int64
	used atomic.Int64
}

func (bb *byteBudget) take(n int64) bool {
	if bb.used.Add(n) > bb.max {
		bb.used.Add(-n)
		return false
	}
	return true
}

func (bb *byteBudget) give(n int64) { bb.used.Add(-n) }

// bodyBuffer is a request's share of the budget.
type bodyBuffer struct {
	budget *byteBudget
	held   int64
}

// grow makes room for n more bytes of the budget.
func (b *bodyBuffer) grow(n int64) error {
	if !b.budget.take(n) {
		return fmt.Errorf("%w (%d bytes, --max-body-in-flight)", errBusy, b.budget.max)
	}
	b.held += n
	return nil
}

// release gives back what the request held.
func (b *bodyBuffer) release() {
	b.budget.give(b.held)
	b.held = 0
}

// minBodyChunk is the first allocation for a body of unknown or large size.
const minBodyChunk = 64 << 10

// firstChunks are first chunks of bodies that outgrew them.
var firstChunks = sync.Pool{New: func() any {
	b := make([]byte, minBodyChunk)
	return &b
}}

// readAll reads r to its end, or to want bytes when want > 0 (the
// Content-Length), allocating as the bytes arrive: a client that announces
// 64 MiB and sends 13 bytes holds 64 KiB. More than limit bytes is a
// *http.MaxBytesError.
func (b *bodyBuffer) readAll(r io.Reader, want, limit int64) ([]byte, error) {
	if want > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	c := min(int64(minBodyChunk), limit+1)
	if want > 0 {
		c = min(c, want)
	}
	if err := b.grow(c); err != nil {
		return nil, err
	}
	var buf []byte
	if c == minBodyChunk {
		buf = (*firstChunks.Get().(*[]byte))[:0]
	} else {
		buf = make([]byte, 0, c)
	}
	for {
		if want > 0 && int64(len(buf)) == want {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			next := int64(cap(buf)) * 2
			if want > 0 {
				next = min(next, want)
			}
			next = min(next, limit+1)
			if next <= int64(cap(buf)) {
				return nil, &http.MaxBytesError{Limit: limit}
			}
			if err := b.grow(next - int64(cap(buf))); err != nil {
				return nil, err
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			if cap(buf) == minBodyChunk {
				// Nothing else holds the first chunk: the next body of
				// more than a chunk starts in it.
				first := buf[:0]
				firstChunks.Put(&first)
			}
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		if err == io.EOF {
			if want > 0 && int64(len(buf)) < want {
				return nil, io.ErrUnexpectedEOF
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// gzipped reports whether a Content-Encoding is gzip, which the compacting
// paths decode; other encodings are passed through as they are.
func gzipped(encoding string) bool {
	e := strings.ToLower(strings.TrimSpace(encoding))
	return e == "gzip" || e == "x-gzip"
}

// errBadGzip marks a body that says it is gzip and is not.
var errBadGzip = errors.New("the body is not valid gzip")

// gunzip decodes a gzip body into buf's share of the budget, bounded by
// limit on the decoded size (a small body may decode to a very large one).
func (b *bodyBuffer) gunzip(wire []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadGzip, err)
	}
	out, err := b.readAll(zr, 0, limit)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge), errors.Is(err, errBusy):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errBadGzip, err)
	}
	return out, nil
}
