package jsonscan

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestUnquoteMatchesEncodingJSON: Unquote gives exactly what encoding/json gives, for any valid string literal:
// escapes, surrogate pairs and lone surrogates, invalid UTF-8.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	piece := rapid.OneOf(
		rapid.Map(rapid.SliceOfN(rapid.ByteRange(0x20, 0xff), 1, 8), func(b []byte) string {
			out := make([]byte, 0, len(b))
			for _, c := range b {
				if c != '"' && c != '\\' {
					out = append(out, c)
				}
			}
			return string(out)
		}),
		rapid.SampledFrom([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, "é", "😀", "\u2028"}),
		rapid.Map(rapid.IntRange(0, 0xffff), func(r int) string { return fmt.Sprintf(`\u%04x`, r) }),
		rapid.Map(rapid.IntRange(0xd800, 0xdfff), func(r int) string { return fmt.Sprintf(`\u%04X`, r) }),
	)
	rapid.Check(t, func(t *rapid.T) {
		lit := `"`
		for _, p := range rapid.SliceOfN(piece, 0, 12).Draw(t, "pieces") {
			lit += p
		}
		lit += `"`
		var want string
		if json.Unmarshal([]byte(lit), &want) != nil {
			t.Skip("not a valid literal")
		}
		if got, ok := Unquote([]byte(lit)); !ok || got != want {
			t.Fatalf("%q: got %q, want %q", lit, got, want)
		}
	})
}
