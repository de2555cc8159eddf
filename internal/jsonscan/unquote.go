package jsonscan

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Unquote returns the string the JSON string literal lit (quotes included)
// stands for, exactly as encoding/json decodes it: escapes resolved,
// surrogate pairs joined, lone surrogates and invalid UTF-8 replaced with
// U+FFFD. ok is false when lit is not one valid literal (a control
// character, a broken escape, a missing quote, bytes after the closing
// quote).
//
// A literal without escapes and with valid UTF-8 costs no copy when lit is
// a string.
func Unquote[T Text](lit T) (s string, ok bool) {
	if len(lit) < 2 || lit[0] != '"' {
		return "", false
	}
	s, n, closed := unquoteBody(lit[1:], true)
	return s, closed && n == len(lit)-1
}

// UnquoteShared is Unquote for a literal in memory that is never written
// again (a record a reader keeps): a literal without escapes, the usual
// case, is returned as a string that shares lit's bytes instead of a copy
// of them. Writing to lit afterwards would change the string.
func UnquoteShared(lit []byte) (s string, ok bool) {
	if len(lit) >= 2 && lit[0] == '"' {
		body := lit[1 : len(lit)-1]
		i := 0
		for i < len(body) && body[i] != '"' && body[i] != '\\' && body[i] >= 0x20 {
			i++
		}
		if i == len(body) && lit[len(lit)-1] == '"' && utf8.Valid(body) {
			if len(body) == 0 {
				return "", true
			}
			return unsafe.String(&body[0], len(body)), true
		}
	}
	return Unquote(lit)
}

// UnquotePrefix decodes the body of a JSON string that may be cut short: s
// starts after the opening quote, and the body runs to the closing quote,
// the end of s or a broken escape, whichever comes first. It returns the
// decoded body and how many bytes of s it read (the closing quote
// included, a broken escape not). Control characters are kept as they
// are; everything else decodes as in Unquote.
//
// Tool outputs shortened in the middle of a JSON envelope are read with
// it: the output as far as it goes is worth more than an error.
func UnquotePrefix[T Text](s T) (body string, n int) {
	body, n, _ = unquoteBody(s, false)
	return body, n
}

// unquoteBody decodes a string body from the start of s up to its closing
// quote. strict rejects what encoding/json rejects (control characters,
// broken escapes); otherwise those end (escapes) or join (controls) the
// body. closed reports that the closing quote was read, and n is the
// number of bytes read.
func unquoteBody[T Text](s T, strict bool) (body string, n int, closed bool) {
	// The common case: no escape before the closing quote.
	v, table := view(s), &plainLax
	if strict {
		table = &plain
	}
	i := plainRun(v, 0, table)
	if (i == len(s) || s[i] == '"') && utf8.ValidString(v[:i]) {
		if i < len(s) {
			return string(s[:i]), i + 1, true
		}
		return string(s[:i]), i, false
	}
	if i < len(s) && s[i] < 0x20 { // a control character, in strict mode
		return "", i, false
	}
	// Escapes or invalid UTF-8: build the body.
	buf := make([]byte, 0, stringBodyLen(s, i))
	for i = 0; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			return bytesToString(buf), i + 1, true
		case c == '\\':
			var ok bool
			if buf, i, ok = unescape(buf, s, i); !ok {
				if strict {
					return "", i, false
				}
				return bytesToString(buf), i, false
			}
		case c < 0x20 && strict:
			return "", i, false
		default:
			// A run up to the next quote, escape or (strict) control
			// byte: all ASCII, so it never splits a UTF-8 sequence.
			j := plainRun(v, i+1, table)
			buf = appendValidUTF8(buf, v[i:j])
			i = j
		}
	}
	return bytesToString(buf), len(s), false
}

// appendValidUTF8 appends s to buf with each byte of invalid UTF-8
// replaced by U+FFFD, as encoding/json replaces them.
func appendValidUTF8[T Text](buf []byte, s T) []byte {
	if utf8Valid(s) {
		return append(buf, s...)
	}
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			buf = append(buf, s[i])
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = utf8.AppendRune(buf, utf8.RuneError)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return buf
}

// bytesToString returns buf as a string without copying it, as
// strings.Builder does (buf is never written again), unless escapes left
// much of buf's room unused: a kept string keeps its whole array, and
// transcripts are held in memory whole.
func bytesToString(buf []byte) string {
	if cap(buf)-len(buf) > len(buf)/64 {
		return string(buf)
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// stringBodyLen returns how many bytes of s from i run to the closing
// quote (or the end), to size the decoded body.
func stringBodyLen[T Text](s T, i int) int {
	// StringEnd scans from just past an opening quote.
	if end := StringEnd(s, i-1); end >= 0 {
		return end - 1
	}
	return len(s)
}

// unescape appends the escape at s[i] (a backslash) to buf and returns
// the index past it, or ok false when it is broken.
// AppendUnescaped appends what the escape at s[i] (a backslash) stands
// for to dst, exactly as encoding/json decodes it (a surrogate pair joined,
// a lone surrogate U+FFFD), and returns the index just past the escape; ok
// is false, and dst unchanged, when s[i:] holds no valid escape. The
// redactor decodes literals one escape at a time with it, to know where
// each decoded byte came from.
func AppendUnescaped[T Text](dst []byte, s T, i int) (out []byte, next int, ok bool) {
	return unescape(dst, s, i)
}

func unescape[T Text](buf []byte, s T, i int) (out []byte, next int, ok bool) {
	if i+1 >= len(s) {
		return buf, i, false
	}
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		buf = append(buf, e)
	case 'b':
		buf = append(buf, '\b')
	case 'f':
		buf = append(buf, '\f')
	case 'n':
		buf = append(buf, '\n')
	case 'r':
		buf = append(buf, '\r')
	case 't':
		buf = append(buf, '\t')
	case 'u':
		r := hex4(s, i+2)
		if r < 0 {
			return buf, i, false
		}
		next = i + 6
		if utf16.IsSurrogate(r) {
			// Joined with a following low surrogate, as encoding/json
			// does; alone it is U+FFFD and what follows is read anew.
			r2 := rune(-1)
			if next+1 < len(s) && s[next] == '\\' && s[next+1] == 'u' {
				r2 = hex4(s, next+2)
			}
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				r = dec
				next += 6
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(buf, r), next, true
	default:
		return buf, i, false
	}
	return buf, i + 2, true
}

// hex4 reads the four hex digits of a \u escape at s[i:], or -1 when s is
// short or a digit is not hex.
func hex4[T Text](s T, i int) rune {
	if i+4 > len(s) {
		return -1
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := s[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// utf8Valid and decodeRune read s in place, whatever its kind.
func utf8Valid[T Text](s T) bool {
	return utf8.ValidString(view(s))
}

func decodeRune[T Text](s T) (rune, int) {
	return utf8.DecodeRuneInString(view(s))
}

// plainLax is plain with control characters allowed, for the lenient
// reading of cut-short bodies.
var plainLax = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the index of the first byte at or after i that table
// does not mark plain, or len(s).
func plainRun(s string, i int, table *[256]bool) int {
	for i+8 <= len(s) && table[s[i]] && table[s[i+1]] && table[s[i+2]] && table[s[i+3]] &&
		table[s[i+4]] && table[s[i+5]] && table[s[i+6]] && table[s[i+7]] {
		i += 8
	}
	for i < len(s) && table[s[i]] {
		i++
	}
	return i
}

// Literals returns the content spans (between the quotes) of the string
// literals of a JSON text, or of JSON lines, in order. A literal the text
// ends inside of runs to its end. The text is assumed valid: in anything
// else, every quote is taken to open or close a literal.
func Literals[T Text](doc T) []Span {
	var lits []Span
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		end := StringEnd(doc, i)
		if end < 0 {
			lits = append(lits, Span{i + 1, len(doc)})
			break
		}
		lits = append(lits, Span{i + 1, end - 1})
		i = end - 1
	}
	return lits
}

// LoneSurrogate returns the offset of the first \u escape in the JSON text
// b that stands for half of a UTF-16 surrogate pair without its other half
// (encoding/json decodes it, as Unquote does, to U+FFFD), or -1 when there
// is none. Escapes are found from backslash to backslash, so an escaped
// backslash before a "u" is not taken for one.
func LoneSurrogate[T Text](b T) int {
	s := view(b)
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 >= len(s) {
			return -1
		}
		if s[i+1] != 'u' {
			i += 2
			continue
		}
		r := hex4(s, i+2)
		if !utf16.IsSurrogate(r) {
			i = min(i+6, len(s))
			continue
		}
		if r < 0xdc00 && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if r2 := hex4(s, i+8); r2 >= 0xdc00 && r2 <= 0xdfff {
				i += 12 // a high half and its low half: one character
				continue
			}
		}
		return i
	}
}
