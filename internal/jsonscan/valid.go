package jsonscan

import "unsafe"

// maxDepth is encoding/json's limit on nesting: a text with deeper
// arrays and objects is invalid to it, so it is to Valid.
const maxDepth = 10000

// Valid reports whether b is one valid JSON value with optional whitespace
// around it, exactly as json.Valid does (invalid UTF-8 inside strings is
// allowed, nesting is limited to 10000 levels), several times faster: the
// plain bytes of a string, most of a transcript, are stepped over a table
// look-up at a time instead of through a state function per byte.
func Valid[T Text](b T) bool {
	s := view(b)
	var stack []bool // true: in an object
	i := skipSpace(s, 0)
	for {
		// A value starts at i.
		if i >= len(s) {
			return false
		}
		switch c := s[i]; c {
		case '"':
			if i = validString(s, i); i < 0 {
				return false
			}
		case '{', '[':
			if len(stack) >= maxDepth {
				return false
			}
			object := c == '{'
			i = skipSpace(s, i+1)
			if i < len(s) && (s[i] == '}' && object || s[i] == ']' && !object) {
				i++
				break
			}
			stack = append(stack, object)
			if object {
				if i = validKey(s, i); i < 0 {
					return false
				}
			}
			continue
		case 't':
			if i = validWord(s, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = validWord(s, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = validWord(s, i, "null"); i < 0 {
				return false
			}
		default:
			if i = validNumber(s, i); i < 0 {
				return false
			}
		}
		// A value ended at i: close what it ends, or go on to the next.
		for {
			i = skipSpace(s, i)
			if len(stack) == 0 {
				return i == len(s)
			}
			if i >= len(s) {
				return false
			}
			object := stack[len(stack)-1]
			c := s[i]
			if c == ',' {
				i = skipSpace(s, i+1)
				if object {
					if i = validKey(s, i); i < 0 {
						return false
					}
				}
				break
			}
			if c == '}' && object || c == ']' && !object {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return false
		}
	}
}

// view returns b's bytes as a string without a copy: a string's header and
// a slice's both start with the data pointer and the length.
func view[T Text](b T) string {
	return *(*string)(unsafe.Pointer(&b))
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// validKey checks an object key and its colon at s[i] and returns the
// index of the value after them, or -1.
func validKey(s string, i int) int {
	if i >= len(s) || s[i] != '"' {
		return -1
	}
	if i = validString(s, i); i < 0 {
		return -1
	}
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != ':' {
		return -1
	}
	return skipSpace(s, i+1)
}

// plain marks the bytes a string literal holds as they are: everything but
// the quote, the backslash and control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validString checks the string literal whose quote is at s[i] and returns
// the index just past it, or -1.
func validString(s string, i int) int {
	for i++; ; {
		i = plainRun(s, i, &plain)
		if i >= len(s) {
			return -1
		}
		switch s[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(s) {
				return -1
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) || hex4(s, i+2) < 0 {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			return -1 // a control character
		}
	}
}

// validWord checks the literal w at s[i].
func validWord(s string, i int, w string) int {
	if len(s)-i < len(w) || s[i:i+len(w)] != w {
		return -1
	}
	return i + len(w)
}

// validNumber checks the number at s[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
