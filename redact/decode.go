package redact

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// Secrets hidden by an encoding or a line break (issue 17, leak 7): a
// token base64-wrapped (echo ... | base64), percent-encoded in a URL or a
// form body, or split over two lines inside a quoted value. Such runs are
// decoded (or joined) and the result scanned like any text, to a bounded
// depth, as gitleaks' decoder does; a secret found there masks the run
// that holds it.

// maxDecodeDepth bounds decoding within decoding (base64 of a
// percent-encoded token).
const maxDecodeDepth = 2

// Bounds of the runs decoded: shorter ones cannot hold a secret worth the
// decoding; longer ones are images and archives, not text.
const (
	minEncodedRun = 24
	maxEncodedRun = 64 << 10
)

// isB64RunByte marks the bytes of base64 (both alphabets) and padding.
// Written out rather than built from isAlnum, whose table is filled by an
// init function, after package variables.
var isB64RunByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
	}
	return t
}()

// decodeScan finds the encoded and split runs of sc's text and scans them.
func decodeScan(sc *scan) {
	if sc.depth >= maxDecodeDepth {
		return
	}
	t := sc.text
	// Runs shorter than minEncodedRun are skipped without reading all
	// their bytes: when the byte minEncodedRun-1 ahead is no run byte, no
	// long run starts before it; when it is one, the scan steps back to
	// where its run starts. Text, whose words are short, is read a few
	// bytes in twenty.
	for i := 0; i+minEncodedRun <= len(t); {
		probe := i + minEncodedRun - 1
		if !isB64RunByte[t[probe]] {
			i = probe + 1
			continue
		}
		s := probe
		for s > i && isB64RunByte[t[s-1]] {
			s--
		}
		if s > i {
			i = s // the run holding the probe starts after i: look again from it
			continue
		}
		// A run of at least minEncodedRun bytes starts at s == i (or
		// before it, inside bytes already judged).
		for s > 0 && isB64RunByte[t[s-1]] {
			s--
		}
		e := probe + 1
		for e < len(t) && isB64RunByte[t[e]] {
			e++
		}
		if e-s <= maxEncodedRun {
			sc.base64Run(s, e)
		}
		i = e
	}
	splitScan(sc)
	percentScan(sc)
}

// splitRunByte reports bytes of a token a line break may split.
func splitRunByte(c byte) bool { return isTokenByte(c) || c == ':' || c == '~' }

// splitScan looks at every line that ends inside a quoted token. A line
// ends at a line feed, a carriage return and line feed (Windows files, and
// "\r\n" escaped in JSON, which the JSON view decodes), a carriage return
// alone, or one of these written as escapes (\n, \r\n, \r: a string in
// source code, or JSON inside a JSON string).
func splitScan(sc *scan) {
	t := sc.text
	// The next LF, CR and escaped LF and CR, each found by its own
	// (vectorised) search and looked for again only once passed.
	next := [4]nextIndex{{s: "\n", at: -1}, {s: "\r", at: -1}, {s: `\n`, at: -1}, {s: `\r`, at: -1}}
	for i := 0; i < len(t); {
		e := len(t)
		for k := range next {
			e = min(e, next[k].from(t, i))
		}
		if e == len(t) {
			return
		}
		if t[e] == '\\' && escapedAt(t, e) { // \\n: an escaped backslash, then n
			i = e + 1
			continue
		}
		s := e
		for s > 0 && e-s < 512 && splitRunByte(t[s-1]) {
			s--
		}
		if s < e && s > 0 && isQuote(t[s-1]) {
			e = sc.splitValue(s, e)
		}
		i = e + max(1, lineBreakLen(t, e))
	}
}

// nextIndex is the position of the next s in a text, at or after where it
// was last asked from; len(text) when there is none.
type nextIndex struct {
	s  string
	at int
}

func (n *nextIndex) from(t string, i int) int {
	if n.at < i {
		if k := strings.Index(t[i:], n.s); k >= 0 {
			n.at = i + k
		} else {
			n.at = len(t)
		}
	}
	return n.at
}

// lineBreakLen is the length of the line break at t[i]: "\r\n", "\n" or a
// lone "\r", or the same written as escapes; 0 for none.
func lineBreakLen(t string, i int) int {
	switch {
	case i >= len(t):
		return 0
	case t[i] == '\n':
		return 1
	case t[i] == '\r':
		if i+1 < len(t) && t[i+1] == '\n' {
			return 2
		}
		return 1
	case t[i] == '\\' && i+1 < len(t):
		switch {
		case t[i+1] == 'n':
			return 2
		case t[i+1] == 'r':
			if strings.HasPrefix(t[i+2:], `\n`) {
				return 4
			}
			return 2
		}
	}
	return 0
}

// quoteAt reports the quote q at t[i], or the same quote escaped (\").
func quoteAt(t string, i int, q byte) bool {
	return i < len(t) && (t[i] == q || t[i] == '\\' && i+1 < len(t) && t[i+1] == q)
}

// subScan scans decoded text and reports the rule of the strongest secret
// it holds, or nil.
func (sc *scan) subScan(text string) *rule {
	sub := &scan{eng: sc.eng, text: text, pemNoEndFrom: -1, pemEnd: -1, allow: sc.allow, depth: sc.depth + 1}
	sc.eng.run(sub)
	sc.timeouts += sub.timeouts
	var best *rule
	for _, c := range sub.resolve() {
		if best == nil || c.rule.prio > best.prio {
			best = c.rule
		}
	}
	return best
}

// base64Run decodes t[s:e] when it is base64 of text, and masks it when
// the text holds a secret.
func (sc *scan) base64Run(s, e int) {
	t := sc.text
	run := t[s:e]
	for len(run) > 0 && run[len(run)-1] == '=' {
		run = run[:len(run)-1]
	}
	if len(run) < minEncodedRun || len(run)%4 == 1 || strings.IndexByte(run, '=') >= 0 {
		return
	}
	// Base64 of text has few of its two symbols; paths and identifiers,
	// long runs text is full of, are made of them. The first bytes tell.
	head := run[:min(len(run), 64)]
	var slash, plus, dash, under int
	for i := 0; i < len(head); i++ {
		switch c := run[i]; {
		case c == '/':
			slash++
		case c == '+':
			plus++
		case c == '-':
			dash++
		case c == '_':
			under++
		}
	}
	std, url := slash+plus > 0, dash+under > 0
	if std && url || 8*(slash+plus+dash+under) > len(head) {
		return
	}
	enc := base64.RawStdEncoding
	if url {
		enc = base64.RawURLEncoding
	}
	// The first 48 characters decode to 36 bytes: binary (a signature, an
	// image) shows there, before the rest is decoded.
	var first [36]byte
	if n, err := enc.Decode(first[:], []byte(run[:min(len(run), 48)&^3])); err != nil || !textLike(first[:n]) {
		return
	}
	if cap(sc.decBuf) < enc.DecodedLen(len(run)) {
		sc.decBuf = make([]byte, enc.DecodedLen(len(run)))
	}
	n, err := enc.Decode(sc.decBuf[:cap(sc.decBuf)], []byte(run))
	dec := sc.decBuf[:n]
	if err != nil || n < 16 || !textLike(dec) {
		return
	}
	if r := sc.subScan(string(dec)); r != nil {
		sc.add(s, e, r)
	}
}

// textLike reports decoded bytes that read as text: valid UTF-8, nearly all
// printable, with letters.
func textLike(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	bad, letters := 0, 0
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == '\n' || c == '\r' || c == '\t' || c >= 0x20 && c != 0x7f:
		default:
			bad++
		}
	}
	return bad == 0 && letters*4 >= len(b)
}

// splitValue joins a quoted value that a line break splits ("sk-...\n
// ...", a key wrapped by a terminal or an editor): the run t[s:e] starts
// after a quote and ends at a line break, and the next lines, indentation
// aside, hold the rest up to the same quote. A secret the joined value
// shows across a break is masked, from its start to its end in t. It
// returns where the scan goes on.
func (sc *scan) splitValue(s, e int) int {
	t := sc.text
	q := t[s-1]
	joined := []byte(t[s:e])
	// pieces[i] is where the i-th piece starts in joined and in t.
	type piece struct{ at, from int }
	pieces := []piece{{0, s}}
	j := e
	for lines := 0; lines < 3 && lineBreakLen(t, j) > 0; lines++ {
		k := j + lineBreakLen(t, j)
		for k < len(t) && (t[k] == ' ' || t[k] == '\t') {
			k++
		}
		m := k
		for m < len(t) && splitRunByte(t[m]) && m-k < 512 {
			m++
		}
		if m == k || strings.IndexByte(strings.TrimRight(t[k:m], "="), '=') >= 0 {
			return e // an empty line, or the next NAME=value: no continuation
		}
		pieces = append(pieces, piece{len(joined), k})
		joined = append(joined, t[k:m]...)
		if quoteAt(t, m, q) {
			break
		}
		j = m
		if lineBreakLen(t, j) == 0 {
			return e
		}
	}
	if len(pieces) < 2 {
		return e
	}
	last := pieces[len(pieces)-1]
	end := last.from + len(joined) - last.at
	if !quoteAt(t, end, q) {
		return e
	}
	toText := func(p int) int { // joined offset to text offset
		i := len(pieces) - 1
		for i > 0 && pieces[i].at > p {
			i--
		}
		return pieces[i].from + p - pieces[i].at
	}
	sub := &scan{eng: sc.eng, text: string(joined), pemNoEndFrom: -1, pemEnd: -1, allow: sc.allow, depth: sc.depth + 1}
	sc.eng.run(sub)
	sc.timeouts += sub.timeouts
	for _, c := range sub.resolve() {
		if c.start < pieces[1].at && c.end > pieces[1].at { // the secret crosses a break
			sc.add(toText(c.start), toText(c.end-1)+1, c.rule)
		}
	}
	return end
}

// percentScan decodes the percent-encoded runs of sc's text (URL queries,
// form bodies) and masks, in the run, what the decoded text shows to be a
// secret.
func percentScan(sc *scan) {
	t := sc.text
	for i := 0; ; {
		p := strings.IndexByte(t[i:], '%')
		if p < 0 {
			return
		}
		p += i
		if p+2 >= len(t) || !isHex(t[p+1]) || !isHex(t[p+2]) {
			i = p + 1
			continue
		}
		s, e := p, p
		for s > 0 && p-s < 4096 && urlRunByte(t[s-1]) {
			s--
		}
		for e < len(t) && e-p < 4096 && urlRunByte(t[e]) {
			e++
		}
		i = e
		if e-s < minEncodedRun {
			continue
		}
		// Decode, noting where each decoded byte came from.
		dec := make([]byte, 0, e-s)
		from := make([]int, 0, e-s+1)
		for k := s; k < e; {
			if t[k] == '%' && k+2 < e && isHex(t[k+1]) && isHex(t[k+2]) {
				dec = append(dec, unhex(t[k+1])<<4|unhex(t[k+2]))
				from = append(from, k)
				k += 3
				continue
			}
			dec = append(dec, t[k])
			from = append(from, k)
			k++
		}
		from = append(from, e)
		if !utf8.Valid(dec) {
			continue
		}
		// Form fields and query parameters end at '&': a line break in
		// the text scanned, where a value ends too (same length, same
		// offsets).
		for k, c := range dec {
			if c == '&' {
				dec[k] = '\n'
			}
		}
		sub := &scan{eng: sc.eng, text: string(dec), pemNoEndFrom: -1, pemEnd: -1, allow: sc.allow, depth: sc.depth + 1}
		sc.eng.run(sub)
		sc.timeouts += sub.timeouts
		for _, c := range sub.resolve() {
			sc.add(from[c.start], from[c.end], c.rule)
		}
	}
}

// urlRunByte reports bytes of a URL or a form body.
func urlRunByte(c byte) bool {
	return isAlnum(c) || c == '%' || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '=' || c == '&' ||
		c == '/' || c == ':' || c == '?' || c == '@' || c == '!' || c == '*' || c == ','
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
