// Package jsonscan reads JSON text in place: where a value begins and ends
// (spans), the members of an object and the elements of an array, string
// literals unquoted as encoding/json unquotes them, and the literals of a
// whole document walked in order. It also encodes strings and values the
// way the agents write them (no HTML escaping), and decodes a value into
// Go's generic types in one pass.
//
// Its users keep the bytes they read: transcript readers keep each record
// as read so it can be written back byte for byte, the redactor masks
// bytes between a literal's quotes and leaves every other byte alone, the
// fallback reads tool envelopes that were cut short. None of them can
// afford encoding/json's decode-and-re-encode, and all of them need the
// same answers encoding/json would give; the package's fuzz targets hold
// it to that.
//
// Functions take either a string or a []byte (the Text constraint), so a
// caller scans what it holds without a copy. Positions are byte offsets
// into that text. Scanning functions never panic, whatever the input: on
// malformed or cut-short text they say so (-1, or complete == false).
package jsonscan

import "strings"

// Text is the input the scanning functions accept: a string or a byte
// slice (json.RawMessage included).
type Text interface{ ~string | ~[]byte }

// Span is the position of a value in a text: its bytes are text[Start:End].
// End is -1 for a value the text ends inside of (see Members).
type Span struct{ Start, End int }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace (space, tab, newline, carriage return), or len(b).
func SkipSpace[T Text](b T, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// StringEnd returns the index just past the string literal whose opening
// quote is at b[i], or -1 when b ends before the literal closes. It does not
// check the literal's escapes (Unquote does).
//
// Long literals are the bulk of a transcript, so it looks for the next
// quote with strings.IndexByte (many bytes at a time), then tells a closing
// quote from an escaped one by the backslashes just before it: an odd run
// escapes it. Each backslash is looked at once at most, so the scan stays
// linear whatever the escapes.
func StringEnd[T Text](b T, i int) int {
	s := view(b)
	for j := i + 1; ; {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		odd := false
		for p := q - 1; p > i && s[p] == '\\'; p-- {
			odd = !odd
		}
		if !odd {
			return q + 1
		}
		j = q + 1
	}
}

// ValueEnd returns the index just past the JSON value that starts at b[i]
// (after optional whitespace), or -1 when b ends before the value does or
// the value is malformed where the scan looks.
//
// b may be a prefix of a longer text (detection reads a file's first
// bytes), so a value is complete only when b shows where it ends: the
// closing quote or bracket, or for a number or a literal (true, false,
// null) the byte after it. A scalar running to the very end of b is taken
// as cut short. ValueEnd checks structure only as far as it needs to find
// the end; callers that need validity check it with encoding/json.
func ValueEnd[T Text](b T, i int) int {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := StringEnd(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	default:
		for j := i; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return -1
				}
				return j
			}
		}
		return -1
	}
}

// Describe names the kind of the JSON value that starts raw (after
// optional whitespace), for error messages: "an object", "an array", "a
// string", "a number", "a boolean", "null", or "nothing".
func Describe[T Text](raw T) string {
	i := SkipSpace(raw, 0)
	if i >= len(raw) {
		return "nothing"
	}
	switch raw[i] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// Raw is a JSON value captured while encoding/json decodes the text around
// it, without a copy: json.Unmarshal hands UnmarshalJSON a slice of its
// input, and Raw keeps that slice. It is valid for as long as the input is
// kept and not modified, which is what a reader that keeps each record's
// bytes wants; a caller that reuses its buffer must use json.RawMessage.
type Raw []byte

// UnmarshalJSON keeps a reference to b.
func (r *Raw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// IsNull reports whether the value is absent or JSON null.
func (r Raw) IsNull() bool {
	return len(r) == 0 || string(r) == "null"
}

// First returns the value's first byte ('{', '[', '"', 't', 'n', a digit
// or '-'), or 0 when it is absent. Values decoded by encoding/json have no
// leading whitespace.
func (r Raw) First() byte {
	if len(r) == 0 {
		return 0
	}
	return r[0]
}

// Unquote returns the value unquoted when it is a JSON string, and ok
// false when it is anything else or not a valid literal.
func (r Raw) Unquote() (s string, ok bool) {
	if r.First() != '"' {
		return "", false
	}
	return Unquote([]byte(r))
}
