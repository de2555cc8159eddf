package jsonscan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Member is one member of a JSON object: its key, unquoted, and the span
// of its value in the text the object was read from.
type Member struct {
	Key   string
	Value Span
}

// Members lists the members of the JSON object that starts b (after
// optional whitespace), in order. complete is false when b ends before the
// object closes or the object is malformed; the members read up to there
// are still returned, and a last value that b ends inside of has Value.End
// -1 (detection looks into the start of a long list that way).
func Members[T Text](b T) (members []Member, complete bool) {
	members, _, complete = MembersElements(b, "")
	return members, complete
}

// MembersElements is Members, and when the value of the member named list
// is an array, the spans of its elements too (in b, as Elements would give
// them after the array's start): one pass over the text, where Members and
// then Elements would read the array twice. A list member found more than
// once gives the elements of each, one after the other.
func MembersElements[T Text](b T, list string) (members []Member, elems []Span, complete bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, nil, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return members, elems, false
		}
		end := StringEnd(b, i)
		if end < 0 {
			return members, elems, false
		}
		key, ok := Unquote(b[i:end])
		if !ok {
			return members, elems, false
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return members, elems, false
		}
		start := SkipSpace(b, i+1)
		var vend int
		if list != "" && key == list && start < len(b) && b[start] == '[' {
			elems, vend = elementsAt(b, start, elems)
		} else {
			vend = ValueEnd(b, start)
		}
		if vend < 0 {
			if start < len(b) {
				members = append(members, Member{Key: key, Value: Span{start, -1}})
			}
			return members, elems, false
		}
		members = append(members, Member{Key: key, Value: Span{start, vend}})
		i = SkipSpace(b, vend)
		if i >= len(b) {
			return members, elems, false
		}
		switch b[i] {
		case '}':
			return members, elems, true
		case ',':
			i = SkipSpace(b, i+1)
		default:
			return members, elems, false
		}
	}
}

// elementsAt appends to elems the spans of the elements of the array whose
// '[' is b[i], and returns them and the index just past the array, -1 when
// b ends inside it or it is malformed.
func elementsAt[T Text](b T, i int, elems []Span) ([]Span, int) {
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return elems, i + 1
	}
	for {
		end := ValueEnd(b, i)
		if end < 0 {
			return elems, -1
		}
		elems = append(elems, Span{i, end})
		i = SkipSpace(b, end)
		if i >= len(b) {
			return elems, -1
		}
		switch b[i] {
		case ']':
			return elems, i + 1
		case ',':
			i = SkipSpace(b, i+1)
		default:
			return elems, -1
		}
	}
}

// Elements lists the spans of the elements of the JSON array that starts b
// (after optional whitespace). complete is false when b ends before the
// array closes or the array is malformed; the elements read up to there
// are still returned (an element b ends inside of is left out).
func Elements[T Text](b T) (elems []Span, complete bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	elems, end := elementsAt(b, i, nil)
	return elems, end >= 0
}

// Find returns the span of the value of key among members, and whether
// the key is there. Keys match as encoding/json matches them to struct
// fields, so that a scan and a decode agree on odd input:
// case-insensitively, the last occurrence winning.
func Find(members []Member, key string) (Span, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if strings.EqualFold(members[i].Key, key) {
			return members[i].Value, true
		}
	}
	return Span{}, false
}

// Value returns the bytes of the value at s in b: b[s.Start:s.End], or
// b[s.Start:] when the value is cut short (End -1).
func Value[T Text](b T, s Span) T {
	if s.End < 0 {
		return b[s.Start:]
	}
	return b[s.Start:s.End]
}

// Lookup returns the raw value of key in the JSON object obj (matched as
// Find matches), or the zero text (nil, for a byte slice) when obj has no
// such member or is not an object.
func Lookup[T Text](obj T, key string) T {
	members, _ := Members(obj)
	return ValueOf(obj, members, key)
}

// LookupString returns the string value of key in the JSON object obj, or
// "" when it is missing or not a valid string.
func LookupString[T Text](obj T, key string) string {
	v := Lookup(obj, key)
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	s, _ := Unquote(v)
	return s
}

// ValueOf returns the value of key among the members of obj (read with
// Members(obj)), matched as Find matches, or the zero text (nil, for a
// byte slice).
func ValueOf[T Text](obj T, members []Member, key string) T {
	if s, ok := Find(members, key); ok {
		return Value(obj, s)
	}
	var none T
	return none
}

// HasKeys reports whether the JSON object obj has a member for every key,
// matched exactly (a format's own field names, which it never varies in
// case).
func HasKeys[T Text](obj T, keys ...string) bool {
	members, _ := Members(obj)
	for _, k := range keys {
		if !slices.ContainsFunc(members, func(m Member) bool { return m.Key == k }) {
			return false
		}
	}
	return true
}

// SetMembers returns a copy of the JSON object obj with the members in set
// replaced in place (or appended, in the order of order, when obj has
// none) and the members in drop removed. Members it does not touch keep
// their bytes; whitespace between members is not kept, so the result is
// one line when the values are.
func SetMembers(obj []byte, set map[string]json.RawMessage, order []string, drop ...string) []byte {
	members, _ := Members(obj)
	var b bytes.Buffer
	b.Grow(len(obj) + 64)
	b.WriteByte('{')
	done := map[string]bool{}
	n := 0
	put := func(key string, val []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(AppendQuote(nil, key))
		b.WriteByte(':')
		b.Write(val)
	}
	for _, m := range members {
		if m.Value.End < 0 || slices.Contains(drop, m.Key) {
			continue
		}
		if v, ok := set[m.Key]; ok {
			put(m.Key, v)
			done[m.Key] = true
			continue
		}
		put(m.Key, obj[m.Value.Start:m.Value.End])
	}
	for _, k := range order {
		if v, ok := set[k]; ok && !done[k] {
			put(k, v)
			done[k] = true
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
