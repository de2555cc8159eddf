package redact

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/compactkit/compact/internal/jsonscan"
)

// JSON-aware redaction. Detection reads a view of the document in which
// the contents of its string literals are decoded (\n is a line break,
// \u201c a quotation mark, \" a quote), the rest of the document as it is:
// a secret keeps its context ("password": "..." is one piece of text, not
// a key and a value decoded apart), and an escape never hides where a token
// starts or ends (a token after \u201c is glued to nothing). Each span found
// is clipped to the literal it starts in and mapped back to the bytes of
// the document, widened to whole escapes, so a mask only ever replaces
// bytes between a literal's quotes, never a quote, a brace or half an
// escape; every other byte of the document is kept as it was. The output
// is checked, and should it ever fail to parse, each affected literal is
// decoded, redacted and re-encoded instead.

type docKind int

const (
	docText  docKind = iota // text, possibly with lines of JSON in it
	docJSON                 // one JSON value
	docJSONL                // JSON Lines: every non-blank line a JSON value
)

// jsonKind tells what JSON doc is: one value, JSON Lines, or text (which
// may hold lines of JSON).
func jsonKind(doc string) docKind {
	_, kind := newJSONView(doc)
	return kind
}

// validJSON reports whether s is one JSON value. json.Valid reads the
// bytes of s in place (it only reads them), without the copy a conversion
// would make.
func validJSON(s string) bool {
	return json.Valid(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func validDoc(doc string, kind docKind) bool {
	switch kind {
	case docJSON:
		return validJSON(doc)
	case docJSONL:
		for line := range strings.Lines(doc) {
			if line = strings.TrimSpace(line); line != "" && !validJSON(line) {
				return false
			}
		}
	}
	return true
}

// redactDoc masks doc. In its JSON (a JSON document, JSON Lines, lines of
// JSON among text) masks only replace bytes inside string literals, so the
// JSON stays valid.
func (r *Redactor) redactDoc(doc string, m *masker) (string, []Finding) {
	v, kind := newJSONView(doc)
	defer v.release()
	spans := r.findInView(doc, v, m)
	if len(spans) == 0 {
		return doc, nil
	}
	out, found := r.apply(doc, spans, m)
	if kind == docText || validDoc(out, kind) {
		return out, found
	}
	return r.redactLiterals(doc, spans, stringLiterals(doc), m)
}

// findInView finds the secrets of doc through its view: spans in doc's
// bytes, those in a JSON region each inside one string literal.
func (r *Redactor) findInView(doc string, v *jsonView, m *masker) []cand {
	if len(v.regions) == 0 {
		return r.find(doc, nil, m)
	}
	return v.toDoc(doc, r.find(v.text, v.clip, m))
}

// jsonView is a text with the contents of the string literals of its JSON
// regions decoded, and what it takes to map offsets in it back to the text.
type jsonView struct {
	text string
	// regions are the JSON regions, and lits the content ranges (between
	// the quotes) of their literals, in text.
	regions, lits [][2]int
	// escs are the escapes decoded, in order: text[at : at+n] came from
	// doc[at+shift : at+shift+m], where shift is the total of m - n over
	// the escapes before it. Packed small: a transcript holds an escape
	// every few dozen bytes.
	escs []escape
	// buf holds text when text is not the document itself: kept, with
	// the slices above, for the next view (see release).
	buf []byte
}

// viewPool recycles views: a view is as large as the document, and
// allocating one per call would make the collector stop the scan loop
// over and over on a large input.
var viewPool = sync.Pool{New: func() any { return new(jsonView) }}

// release returns v to the pool. Nothing may use v, its text or strings
// cut from it afterwards.
func (v *jsonView) release() {
	if cap(v.buf) > 256<<20 {
		return // do not keep a huge buffer alive
	}
	v.text = ""
	viewPool.Put(v)
}

type escape struct {
	at    int32 // where the decoded bytes start in the view
	shift int32 // doc offset minus view offset, before this escape
	n, m  uint8 // decoded and escaped lengths
}

// newJSONView builds the view of doc: doc as one JSON value, or each of
// its lines that is one, with the contents of their string literals
// decoded. It reads doc once, validating as it decodes (a region that
// turns out not to be JSON is left as text). Text without a backslash in
// its JSON is its own view.
func newJSONView(doc string) (*jsonView, docKind) {
	v := viewPool.Get().(*jsonView)
	v.regions, v.lits, v.escs = v.regions[:0], v.lits[:0], v.escs[:0]
	b := &viewBuilder{doc: doc, v: v}
	defer b.finish()
	if len(doc) > math.MaxInt32 {
		return b.v, docText // offsets would not fit: detection reads the raw text
	}
	start := skipJSONSpace(doc, 0, len(doc))
	if start == len(doc) {
		return b.v, docText
	}
	if c := doc[start]; (c == '{' || c == '[' || c == '"') && b.region(start, len(doc)) {
		return b.v, docJSON
	}
	if b.lines() && len(b.v.regions) > 0 {
		return b.v, docJSONL
	}
	return b.v, docText
}

// newLinesView builds the view of doc read as text: each of its lines
// that is one JSON value is a region, and doc as a whole never is one.
// What it makes of a line depends on that line alone, so the view of a
// piece of a text agrees with the view of the whole on the piece's whole
// lines (see RedactTextTo).
func newLinesView(doc string) *jsonView {
	v := viewPool.Get().(*jsonView)
	v.regions, v.lits, v.escs = v.regions[:0], v.lits[:0], v.escs[:0]
	b := &viewBuilder{doc: doc, v: v}
	if len(doc) <= math.MaxInt32 {
		b.lines()
	}
	b.finish()
	return v
}

// lines builds each line of the document that is one JSON value into the
// view, and reports whether every non-blank line is a JSON value.
func (b *viewBuilder) lines() bool {
	doc := b.doc
	all := true
	for at := 0; at < len(doc); {
		nl := strings.IndexByte(doc[at:], '\n')
		end := len(doc)
		if nl >= 0 {
			end = at + nl
		}
		ls, le := skipJSONSpace(doc, at, end), end
		for le > ls && isJSONSpace(doc[le-1]) {
			le--
		}
		at = end + 1
		if ls == le {
			continue
		}
		switch c := doc[ls]; {
		case c == '{' || c == '[' || c == '"':
			all = b.region(ls, le) && all
		case all && (c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n'):
			// Another JSON value (a number) keeps the document JSON Lines.
			e, ok := b.value(ls, le, 0)
			all = ok && e == le
		default:
			all = false
		}
	}
	return all
}

// viewBuilder validates JSON regions and decodes their literals into a
// jsonView in one pass.
type viewBuilder struct {
	doc   string
	v     *jsonView
	buf   []byte // the view so far; nil until the first escape
	shift int    // doc offset minus view offset, so far
}

// copyTo extends the view with doc up to k.
func (b *viewBuilder) copyTo(k int) {
	if b.buf != nil {
		b.buf = append(b.buf, b.doc[len(b.buf)+b.shift:k]...)
	}
}

func (b *viewBuilder) finish() {
	if b.buf == nil {
		b.v.text = b.doc
		return
	}
	b.copyTo(len(b.doc))
	// The buffer is not written again until the view is released.
	b.v.buf = b.buf
	b.v.text = unsafe.String(unsafe.SliceData(b.buf), len(b.buf))
}

// newBuffer returns an empty byte slice of capacity n whose memory is not
// cleared first (the view overwrites all of it): a strings.Builder grows
// that way.
func newBuffer(n int) []byte {
	var sb strings.Builder
	sb.Grow(n)
	return unsafe.Slice(unsafe.StringData(sb.String()), n)[:0]
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

// region builds doc[start:end] into the view when it is one JSON value,
// and reports whether it is; when not, the view is left as it was.
func (b *viewBuilder) region(start, end int) bool {
	// The copy of doc before the region is brought up to date, and stays
	// when the region is no JSON: copying it again for each line would be
	// quadratic.
	b.copyTo(start)
	nbuf, shift, nescs, nlits := start-b.shift, b.shift, len(b.v.escs), len(b.v.lits)
	e, ok := b.value(start, end, 0)
	if ok && skipJSONSpace(b.doc, e, end) == end {
		b.v.regions = append(b.v.regions, [2]int{start - shift, end - b.shift})
		return true
	}
	if b.buf != nil {
		b.buf = b.buf[:nbuf]
	}
	b.shift, b.v.escs, b.v.lits = shift, b.v.escs[:nescs], b.v.lits[:nlits]
	return false
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipJSONSpace(doc string, i, end int) int {
	for i < end && isJSONSpace(doc[i]) {
		i++
	}
	return i
}

// value reads the JSON value at doc[i:end] (after blanks), returning its
// end.
func (b *viewBuilder) value(i, end, depth int) (int, bool) {
	doc := b.doc
	i = skipJSONSpace(doc, i, end)
	if i >= end || depth > maxJSONDepth {
		return i, false
	}
	switch c := doc[i]; c {
	case '"':
		return b.str(i, end)
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipJSONSpace(doc, i+1, end)
		if i < end && doc[i] == closer {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= end || doc[i] != '"' {
					return i, false
				}
				if i, ok = b.str(i, end); !ok {
					return i, false
				}
				if i = skipJSONSpace(doc, i, end); i >= end || doc[i] != ':' {
					return i, false
				}
				i++
			}
			if i, ok = b.value(i, end, depth+1); !ok {
				return i, false
			}
			if i = skipJSONSpace(doc, i, end); i >= end {
				return i, false
			}
			switch doc[i] {
			case ',':
				i = skipJSONSpace(doc, i+1, end)
			case closer:
				return i + 1, true
			default:
				return i, false
			}
		}
	case 't':
		return i + 4, strings.HasPrefix(doc[i:end], "true")
	case 'f':
		return i + 5, strings.HasPrefix(doc[i:end], "false")
	case 'n':
		return i + 4, strings.HasPrefix(doc[i:end], "null")
	}
	return number(doc, i, end)
}

// number reads a JSON number at doc[i:end].
func number(doc string, i, end int) (int, bool) {
	digits := func(i int) int {
		for i < end && doc[i] >= '0' && doc[i] <= '9' {
			i++
		}
		return i
	}
	if i < end && doc[i] == '-' {
		i++
	}
	switch {
	case i < end && doc[i] == '0':
		i++
	case i < end && doc[i] >= '1' && doc[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < end && doc[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < end && (doc[i] == 'e' || doc[i] == 'E') {
		i++
		if i < end && (doc[i] == '+' || doc[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// stopsString marks the bytes a string literal's scan stops at: its
// closing quote, an escape, and the control characters JSON forbids there.
var stopsString = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// controlAt returns the index of the first control character (below
// 0x20) in s, or len(s), eight bytes at a time.
func controlAt(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (x-0x2020202020202020)&^x&0x8080808080808080 != 0 {
			break // a byte below 0x20 among these eight
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			break
		}
	}
	return i
}

// str reads the string literal whose opening quote is doc[i], decoding
// its escapes into the view and noting its content range.
func (b *viewBuilder) str(i, end int) (int, bool) {
	doc, v := b.doc, b.v
	start := i + 1
	viewStart := start - b.shift
	// Short literals (keys) are read byte by byte.
	k := start
	for n := min(end, start+32); k < n && !stopsString[doc[k]]; k++ {
	}
	// Longer ones with vectorised searches: the closing quote is searched
	// once (escaped quotes aside), each backslash as the scan reaches it,
	// so a literal with many escapes is still read once.
	quote := -1
	for k < end {
		c := doc[k]
		if c == '"' {
			v.lits = append(v.lits, [2]int{viewStart, k - b.shift})
			return k + 1, true
		}
		if c != '\\' {
			if c < 0x20 {
				return k, false
			}
			if quote < k {
				if quote = strings.IndexByte(doc[k:end], '"'); quote < 0 {
					return end, false
				}
				quote += k
			}
			next := quote
			if bs := strings.IndexByte(doc[k:quote], '\\'); bs >= 0 {
				next = k + bs
			}
			if cc := controlAt(doc[k:next]); k+cc < next {
				return k + cc, false
			}
			k = next
			continue
		}
		if b.buf == nil {
			if cap(v.buf) >= len(doc) {
				b.buf = v.buf[:0]
			} else {
				b.buf = newBuffer(len(doc))
			}
			b.buf = append(b.buf, doc[:k]...)
		} else {
			b.copyTo(k)
		}
		at := len(b.buf)
		var next int
		var ok bool
		if b.buf, next, ok = jsonscan.AppendUnescaped(b.buf, doc[:end], k); !ok {
			return k, false
		}
		m, n := next-k, len(b.buf)-at
		v.escs = append(v.escs, escape{at: int32(at), shift: int32(b.shift), n: uint8(n), m: uint8(m)})
		b.shift += m - n
		k += m
	}
	return end, false
}

// clip cuts each span (view offsets) in a JSON region to the string
// literal it starts in. A span that reaches past its literal was read
// across the JSON structure (a value running on into the next string): the
// rest is not the secret's, and masking it could rename a key. Spans in a
// region outside every literal go; spans of the text between regions stop
// where the next region starts.
func (v *jsonView) clip(spans []cand) []cand {
	out := spans[:0]
	for _, c := range spans {
		ri := sort.Search(len(v.regions), func(i int) bool { return v.regions[i][1] > c.start })
		if ri == len(v.regions) || v.regions[ri][0] > c.start {
			if ri < len(v.regions) {
				c.end = min(c.end, v.regions[ri][0])
			}
			out = append(out, c)
			continue
		}
		i := sort.Search(len(v.lits), func(i int) bool { return v.lits[i][1] > c.start })
		if i == len(v.lits) || v.lits[i][0] > c.start {
			continue
		}
		s, e := max(c.start, v.lits[i][0]), min(c.end, v.lits[i][1])
		s, e = safeSpan(v.text, s, e)
		if s < e {
			c.start, c.end = s, e
			out = append(out, c)
		}
	}
	return out
}

// toDoc maps spans of the view to doc. A span starting or ending inside a
// decoded escape covers the whole escape. Masks are numbered by the
// decoded secret, so a secret reads the same whatever its escaping.
func (v *jsonView) toDoc(doc string, spans []cand) []cand {
	if len(v.escs) == 0 {
		return spans
	}
	out := spans[:0]
	for _, c := range spans {
		if c.key == "" {
			c.key = v.text[c.start:c.end]
		}
		c.start, c.end = v.docOffset(c.start, false), v.docOffset(c.end, true)
		if c.start, c.end = safeSpan(doc, c.start, c.end); c.start < c.end {
			out = append(out, c)
		}
	}
	return out
}

// docOffset maps view offset p to doc. p inside the decoded bytes of an
// escape maps to the escape's start, or its end when p ends a span.
func (v *jsonView) docOffset(p int, end bool) int {
	// The last escape starting before p (at or before it, for a start).
	i := sort.Search(len(v.escs), func(i int) bool {
		if end {
			return int(v.escs[i].at) >= p
		}
		return int(v.escs[i].at) > p
	}) - 1
	if i < 0 {
		return p
	}
	e := v.escs[i]
	at, shift, n, m := int(e.at), int(e.shift), int(e.n), int(e.m)
	if p < at+n || (end && p == at+n) {
		if end {
			return at + shift + m
		}
		return at + shift
	}
	return p + shift + m - n
}

// stringLiterals returns the content ranges (between the quotes) of the
// string literals of a valid JSON text, in order.
func stringLiterals(doc string) [][2]int {
	spans := jsonscan.Literals(doc)
	lits := make([][2]int, len(spans))
	for i, sp := range spans {
		lits[i] = [2]int{sp.Start, sp.End}
	}
	return lits
}

// redactLiterals is the fallback: every literal a span touches is decoded,
// redacted as plain text and re-encoded.
func (r *Redactor) redactLiterals(doc string, spans []cand, lits [][2]int, m *masker) (string, []Finding) {
	touched := make([]bool, len(lits))
	for _, c := range spans {
		i := sort.Search(len(lits), func(i int) bool { return lits[i][1] > c.start })
		for ; i < len(lits) && lits[i][0] < c.end; i++ {
			touched[i] = true
		}
	}
	var b strings.Builder
	var found []Finding
	prev := 0
	for i, l := range lits {
		if !touched[i] {
			continue
		}
		v, ok := jsonscan.Unquote(doc[l[0]-1 : l[1]+1])
		if !ok {
			continue
		}
		masked, f := r.redactDoc(v, m)
		enc := jsonscan.Quote(masked)
		b.WriteString(doc[prev : l[0]-1])
		b.WriteString(enc)
		prev = l[1] + 1
		for _, x := range f {
			found = append(found, Finding{Rule: x.Rule, Start: l[0], End: l[1]})
		}
	}
	b.WriteString(doc[prev:])
	return b.String(), found
}
