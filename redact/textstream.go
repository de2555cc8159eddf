package redact

import (
	"errors"
	"io"
	"sort"
	"strings"
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
// numbered after it). Each finding is passed to found, if set, as it is
// written: Start and End are byte offsets into the stream, Line and
// Column (1-based, in bytes) where it starts. An error from r, w or found
// stops the stream.
func (s *Scope) RedactTextTo(w io.Writer, r io.Reader, found func(Finding) error) error {
	ts := &textStreamer{piece: textPiece, overlap: textOverlap}
	return ts.run(s, w, r, found)
}

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
	var (
		buf      []byte // the stream from base on
		base     int
		done     int // written up to here
		reserved int // masks reserved up to here
		eof      bool
		lc       = lineCounter{line: 1}
	)
	for {
		// Read the next piece and the overlap after it.
		for need := done - base + ts.piece + ts.overlap; !eof && len(buf) < need; {
			if len(buf) == cap(buf) { // grown as the input proves long
				nb := make([]byte, len(buf), min(need, max(2*cap(buf), 64<<10)))
				copy(nb, buf)
				buf = nb
			}
			n, err := io.ReadFull(r, buf[len(buf):min(need, cap(buf))])
			buf = buf[:len(buf)+n]
			switch {
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
				eof = true
			case err != nil:
				return err
			}
		}
		if len(buf) == 0 {
			return nil
		}
		text := unsafe.String(unsafe.SliceData(buf), len(buf))
		end := base + len(buf)
		if from := max(base, reserved-maxMaskLen); from < end {
			s.m.reserve(text[from-base:])
			reserved = end
		}

		v := newLinesView(text)
		spans := s.r.findInView(text, v, s.m)
		v.release()
		cut := end
		if !eof {
			limit := end - ts.overlap
			cut = base + ts.cutAt(text, spans, done-base, limit-base)
		}
		if err := ts.write(s, w, text, base, done, cut, spans, &lc, found); err != nil {
			return err
		}
		done = cut
		if eof && done == end {
			return nil
		}
		// Keep the overlap before the cut as the next window's left context.
		if keep := max(base, done-ts.overlap); keep > base {
			n := copy(buf, buf[keep-base:])
			buf, base = buf[:n], keep
		}
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
	if i, ok := crossing(limit); ok && spans[i].end < len(text) {
		return spans[i].end
	}
	return limit
}

// write masks text[done-base : cut-base] with the spans that lie in it,
// writes it and passes on its findings. A span that starts before done
// (found again at the edge of a window, or too long for one) is masked
// from done on.
func (ts *textStreamer) write(s *Scope, w io.Writer, text string, base, done, cut int, spans []cand, lc *lineCounter, found func(Finding) error) error {
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
	if _, err := io.WriteString(w, out); err != nil {
		return err
	}
	if found == nil {
		return nil
	}
	for _, f := range fs {
		f.Start, f.End = f.Start+done, f.End+done
		lc.advance(text, base, f.Start)
		f.Line, f.Column = lc.line, f.Start-lc.lineStart+1
		if err := found(f); err != nil {
			return err
		}
	}
	lc.advance(text, base, cut)
	return nil
}
