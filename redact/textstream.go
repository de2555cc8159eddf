package redact

import (
	"errors"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Text read as a stream. RedactTextTo reads its input in windows: the
// piece it writes next, with overlap bytes of text on each side of it.
// Every detector reads a bounded neighbourhood of what it finds (a value
// at most 4 KiB long, a manifest 8 KiB either side of its kind: line, an
// encoded run at most 64 KiB, a PEM body up to the END line at most 1 MiB
// on, keys and values joined over a few lines), so the spans a window
// finds in its middle are those the whole text holds there. A window
// writes up to a cut that no span crosses (the last line start before
// its right overlap, where there is one) and keeps overlap bytes before
// the cut as the next window's left context. Masks are numbered when
// written, in the order they appear (see masker.draft), so the numbers
// are the whole text's too.
const (
	// textPiece is about what one window writes: with two overlaps
	// around it, a window reads about 1.4 times what it writes.
	textPiece = 5 << 20
	// textOverlap covers the longest reach of a detector, the PEM
	// detector's search for an END line (1 MiB), with room to spare.
	textOverlap = 1<<20 + 64<<10
)

// maxMaskLen bounds the length of a mask ([REDACTED:label#n]), for the
// masks cut by a read.
const maxMaskLen = len(maskKeyword) + 1 + 64 + 1 + 20 + 1

// textStreamer holds the sizes of a stream's windows, so tests can make
// them small.
type textStreamer struct {
	piece, overlap int
	// crossings counts spans found across a window's limit (where its
	// right overlap starts): cuts a test made secrets straddle.
	crossings int
	// stallAfter is how long a read waits before what is safe to write is
	// written (0: never; see stalled).
	stallAfter time.Duration
	timer      *time.Timer
	// flushes counts the stall flushes that wrote something.
	flushes int
	// keyOpen: the last window ended inside a private key's body.
	keyOpen bool

	s     *Scope
	w     io.Writer
	found func(Finding) error

	// mu guards what follows; run holds it except while it reads, when
	// the reader fills buf past its length and a stall flush may write.
	mu       sync.Mutex
	buf      []byte // the stream from base on
	base     int
	done     int // written up to here
	reserved int // masks reserved up to here
	lc       lineCounter
	err      error // a stall flush's failure, returned by run
	closed   bool
}

// RedactText is Redact for text that is not JSON as a whole: each line of
// it that is a JSON value is read as one (its literals decoded, masks kept
// inside them), the rest as plain text, whatever the whole document looks
// like. It is what RedactTextTo writes, for a text held in memory.
func (s *Scope) RedactText(text string) (string, []Finding) {
	s.m.reserve(text)
	v := newLinesView(text)
	spans := s.r.findInView(text, v, s.m)
	v.release()
	return s.r.apply(text, spans, s.m)
}

// RedactTextTo reads text from r and writes it to w with every secret
// masked, as RedactText would, holding only a few MiB of it at a time
// (the bytes, and the masks, are those RedactText writes for the whole
// text, provided no multi-line construct — a PEM body, a YAML block, a
// Kubernetes manifest's data — reaches further than a MiB, and no mask
// the input already holds lies more than a MiB ahead of the first secret
// numbered after it; a private key whose body is longer than a MiB is
// masked in pieces, each piece a mask, where RedactText writes one). Each
// finding is passed to found, if set, as it is
// written: Start and End are byte offsets into the stream, Line and
// Column (1-based, in bytes) where it starts. An error from r, w or found
// stops the stream.
//
// A stream that stops (tail -f log | compact redact) is not held back a
// window's worth: when a read has waited StallFlush, the whole lines read
// so far are written, up to the first that a line still to come could
// change (a private key without its END line, an open YAML block or
// Kubernetes data map, a token split over lines; see holdFrom), and w is
// flushed if it has a Flush() error method (a bufio.Writer). That write
// and the calls of found it makes come from another goroutine while
// RedactTextTo waits in r.Read, never at the same time as its own, and
// never after it returns.
func (s *Scope) RedactTextTo(w io.Writer, r io.Reader, found func(Finding) error) error {
	ts := &textStreamer{piece: textPiece, overlap: textOverlap, stallAfter: StallFlush}
	return ts.run(s, w, r, found)
}

// StallFlush is how long RedactTextTo lets a read wait before it writes
// what it holds that is safe to write.
const StallFlush = 50 * time.Millisecond

// ReserveFrom reads r and reserves the masks it holds, as NewScope does for
// texts in memory: a caller that can read its input twice (a file) calls
// it before RedactTextTo, so that no new secret takes the number of a mask
// further on in the input.
func (s *Scope) ReserveFrom(r io.Reader) error {
	// 64 KiB reads: a tiny input costs no more than a tiny buffer (a MiB
	// here was most of a small redact's start-up memory), a large one a
	// few more reads.
	buf := make([]byte, 64<<10)
	keep := 0 // bytes carried over: a mask the last read cut
	for {
		n, err := io.ReadFull(r, buf[keep:])
		if n > 0 {
			text := string(buf[:keep+n])
			s.m.reserve(text)
			keep = min(maxMaskLen, len(text))
			copy(buf, text[len(text)-keep:])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// lineCounter turns stream offsets, met in order, into lines and columns.
type lineCounter struct {
	at, line, lineStart int // counted up to at: line holds at, and starts at lineStart
}

// advance counts the lines of text, which starts at offset from, up to
// offset to (at ≤ to ≤ from+len(text)).
func (lc *lineCounter) advance(text string, from, to int) {
	seg := text[lc.at-from : to-from]
	if n := strings.Count(seg, "\n"); n > 0 {
		lc.line += n
		lc.lineStart = lc.at + strings.LastIndexByte(seg, '\n') + 1
	}
	lc.at = to
}

func (ts *textStreamer) run(s *Scope, w io.Writer, r io.Reader, found func(Finding) error) error {
	ts.s, ts.w, ts.found = s, w, found
	ts.lc = lineCounter{line: 1}
	if ts.stallAfter > 0 {
		ts.timer = time.AfterFunc(time.Hour, ts.stalled)
		ts.timer.Stop()
	}
	defer func() {
		if ts.timer != nil {
			ts.timer.Stop()
		}
		ts.mu.Lock()
		ts.closed = true // a stall flush that fires now does nothing
		ts.mu.Unlock()
	}()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	eof := false
	for {
		// Read the next piece and the overlap after it.
		for need := ts.done - ts.base + ts.piece + ts.overlap; !eof && len(ts.buf) < need; need = ts.done - ts.base + ts.piece + ts.overlap {
			if len(ts.buf) == cap(ts.buf) { // grown as the input proves long
				nb := make([]byte, len(ts.buf), min(need, max(2*cap(ts.buf), 64<<10)))
				copy(nb, ts.buf)
				ts.buf = nb
			}
			n, err := ts.read(r, ts.buf[len(ts.buf):min(need, cap(ts.buf))])
			ts.buf = ts.buf[:len(ts.buf)+n]
			switch {
			case ts.err != nil: // a stall flush failed to write
				return ts.err
			case errors.Is(err, io.EOF):
				eof = true
			case err != nil:
				return err
			}
			ts.keepOverlap()
		}
		if len(ts.buf) == 0 {
			return nil
		}
		text := unsafe.String(unsafe.SliceData(ts.buf), len(ts.buf))
		base, end := ts.base, ts.base+len(ts.buf)
		ts.reserve(text)

		v := newLinesView(text)
		spans := s.r.findInView(text, v, s.m)
		v.release()
		if ts.keyOpen {
			spans = ts.keyRest(text, spans, ts.done-base)
		}
		cut := end
		ts.keyOpen = false
		if !eof {
			limit := end - ts.overlap
			cut = base + ts.cutAt(text, spans, ts.done-base, limit-base)
		}
		if cut > ts.done {
			if err := ts.write(text, cut, spans); err != nil {
				return err
			}
		}
		if eof && ts.done == end {
			return nil
		}
		ts.keepOverlap()
	}
}

// read reads into p with the lock released, so that a stall flush can
// write what is safe while the read waits.
func (ts *textStreamer) read(r io.Reader, p []byte) (int, error) {
	ts.mu.Unlock()
	defer ts.mu.Lock()
	if ts.timer != nil {
		ts.timer.Reset(ts.stallAfter)
		defer ts.timer.Stop()
	}
	return r.Read(p)
}

// keepOverlap drops what lies more than an overlap before done: the next
// window's left context is all that is kept of the text written.
func (ts *textStreamer) keepOverlap() {
	if keep := max(ts.base, ts.done-ts.overlap); keep > ts.base {
		n := copy(ts.buf, ts.buf[keep-ts.base:])
		ts.buf, ts.base = ts.buf[:n], keep
	}
}

// reserve reserves the masks of the text read since the last call.
func (ts *textStreamer) reserve(text string) {
	end := ts.base + len(text)
	if from := max(ts.base, ts.reserved-maxMaskLen); from < end {
		ts.s.m.reserve(text[from-ts.base:])
		ts.reserved = end
	}
}

// cutAt returns where a window whose text was written up to lo, and whose
// right overlap starts at limit, is written to: the last line start after
// lo and at or before limit that no span crosses, else the last such
// place; where spans cover all of it, the end of the span across limit
// (a piece smaller than a span), and only where that span runs to the
// window's end (it is longer than an overlap) limit itself, the span
// masked in two parts.
func (ts *textStreamer) cutAt(text string, spans []cand, lo, limit int) int {
	crossing := func(p int) (int, bool) {
		i := sort.Search(len(spans), func(i int) bool { return spans[i].end > p })
		if i < len(spans) && spans[i].start < p {
			return i, true
		}
		return 0, false
	}
	if _, ok := crossing(limit); ok {
		ts.crossings++
	}
	for p := limit; p > lo; {
		q := p
		if nl := strings.LastIndexByte(text[lo:p], '\n'); nl >= 0 {
			q = lo + nl + 1
		}
		i, ok := crossing(q)
		if !ok {
			return q
		}
		p = spans[i].start
	}
	i, ok := crossing(limit)
	if ok && spans[i].end < len(text) {
		return spans[i].end
	}
	// A private key runs on past the window: the next window, which
	// starts in its body with no BEGIN line in sight, masks the rest.
	ts.keyOpen = ok && spans[i].rule.label == "private-key"
	return limit
}

// keyRest adds to spans, found in a window that starts inside the body of
// a private key (keyOpen: it ran on past the last window), the rest of
// that body from lo: its base64 lines up to the END line or whatever else
// stops them. The key is masked in pieces where the whole text shows one
// (a body longer than the overlap), but none of it is let out.
func (ts *textStreamer) keyRest(text string, spans []cand, lo int) []cand {
	e := truncatedPEMEnd(text, lo)
	if k := strings.Index(text[lo:e], "-----END"); k >= 0 {
		e = lo + k
	}
	for e > lo && isSpace(text[e-1]) {
		e--
	}
	if e <= lo {
		return spans
	}
	key := cand{start: lo, end: e, rule: ts.s.r.eng.labelRule("private-key")}
	out := make([]cand, 0, len(spans)+1)
	for _, c := range spans {
		switch {
		case c.end <= key.start:
			out = append(out, c)
		case c.start >= key.end:
			if key.rule != nil {
				out = append(out, key)
				key.rule = nil
			}
			out = append(out, c)
		default: // overlaps the key: one span
			key.start, key.end = min(key.start, c.start), max(key.end, c.end)
		}
	}
	if key.rule != nil {
		out = append(out, key)
	}
	return out
}

// write masks text[done-base : cut-base] with the spans that lie in it,
// writes it and passes on its findings, and moves done to cut. A span that
// starts before done (found again at the edge of a window, or too long
// for one) is masked from done on.
func (ts *textStreamer) write(text string, cut int, spans []cand) error {
	s, base, done, lc := ts.s, ts.base, ts.done, &ts.lc
	seg := text[done-base : cut-base]
	var in []cand
	for _, c := range spans {
		cs, ce := c.start+base, c.end+base
		if ce <= done || cs >= cut {
			continue
		}
		c.start, c.end = max(cs, done)-done, min(ce, cut)-done
		in = append(in, c)
	}
	out, fs := s.r.apply(seg, in, s.m)
	ts.done = cut
	if _, err := io.WriteString(ts.w, out); err != nil {
		return err
	}
	if ts.found == nil {
		return nil
	}
	for _, f := range fs {
		f.Start, f.End = f.Start+done, f.End+done
		lc.advance(text, base, f.Start)
		f.Line, f.Column = lc.line, f.Start-lc.lineStart+1
		if err := ts.found(f); err != nil {
			return err
		}
	}
	lc.advance(text, base, cut)
	return nil
}

// Stall flushes. A text read from a pipe (tail -f log | compact redact) may
// stop for a while in the middle of a window; what it holds so far is
// written when the read has waited stallAfter, up to the last line start
// that no secret still to come can reach back over:
//
//   - no span found crosses it;
//   - no construct that a later line may still extend or turn into a
//     secret starts before it (holdFrom): a PEM or PuTTY key whose END
//     has not come, a YAML block scalar or a Kubernetes data map still
//     open (a Secret's kind: line may follow its data by up to 8 KiB), a
//     Terraform variable block not closed, a line ending in an open quote
//     or a backslash (a token or command split over lines), an odd
//     backtick (a value quoted across lines).
//
// What is written is what the whole text's redaction writes there, masks
// and their numbers included, except where the input itself holds masks
// further on (a stream cannot reserve their numbers before it reads them).

// stallContext is the left context a stall flush scans before what it
// writes: more than the reach back of any construct a stall flush lets
// through (a YAML block's 64 KiB).
const stallContext = 128 << 10

// stalled is run by the timer when a read has waited stallAfter.
func (ts *textStreamer) stalled() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed || ts.err != nil {
		return
	}
	wrote, err := ts.flushSafe()
	if err == nil && wrote {
		if f, ok := ts.w.(interface{ Flush() error }); ok {
			err = f.Flush()
		}
	}
	ts.err = err
}

// flushSafe writes the text read, up to the last place no secret still to
// come can change (see above).
func (ts *textStreamer) flushSafe() (bool, error) {
	if ts.keyOpen {
		return false, nil // inside a key longer than a window: wait for the window
	}
	text := unsafe.String(unsafe.SliceData(ts.buf), len(ts.buf))
	lo := ts.done - ts.base
	last := strings.LastIndexByte(text[lo:], '\n')
	if last < 0 {
		return false, nil // no whole line yet
	}
	limit := min(lo+last+1, holdFrom(text, lo))
	if limit <= lo {
		return false, nil
	}
	ts.reserve(text)
	// Scan from a line start stallContext before done: the spans of the
	// text written are those the whole window shows there.
	from := 0
	if lo > stallContext {
		from = lineStart(text, lo-stallContext)
	}
	view := text[from:]
	v := newLinesView(view)
	spans := ts.s.r.findInView(view, v, ts.s.m)
	v.release()
	for i := range spans {
		spans[i].start += from
		spans[i].end += from
	}
	cut := lo
	for p := limit; p > lo; {
		i := sort.Search(len(spans), func(i int) bool { return spans[i].end > p })
		if i == len(spans) || spans[i].start >= p {
			cut = p
			break
		}
		p = lineStart(text, spans[i].start)
	}
	if cut <= lo {
		return false, nil
	}
	ts.flushes++
	return true, ts.write(text, ts.base+cut, spans)
}

// lineStart returns the start of the line holding t[i].
func lineStart(t string, i int) int {
	return strings.LastIndexByte(t[:i], '\n') + 1
}

// holdFrom returns where the text to keep back starts: the first line, at
// or after from, of a construct still open at the text's end (see the
// stall flushes above); len(t) if none is.
func holdFrom(t string, from int) int {
	hold := len(t)
	keep := func(i int) { hold = min(hold, lineStart(t, i)) }
	p := t[from:]
	lower := lowerBytes(p) // offsets kept: non-ASCII bytes stay as they are
	// A private key whose END line has not come.
	if b := strings.LastIndex(lower, "-----begin "); b >= 0 && !strings.Contains(lower[b:], "-----end") {
		keep(from + b)
	}
	if b := strings.LastIndex(lower, "putty-user-key-file"); b >= 0 && !strings.Contains(lower[b:], "private-mac:") {
		keep(from + b)
	}
	// A Kubernetes data map a kind: Secret line may still follow, within
	// 8 KiB and the same document.
	if k8s := max(from, len(t)-(8192+64)); k8s < len(t) {
		q, lq := t[k8s:], lower[k8s-from:]
		for _, key := range []string{"data:", "stringdata:", `"data":`, `"stringdata":`} {
			for off := 0; ; {
				b := strings.Index(lq[off:], key)
				if b < 0 {
					break
				}
				at := k8s + off + b
				off += b + len(key)
				if strings.Contains(q[off:], "\n---") {
					continue
				}
				if key[0] == '"' || lineSepBefore(t, at-indentBefore(t, at)) {
					keep(at)
					break
				}
			}
		}
	}
	// A Terraform variable block not closed.
	for off := 0; ; {
		b := strings.Index(lower[off:], "variable")
		if b < 0 {
			break
		}
		at := from + off + b
		off += b + 1
		if lineSepBefore(t, at-indentBefore(t, at)) && strings.Count(p[off:], "{") > strings.Count(p[off:], "}") {
			keep(at)
			break
		}
	}
	// An odd backtick: a value quoted across lines (for up to 16 KiB).
	if strings.Count(p, "`")%2 == 1 {
		if b := from + strings.LastIndexByte(p, '`'); len(t)-b < 16<<10 {
			keep(b)
		}
	}
	// The last lines: a YAML block scalar still open, a line that ends in
	// an open quote or a backslash.
	end := strings.LastIndexByte(p, '\n')
	if end < 0 {
		return hold
	}
	for e, n := from+end, 0; e >= from && n < 64; n++ {
		s := lineStart(t, e)
		line := strings.TrimRight(t[s:e], "\r")
		if openLine(line) {
			keep(s)
		}
		if blockHeader(line) && blockOpen(t, s, e) {
			keep(s)
		}
		e = s - 1
	}
	return hold
}

// openLine reports a line that a later line may continue: it ends in a
// backslash or inside a quoted token (a key split over lines).
func openLine(line string) bool {
	if strings.HasSuffix(line, "\\") {
		return true
	}
	i := len(line)
	for i > 0 && splitRunByte(line[i-1]) {
		i--
	}
	return i < len(line) && i > 0 && isQuote(line[i-1])
}

// blockHeader reports a line that opens a YAML block scalar (key: | or
// key: >).
func blockHeader(line string) bool {
	line = strings.TrimRight(line, " \t")
	c := strings.LastIndex(line, ":")
	if c < 0 {
		return false
	}
	v := strings.TrimSpace(line[c+1:])
	return isBlockIndicator(v)
}

// blockOpen reports whether every non-blank line after the header line
// t[s:e] to the text's end is indented deeper than the header: the block
// may go on.
func blockOpen(t string, s, e int) bool {
	ind, _ := indentAt(t, s)
	for i := e + 1; i < len(t); {
		j := strings.IndexByte(t[i:], '\n')
		if j < 0 {
			j = len(t) - i
		}
		line := t[i : i+j]
		if strings.TrimSpace(line) != "" && len(line)-len(strings.TrimLeft(line, " \t")) <= ind {
			return false
		}
		i += j + 1
	}
	return true
}

// lowerBytes returns s with its ASCII letters in lower case, byte for byte.
func lowerBytes(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
