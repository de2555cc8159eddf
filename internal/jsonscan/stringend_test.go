package jsonscan

import (
	"strings"
	"testing"
)

// stringEndByBytes is StringEnd as it was, byte by byte: the reference
// the quote search is held to.
func stringEndByBytes(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// FuzzStringEnd: StringEnd finds the end the byte-by-byte scan finds, from
// every quote of any text.
func FuzzStringEnd(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	for _, s := range []string{`"\\"`, `"\\\"" "`, `"a\\\\\"b\\"`, `"\`, `"\\`, `"` + strings.Repeat(`\\`, 40) + `"`, `"` + strings.Repeat(`\"`, 40) + `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i < len(s); i++ {
			if s[i] != '"' {
				continue
			}
			if got, want := StringEnd(s, i), stringEndByBytes(s, i); got != want {
				t.Fatalf("StringEnd(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	})
}
