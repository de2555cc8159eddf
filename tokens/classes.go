package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes the split patterns of o200k_base and cl100k_base tell
// apart, as bits of one byte. They follow the Unicode tables of Go's unicode
// package, which is also what the regexp2 engine behind tiktoken-go uses.
const (
	clsL     uint8 = 1 << iota // \p{L}
	clsN                       // \p{N}
	clsM                       // \p{M}
	clsSpace                   // \s: unicode.IsSpace (the White_Space property)
	clsNL                      // \r or \n
	clsUpper                   // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsLower                   // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clsSlash                   // '/', which o200k lets trail a punctuation run
)

// classTableSize covers the Basic Multilingual Plane and the Supplementary
// Multilingual Plane (emoji, historic scripts, mathematical letters); runes
// above it are classified on the fly.
const classTableSize = 0x20000

var (
	classOnce  sync.Once
	classTable []uint8
)

// classes returns the class table, building it on first use. Walking the
// range tables costs well under a millisecond.
func classes() []uint8 {
	classOnce.Do(func() { classTable = buildClassTable() })
	return classTable
}

func buildClassTable() []uint8 {
	t := make([]uint8, classTableSize)
	set := func(rt *unicode.RangeTable, bits uint8) {
		for _, r := range rt.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				t[c] |= bits
			}
		}
		for _, r := range rt.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi) && c < classTableSize; c += rune(r.Stride) {
				t[c] |= bits
			}
		}
	}
	set(unicode.Lu, clsL|clsUpper)
	set(unicode.Lt, clsL|clsUpper)
	set(unicode.Ll, clsL|clsLower)
	set(unicode.Lm, clsL|clsUpper|clsLower)
	set(unicode.Lo, clsL|clsUpper|clsLower)
	set(unicode.M, clsM|clsUpper|clsLower)
	set(unicode.N, clsN)
	set(unicode.White_Space, clsSpace)
	t['\r'] |= clsNL
	t['\n'] |= clsNL
	t['/'] |= clsSlash
	return t
}

// classOf classifies a rune outside the table.
func classOf(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
		c = clsL | clsUpper
	case unicode.Is(unicode.Ll, r):
		c = clsL | clsLower
	case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
		c = clsL | clsUpper | clsLower
	case unicode.Is(unicode.M, r):
		c = clsM | clsUpper | clsLower
	case unicode.Is(unicode.N, r):
		c = clsN
	}
	if unicode.IsSpace(r) {
		c |= clsSpace
	}
	return c
}

// classAt returns the class of the rune at s[i] and its length in bytes.
// s must be valid UTF-8.
func classAt(t []uint8, s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return t[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < classTableSize {
		return t[r], n
	}
	return classOf(r), n
}

// Derived predicates. A "punct" rune is one of [^\s\p{L}\p{N}]; a "prefix"
// rune may open a word in both patterns: [^\r\n\p{L}\p{N}].
func isPunct(c uint8) bool  { return c&(clsSpace|clsL|clsN) == 0 }
func isPrefix(c uint8) bool { return c&(clsNL|clsL|clsN) == 0 }
