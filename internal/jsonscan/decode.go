package jsonscan

import (
	"encoding/json"
	"strconv"
	"strings"
	"unsafe"
)

// Decode decodes the JSON text s as json.Unmarshal into an any would (maps,
// slices, strings, float64, bool, nil), in one pass and without
// reflection: tool arguments are decoded for every call of a window, and
// encoding/json's separate validation pass and reflection cost more than
// the rest of reading them. Text it does not decode itself (invalid, or
// nested deeper than maxDecodeDepth) is handed to encoding/json, so the
// result and the error are always encoding/json's.
func Decode(s string) (any, error) {
	d := decoder{s: s}
	d.space()
	v, ok := d.value(0)
	d.space()
	if ok && d.i == len(s) {
		return v, nil
	}
	var out any
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// DecodeShared is Decode of b without a copy of b first: strings of the
// result that hold no escape share b's memory, so b must never be changed
// afterwards (raw JSON read from a transcript never is). A fallback
// summary decodes every tool call's arguments of a window and keeps them.
func DecodeShared(b []byte) (any, error) {
	return Decode(unsafe.String(unsafe.SliceData(b), len(b)))
}

// maxDecodeDepth bounds the nesting Decode handles itself.
const maxDecodeDepth = 200

type decoder struct {
	s string
	i int
}

func (d *decoder) space() { d.i = SkipSpace(d.s, d.i) }

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) || depth > maxDecodeDepth {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.word("true")
	case c == 'f':
		return false, d.word("false")
	case c == 'n':
		return nil, d.word("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *decoder) word(w string) bool {
	if strings.HasPrefix(d.s[d.i:], w) {
		d.i += len(w)
		return true
	}
	return false
}

func (d *decoder) object(depth int) (any, bool) {
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *decoder) array(depth int) (any, bool) {
	d.i++ // [
	out := []any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return out, true
	}
	for {
		d.space()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return out, true
		default:
			return nil, false
		}
	}
}

func (d *decoder) str() (any, bool) {
	s, n, closed := unquoteBody(d.s[d.i+1:], true)
	if !closed {
		return nil, false
	}
	d.i += 1 + n
	return s, true
}

func (d *decoder) number() (any, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	intStart := d.i
	if n := digits(); n == 0 || n > 1 && d.s[intStart] == '0' {
		return nil, false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		return nil, false
	}
	return f, true
}
