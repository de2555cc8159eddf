package format

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact/internal/jsonscan"
)

// A JSON transcript whose first message is longer than SniffSize (a pasted
// log, a file read into the system prompt) fills the whole sniff window
// with one string: no element of its list is complete there, so the
// sniffers, which weigh complete elements, see nothing. Detection then
// tries again on the head closed where it was cut (closeCut): the cut
// string ended, every open object and array closed, so the structure
// before the cut (the keys around the first message, the first keys of the
// message) counts as it would in a short file.

// cutKey is the member closeCut adds to each object it closes: the keys
// after it are unknown, so a sniffer must not take a key it does
// not see (a "role" after a long "content") as missing. No transcript has a
// key starting with NUL.
const cutKey = "\x00cut"

// cutMember is cutKey as a JSON member.
const cutMember = `"\u0000cut":true`

// closeCut returns head, a JSON document cut off before its end, closed
// where it was cut: a cut string value ends where head does (less a cut
// escape), anything else cut (a key, a number, a dangling comma or colon)
// is dropped back to the last complete value, and the open objects and
// arrays are closed, each object marked with cutKey. inString
// reports that head ends inside a string. ok is false when head is not the
// start of a JSON object or array cut short (it is complete, JSON lines,
// or not JSON).
func closeCut(head []byte) (closed []byte, inString, ok bool) {
	b := bytes.TrimPrefix(head, utf8BOM)
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' && b[i] != '[' {
		return nil, false, false
	}
	var stack []byte // the open containers, '{' or '['
	// cutAt is the end of the last complete value (or opening bracket),
	// where head can be closed; cutDepth the containers open there.
	cutAt, cutDepth := 0, 0
	mark := func(at int) { cutAt, cutDepth = at, len(stack) }
	// What may come next: a value, a key, a colon, or (after a value) a
	// comma or a closing bracket. empty: the container just opened may
	// close at once.
	const (
		wantValue = iota
		wantKey
		wantColon
		wantNext
	)
	want, empty := wantValue, false
	for i < len(b) {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case (c == '}' || c == ']') && (want == wantNext || empty):
			if stack[len(stack)-1] != c-2 { // '{'+2 == '}', '['+2 == ']'
				return nil, false, false
			}
			stack = stack[:len(stack)-1]
			i++
			if len(stack) == 0 {
				return nil, false, false // a whole document: not cut
			}
			mark(i)
			want, empty = wantNext, false
		case c == ',' && want == wantNext:
			i++
			want = wantValue
			if stack[len(stack)-1] == '{' {
				want = wantKey
			}
		case c == ':' && want == wantColon:
			i++
			want = wantValue
		case c == '"' && (want == wantKey || want == wantValue):
			end := jsonscan.StringEnd(b, i)
			if end < 0 {
				if want == wantKey {
					return closeAt(b[:cutAt], stack[:cutDepth]), true, true
				}
				w := wholeEscapes(b, i)
				cut := append(b[:w:w], '"')
				if !json.Valid(cut[i:]) {
					return nil, false, false
				}
				return closeAt(cut, stack), true, true
			}
			if !json.Valid(b[i:end]) {
				return nil, false, false
			}
			i = end
			if want == wantKey {
				want = wantColon
			} else {
				mark(i)
				want = wantNext
			}
			empty = false
		case (c == '{' || c == '[') && want == wantValue:
			stack = append(stack, c)
			i++
			mark(i)
			want, empty = wantValue, true
			if c == '{' {
				want = wantKey
			}
		case want == wantValue && c != '}' && c != ']' && c != ',' && c != ':':
			end := jsonscan.ValueEnd(b, i)
			if end < 0 {
				return closeAt(b[:cutAt], stack[:cutDepth]), false, true
			}
			if !json.Valid(b[i:end]) {
				return nil, false, false
			}
			i = end
			mark(i)
			want, empty = wantNext, false
		default:
			return nil, false, false
		}
	}
	return closeAt(b[:cutAt], stack[:cutDepth]), false, true
}

// wholeEscapes returns the end of the cut string literal whose quote is
// b[q] short of a cut escape sequence at its end ("\" or "\u12").
func wholeEscapes(b []byte, q int) int {
	for i := q + 1; i < len(b); {
		if b[i] != '\\' {
			i++
			continue
		}
		n := 2
		if i+1 < len(b) && b[i+1] == 'u' {
			n = 6
		}
		if i+n > len(b) {
			return i
		}
		i += n
	}
	return len(b)
}

// closeAt appends to prefix (a copy) a closing bracket for each of open,
// innermost first, each object's after the cutKey member.
func closeAt(prefix []byte, open []byte) []byte {
	out := make([]byte, 0, len(prefix)+len(open)*(len(cutMember)+2))
	out = append(out, prefix...)
	for k := len(open) - 1; k >= 0; k-- {
		if open[k] == '{' {
			if t := bytes.TrimRight(out, " \t\r\n"); t[len(t)-1] != '{' {
				out = append(out, ',')
			}
			out = append(out, cutMember...)
		}
		out = append(out, open[k]+2)
	}
	return out
}
