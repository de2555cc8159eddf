package format

import (
	"encoding/json"
	"testing"
)

// closeCut closes a cut document where it was cut, keeping what is whole
// before the cut and marking every object it closes.
func TestCloseCut(t *testing.T) {
	cases := []struct{ head, want string }{
		{`[{"role":"user","content":"abc`, `[{"role":"user","content":"abc","\u0000cut":true}]`},
		{`[{"content":"ab\"c\u00`, `[{"content":"ab\"c","\u0000cut":true}]`},
		{`[{"content":"ab\`, `[{"content":"ab","\u0000cut":true}]`},
		{`{"model":"m","messages":[{"role":"us`, `{"model":"m","messages":[{"role":"us","\u0000cut":true}],"\u0000cut":true}`},
		{`{"model":"m","mess`, `{"model":"m","\u0000cut":true}`},
		{`{"model":"m", "n": 12`, `{"model":"m","\u0000cut":true}`},
		{`{"a":[1,2,`, `{"a":[1,2],"\u0000cut":true}`},
		{`{"a":`, `{"\u0000cut":true}`},
		{`[`, `[]`},
	}
	for _, c := range cases {
		got, _, ok := closeCut([]byte(c.head))
		if !ok || string(got) != c.want {
			t.Errorf("closeCut(%s) = %s, %v; want %s", c.head, got, ok, c.want)
		}
	}
	for _, whole := range []string{`[]`, `{"a":1}`, "{\"a\":1}\n{\"a\":", `"s`, `x`, `[}`, `{"00"  {0000`, `[1 2`, `{"a":tru}`} {
		if got, _, ok := closeCut([]byte(whole)); ok {
			t.Errorf("closeCut(%q) = %s, want not ok", whole, got)
		}
	}
}

// FuzzCloseCut: what closeCut returns is valid JSON, and a prefix of valid
// JSON is always closable.
func FuzzCloseCut(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a\u00e9\n"}]}]}`), 40)
	f.Add([]byte(`[{"content":"x\\\"y","role":"user"},{"role":"assistant","content":null,"n":-1.5e3}]`), 20)
	f.Fuzz(func(t *testing.T, doc []byte, n int) {
		got, _, ok := closeCut(doc)
		if ok && !json.Valid(got) {
			t.Fatalf("closeCut(%q) = %q: not valid JSON", doc, got)
		}
		if !json.Valid(doc) || n <= 0 || n >= len(doc) {
			return
		}
		head := doc[:n]
		if json.Valid(head) {
			return
		}
		if got, _, ok := closeCut(head); ok && !json.Valid(got) {
			t.Fatalf("closeCut(%q) = %q: not valid JSON", head, got)
		}
	})
}
