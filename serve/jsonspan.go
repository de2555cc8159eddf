package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// This file finds where things are in a request body without decoding it:
// the top-level members (model, stream, the message list) and the spans of
// the list's elements. The rewrite then splices a new list between the
// untouched bytes before and after it, so every other field reaches the
// upstream byte for byte. The body has already been read by package format
// (which checks it is valid JSON); these scanners only find boundaries.

// errSpan is returned for a body whose structure the scanners cannot follow.
var errSpan = errors.New("malformed JSON")

// member is one member of the top-level object: its key and the span of its
// value, body[start:end].
type member struct {
	key        string
	start, end int
}

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
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

// skipString returns the index just past the string whose quote is at b[i].
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: unterminated string", errSpan)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return 0, fmt.Errorf("%w: value expected at byte %d", errSpan, i)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("%w: unclosed value", errSpan)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, nil
		}
		j++
	}
	return j, nil
}

// topMembers lists the members of the object that body holds.
func topMembers(body []byte) ([]member, error) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", errSpan)
	}
	var out []member
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return out, nil
	}
	for i < len(body) {
		if body[i] != '"' {
			return nil, fmt.Errorf("%w: key expected at byte %d", errSpan, i)
		}
		kend, err := skipString(body, i)
		if err != nil {
			return nil, err
		}
		key := unquoteKey(body[i:kend])
		i = skipSpace(body, kend)
		if i >= len(body) || body[i] != ':' {
			return nil, fmt.Errorf("%w: ':' expected at byte %d", errSpan, i)
		}
		start := skipSpace(body, i+1)
		end, err := skipValue(body, start)
		if err != nil {
			return nil, err
		}
		out = append(out, member{key: key, start: start, end: end})
		i = skipSpace(body, end)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
			continue
		}
		if i < len(body) && body[i] == '}' {
			return out, nil
		}
		return nil, fmt.Errorf("%w: ',' or '}' expected at byte %d", errSpan, i)
	}
	return nil, fmt.Errorf("%w: unclosed object", errSpan)
}

func unquoteKey(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(q[1 : len(q)-1])
	}
	return s
}

// arrayElements returns the spans of the elements of the array that starts
// at body[start], as absolute offsets into body.
func arrayElements(body []byte, start, end int) ([][2]int, error) {
	if start >= end || body[start] != '[' {
		return nil, fmt.Errorf("%w: not an array", errSpan)
	}
	var out [][2]int
	i := skipSpace(body, start+1)
	if i < end && body[i] == ']' {
		return out, nil
	}
	for i < end {
		j, err := skipValue(body, i)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]int{i, j})
		i = skipSpace(body, j)
		if i < end && body[i] == ',' {
			i = skipSpace(body, i+1)
			continue
		}
		if i < end && body[i] == ']' {
			return out, nil
		}
		return nil, fmt.Errorf("%w: ',' or ']' expected at byte %d", errSpan, i)
	}
	return nil, fmt.Errorf("%w: unclosed array", errSpan)
}

// writeWithout appends v to dst leaving out every object member, at any
// depth, whose key is one of drop. Used to compare list elements while
// ignoring fields a client moves from request to request without changing
// what the model reads (Anthropic's cache_control breakpoints).
func writeWithout(dst, v []byte, drop []string) []byte {
	i := 0
	for i < len(v) {
		c := v[i]
		switch {
		case c == '"':
			j, err := skipString(v, i)
			if err != nil {
				return append(dst, v[i:]...)
			}
			// A key is a string followed by ':'.
			k := skipSpace(v, j)
			if k < len(v) && v[k] == ':' && dropKey(v[i:j], drop) {
				end, err := skipValue(v, k+1)
				if err != nil {
					return append(dst, v[i:]...)
				}
				end = skipSpace(v, end)
				if end < len(v) && v[end] == ',' {
					end++
				} else {
					dst = trimComma(dst)
				}
				i = end
				continue
			}
			dst = append(dst, v[i:j]...)
			i = j
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

func dropKey(q []byte, drop []string) bool {
	for _, d := range drop {
		if len(q) == len(d)+2 && string(q[1:len(q)-1]) == d {
			return true
		}
	}
	return false
}

// trimComma removes a trailing ',' (and spaces after it) from dst: the
// member dropped was the object's last.
func trimComma(dst []byte) []byte {
	k := len(dst)
	for k > 0 && (dst[k-1] == ' ' || dst[k-1] == '\n' || dst[k-1] == '\t' || dst[k-1] == '\r') {
		k--
	}
	if k > 0 && dst[k-1] == ',' {
		return dst[:k-1]
	}
	return dst
}
