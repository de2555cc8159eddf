package fallback

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeJSON decodes a JSON text as json.Unmarshal into an any would (maps,
// slices, strings, float64, bool, nil), in one pass and without
// reflection: tool arguments are decoded for every call of a window, and
// encoding/json's separate validation pass and reflection cost more than
// the rest of reading them. Text it cannot decode (invalid, or nested
// deeper than it goes) is left to encoding/json, so the result is always
// encoding/json's.
func decodeJSON(s string) (any, error) {
	p := jsonParser{s: s}
	p.space()
	v, ok := p.value(0)
	p.space()
	if ok && p.i == len(s) {
		return v, nil
	}
	var out any
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// maxJSONDepth bounds the nesting decodeJSON handles itself.
const maxJSONDepth = 200

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, bool) {
	if p.i >= len(p.s) || depth > maxJSONDepth {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.word("true")
	case c == 'f':
		return false, p.word("false")
	case c == 'n':
		return nil, p.word("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

func (p *jsonParser) object(depth int) (any, bool) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *jsonParser) array(depth int) (any, bool) {
	p.i++ // [
	out := []any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, true
	}
	for {
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, true
		default:
			return nil, false
		}
	}
}

// str reads a string; it declines (for encoding/json to decide) anything
// unusual: control characters, invalid UTF-8, broken escapes.
func (p *jsonParser) str() (any, bool) {
	p.i++ // "
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			body := p.s[start:p.i]
			p.i++
			if !utf8.ValidString(body) {
				return nil, false
			}
			return body, true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// escaped reads the rest of a string holding escapes, from start.
func (p *jsonParser) escaped(start int) (any, bool) {
	// Size the copy to the string's end, found skipping escapes.
	end := p.i
	for end < len(p.s) && p.s[end] != '"' {
		if p.s[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(min(end, len(p.s)) - start)
	b.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			out := b.String()
			if !utf8.ValidString(out) {
				return nil, false
			}
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			// Copy the run up to the next quote, escape or control byte.
			j := p.i + 1
			for j < len(p.s) && p.s[j] != '"' && p.s[j] != '\\' && p.s[j] >= 0x20 {
				j++
			}
			b.WriteString(p.s[p.i:j])
			p.i = j
			continue
		}
		if p.i+1 >= len(p.s) {
			return nil, false
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if len(p.s)-p.i < 4 {
				return nil, false
			}
			for _, h := range []byte(p.s[p.i : p.i+4]) {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return nil, false
				}
			}
			r, n := jsonRune(p.s[p.i:])
			if n == 4 && r >= 0xD800 && r < 0xE000 {
				return nil, false // a lone surrogate: encoding/json's rules for it are its own
			}
			b.WriteRune(r)
			p.i += n
		default:
			return nil, false
		}
	}
	return nil, false
}

func (p *jsonParser) number() (any, bool) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || n > 1 && p.s[intStart] == '0' {
		return nil, false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		return nil, false
	}
	return f, true
}
