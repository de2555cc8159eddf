package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// AppendQuote appends s to dst as a JSON string literal, byte for byte as
// encoding/json's Encoder writes it with SetEscapeHTML(false): <, > and &
// are left alone, as the agents themselves leave them, so code and HTML in
// a transcript stay readable; invalid UTF-8 becomes \ufffd, and U+2028 and
// U+2029 are escaped.
func AppendQuote[T Text](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Quote returns s as a JSON string literal (see AppendQuote).
func Quote(s string) string {
	return string(AppendQuote(make([]byte, 0, len(s)+2), s))
}

// Marshal encodes v as encoding/json does, without HTML escaping (see
// AppendQuote) and without the Encoder's trailing newline. It fails where
// encoding/json fails: an unsupported type, or a json.RawMessage inside v
// that is not valid JSON.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// JoinArray returns the raw JSON values as the elements of one JSON array,
// their bytes as they are (encoding/json would compact them).
func JoinArray[T Text](items []T) []byte {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
}
