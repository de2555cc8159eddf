package format

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/compactkit/compact/internal/jsonscan"
)

// streamDoc reads the JSON document r as scanJSONDoc reads a whole one (the
// same fields and items, at the same offsets) without holding it whole:
// the object's other fields are kept, and the records of the array (the
// document, or the arrays under listKeys) are handed to fn in batches as
// they are read, each a copy of its own, so that the caller keeps of them
// only what it decodes. ok is false for anything scanJSONDoc would not
// read (invalid JSON, a list key holding something other than an array,
// data after the document), for a read error and when fn fails: the caller
// then reads the input again the usual way, which says what and where.
func streamDoc(r io.Reader, listKeys []string, fn func(items []docItem) error) (doc jsonDoc, ok bool) {
	d := docStream{r: r, buf: make([]byte, 0, 1<<16)}
	if !d.ensure(len(utf8BOM)) && d.err != nil {
		return doc, false
	}
	if bytes.HasPrefix(d.buf, utf8BOM) {
		d.pos = len(utf8BOM)
	}
	c, more := d.next()
	switch {
	case !more:
		return doc, false
	case c == '[':
		if !d.list("", fn) {
			return doc, false
		}
	case c == '{':
		doc.object = true
		if !d.object(&doc, listKeys, fn) {
			return doc, false
		}
	default:
		return doc, false
	}
	if _, more := d.next(); more || d.err != nil {
		return doc, false // data after the document, or a read error
	}
	return doc, true
}

// docStream is a window on a document being read: buf holds the input
// from byte base on, and pos is where the scan stands in buf.
type docStream struct {
	r     io.Reader
	buf   []byte
	base  int64
	pos   int
	eof   bool
	err   error
	batch []docItem
	size  int    // bytes in batch
	arena []byte // where the batch's records are copied (copyOut)
}

// batchBytes bounds a batch of records handed over at once: enough to
// decode them on all cores, small beside a long transcript.
const batchBytes = 4 << 20

// ensure reads until buf holds n bytes from pos, and reports whether it
// does (false at the end of the input or on a read error).
func (d *docStream) ensure(n int) bool {
	for len(d.buf)-d.pos < n {
		if d.eof || d.err != nil {
			return false
		}
		d.read(n)
	}
	return true
}

// read reads more of the input, at least as much again as is held from
// pos on (so a long value is scanned a bounded number of times), dropping
// what is before pos.
func (d *docStream) read(want int) {
	if d.pos > 0 {
		n := copy(d.buf, d.buf[d.pos:])
		d.buf = d.buf[:n]
		d.base += int64(d.pos)
		d.pos = 0
	}
	grow := max(len(d.buf), want, 1<<16)
	d.buf = slices.Grow(d.buf, grow)
	n, err := io.ReadAtLeast(d.r, d.buf[len(d.buf):cap(d.buf)], 1)
	d.buf = d.buf[:len(d.buf)+n]
	switch {
	case errors.Is(err, io.EOF):
		d.eof = true
	case err != nil:
		d.err = err
	}
}

// next skips whitespace and returns the byte there, without taking it.
func (d *docStream) next() (byte, bool) {
	for {
		d.pos = jsonscan.SkipSpace(d.buf, d.pos)
		if d.pos < len(d.buf) {
			return d.buf[d.pos], true
		}
		if !d.ensure(1) {
			return 0, false
		}
	}
}

// value returns the span in buf of the valid JSON value at pos (after
// whitespace), reading as much as it takes, and moves past it.
func (d *docStream) value() (start, end int, ok bool) {
	if _, more := d.next(); !more {
		return 0, 0, false
	}
	for {
		end = jsonscan.ValueEnd(d.buf, d.pos)
		if end >= 0 && (end < len(d.buf) || d.eof) {
			break
		}
		if d.eof || d.err != nil {
			return 0, 0, false
		}
		d.read(len(d.buf) - d.pos + 1)
	}
	start, d.pos = d.pos, end
	return start, end, jsonscan.Valid(d.buf[start:end])
}

// list reads the array at pos, handing its elements to fn.
func (d *docStream) list(key string, fn func([]docItem) error) bool {
	d.pos++ // '['
	if c, more := d.next(); more && c == ']' {
		d.pos++
		return true
	}
	for {
		start, end, ok := d.value()
		if !ok {
			return false
		}
		raw := d.copyOut(d.buf[start:end])
		d.batch = append(d.batch, docItem{key: key, raw: raw, offset: d.base + int64(start)})
		if d.size += len(raw); d.size >= batchBytes && !d.flush(fn) {
			return false
		}
		c, more := d.next()
		switch {
		case !more:
			return false
		case c == ']':
			d.pos++
			return d.flush(fn)
		case c != ',':
			return false
		}
		d.pos++
	}
}

// copyOut copies b into the batch's arena: the records of a batch share
// one allocation (a record per allocation would cost the collector more
// than reading them), never a buffer reused for the next batch.
func (d *docStream) copyOut(b []byte) []byte {
	if cap(d.arena)-len(d.arena) < len(b) {
		d.arena = make([]byte, 0, max(batchBytes+batchBytes/4, len(b)))
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	return d.arena[start:len(d.arena):len(d.arena)]
}

// flush hands the batch to fn.
func (d *docStream) flush(fn func([]docItem) error) bool {
	if len(d.batch) == 0 {
		return true
	}
	err := fn(d.batch)
	clear(d.batch)
	d.batch, d.size, d.arena = d.batch[:0], 0, nil
	return err == nil
}

// object reads the object at pos: its fields into doc, the elements of
// the arrays under listKeys to fn.
func (d *docStream) object(doc *jsonDoc, listKeys []string, fn func([]docItem) error) bool {
	d.pos++ // '{'
	if c, more := d.next(); more && c == '}' {
		d.pos++
		return true
	}
	for {
		if c, more := d.next(); !more || c != '"' {
			return false
		}
		kstart, kend, ok := d.value()
		if !ok {
			return false
		}
		key, ok := jsonscan.Unquote(d.buf[kstart:kend])
		if !ok {
			return false
		}
		field := docField{key: key, offset: d.base + int64(kend)}
		if c, more := d.next(); !more || c != ':' {
			return false
		}
		d.pos++
		c, more := d.next()
		switch {
		case !more:
			return false
		case !slices.Contains(listKeys, key):
			start, end, ok := d.value()
			if !ok {
				return false
			}
			field.value = append([]byte(nil), d.buf[start:end]...)
			doc.fields = append(doc.fields, field)
		case c == '[':
			doc.fields = append(doc.fields, field)
			if !d.list(key, fn) {
				return false
			}
		default:
			return false
		}
		c, more = d.next()
		switch {
		case !more:
			return false
		case c == '}':
			d.pos++
			return true
		case c != ',':
			return false
		}
		d.pos++
	}
}
