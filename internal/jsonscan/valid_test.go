package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValid: Valid answers as json.Valid on any input, for a string and a
// byte slice alike; StringEnd finds the end the byte-at-a-time scan finds.
func FuzzValid(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	for _, s := range []string{`-0.5e+7`, `01`, `1.`, `1e`, `-`, `[1,{"a":[tru]}]`, `"\u12g4"`, `"a\\\"b"`, `{"a":1}x`, " \t\r\n[ ] \n", `{"a":1,"b":}`, `["\\\\"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := json.Valid([]byte(s))
		if got := Valid(s); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", s, got, want)
		}
		if got := Valid(json.RawMessage(s)); got != want {
			t.Fatalf("Valid(RawMessage %q) = %v, json.Valid %v", s, got, want)
		}
		for i := 0; i < len(s); i++ {
			if s[i] == '"' {
				if got, want := StringEnd(s, i), stringEndSlow(s, i); got != want {
					t.Fatalf("StringEnd(%q, %d) = %d, want %d", s, i, got, want)
				}
			}
		}
	})
}

// stringEndSlow is StringEnd one byte at a time, as it was written first.
func stringEndSlow(b string, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// Nesting as deep as encoding/json allows is valid; one level more is not.
func TestValidDepth(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closing := map[string]string{"[": "]", `{"a":`: "}"}[open]
			for _, inner := range []string{"1", "[]", "{}"} {
				s := strings.Repeat(open, depth-1) + inner + strings.Repeat(closing, depth-1)
				if got, want := Valid(s), json.Valid([]byte(s)); got != want {
					t.Errorf("depth %d (%s…%s): Valid %v, json.Valid %v", depth, open, inner, got, want)
				}
			}
		}
	}
}

func BenchmarkValid(b *testing.B) {
	doc := benchDoc()
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jsonscan", Valid[[]byte]}, {"encoding-json", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if !v.valid(doc) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// benchDoc is a chat request of about 100 KB: long texts with escapes,
// tool calls whose arguments are JSON in a string.
func benchDoc() []byte {
	var msgs []map[string]any
	for len(msgs) < 120 {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": strings.Repeat("Please look at the failing test in pkg/x and fix it.\n\tThanks! ", 8)},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": "bash", "arguments": `{"command":"go test ./... 2>&1 | tail -n 40","timeout":120}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": strings.Repeat("--- FAIL: TestX (0.00s)\n    x_test.go:12: got \"a\", want \"b\"\n", 6)},
		)
	}
	doc, _ := json.Marshal(map[string]any{"model": "gpt-4o", "messages": msgs, "temperature": 0.2})
	return doc
}

func BenchmarkValueEnd(b *testing.B) {
	doc := benchDoc()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if ValueEnd(doc, 0) != len(doc) {
			b.Fatal("end")
		}
	}
}

// FuzzLoneSurrogate: on a valid string literal free of U+FFFD of its own,
// LoneSurrogate finds an escape exactly when decoding it yields U+FFFD,
// and never panics on any input.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{`"\ud83d\ude00"`, `"cut \ud83d"`, `"\ude00 low"`, `"\ud83d\ud83d\ude00"`, `"\\ud83d"`, `"\\\ud83d"`, `"\u00e9"`, `"\ud83d\u0041"`, `"\ud83d\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		at := LoneSurrogate(lit)
		if at >= len(lit) || at < -1 {
			t.Fatalf("LoneSurrogate(%q) = %d out of range", lit, at)
		}
		if !json.Valid([]byte(lit)) || lit[0] != '"' || !utf8.ValidString(lit) ||
			strings.ContainsRune(lit, utf8.RuneError) || strings.Contains(strings.ToLower(lit), `\ufffd`) {
			return
		}
		s, _ := Unquote(lit)
		if got, want := at >= 0, strings.ContainsRune(s, utf8.RuneError); got != want {
			t.Fatalf("LoneSurrogate(%q) = %d, but the decoded %q has U+FFFD: %v", lit, at, s, want)
		}
		if at >= 0 && !strings.HasPrefix(lit[at:], `\u`) {
			t.Fatalf("LoneSurrogate(%q) = %d, not at an escape", lit, at)
		}
	})
}
