package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets hold every function of the package to encoding/json:
// on any input, the same answer, or a refusal where encoding/json refuses.
// Run one with, e.g., go test -run '^$' -fuzz FuzzMembers ./internal/jsonscan.

var seeds = []string{
	`{"command":["bash","-lc","cd /w && go test ./..."],"workdir":"/w"}`,
	`{"file_path":"a.go","old_string":"x\ty","new_string":"\u00e9\ud83d\ude00\n\"q\"","n":-1.5e3,"ok":true,"z":null,"l":[1,[2,{}]]}`,
	`"{\"path\": \"x\"}"`,
	`{"a":"\ud800"}`,
	`{"a":"\ud800\u0041"}`,
	`{"a":"bad \x escape"}`,
	`{"a":1,"a":2}`,
	`{"A":1,"a":2,"key":3,"KEY":4}`,
	`[01]`,
	"{\"a\":\"\xff\"}",
	"\"\x00\"",
	` {"a" : [ ] , "b":{ } } `,
	`{"a":1e400}`,
	`[1,2,]`,
	`{"a":1,}`,
	`{"a" 1}`,
	`[[[[[[]]]]]]`,
	`"\u2028 < > & é"`,
	``,
}

// FuzzUnquote: Unquote accepts exactly the string literals encoding/json
// accepts and decodes them to the same string; UnquotePrefix agrees with
// it on every closed literal and never reads past its input.
func FuzzUnquote(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add(`"plain"`)
	f.Add(`"a\nb\"c\\d\/e\u00e9\ud83d\ude00"rest`)
	f.Add(`"cut \`)
	f.Add(`"cut \u12`)
	f.Fuzz(func(t *testing.T, lit string) {
		got, ok := Unquote(lit)
		gotB, okB := Unquote([]byte(lit))
		gotR, okR := Unquote(json.RawMessage(lit))
		gotS, okS := UnquoteShared([]byte(lit))
		if got != gotB || ok != okB || got != gotR || ok != okR || got != gotS || ok != okS {
			t.Fatalf("Unquote(%q): string %q %v, []byte %q %v, RawMessage %q %v, shared %q %v", lit, got, ok, gotB, okB, gotR, okR, gotS, okS)
		}
		var want string
		wantErr := json.Unmarshal([]byte(lit), &want)
		literal := strings.HasPrefix(lit, `"`) && strings.TrimRight(lit, " \t\r\n") == lit
		if ok && (wantErr != nil || want != got) {
			t.Fatalf("Unquote(%q) = %q, encoding/json %q, %v", lit, got, want, wantErr)
		}
		if !ok && literal && wantErr == nil {
			t.Fatalf("Unquote(%q) refused what encoding/json decodes as %q", lit, want)
		}
		if len(lit) == 0 || lit[0] != '"' {
			return
		}
		body, n := UnquotePrefix(lit[1:])
		if n < 0 || n > len(lit)-1 {
			t.Fatalf("UnquotePrefix(%q) read %d of %d bytes", lit[1:], n, len(lit)-1)
		}
		if closed := n > 0 && lit[n] == '"' && StringEnd(lit, 0) == n+1; closed {
			if w, ok := Unquote(lit[:n+1]); ok && w != body {
				t.Fatalf("UnquotePrefix(%q) = %q, Unquote %q", lit[1:], body, w)
			}
		}
	})
}

// FuzzQuote: AppendQuote writes what encoding/json's Encoder writes with
// SetEscapeHTML(false), and Unquote reads it back.
func FuzzQuote(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(b.String(), "\n")
		if got := Quote(s); got != want {
			t.Fatalf("Quote(%q) = %s, encoding/json %s", s, got, want)
		}
		if got := string(AppendQuote([]byte("x"), []byte(s))); got != "x"+want {
			t.Fatalf("AppendQuote([]byte(%q)) = %s, encoding/json %s", s, got, want)
		}
		back, ok := Unquote(want)
		if !ok || utf8.ValidString(s) && back != s {
			t.Fatalf("Unquote(Quote(%q)) = %q, %v", s, back, ok)
		}
	})
}

// FuzzMembers: on a valid object, Members lists what decoding it into a
// map of raw values gives (the last of repeated keys winning), and Find
// picks the member a struct field's decoding would; on a valid array,
// Elements lists its elements; on any valid value, ValueEnd finds its end;
// on any input at all, nothing panics or reads out of range.
func FuzzMembers(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		members, complete := Members(s)
		for _, m := range members {
			if m.Value.Start < 0 || m.Value.Start > len(s) || m.Value.End > len(s) || m.Value.End >= 0 && m.Value.End < m.Value.Start {
				t.Fatalf("Members(%q): span %v out of range", s, m.Value)
			}
		}
		elems, arrComplete := Elements(s)
		for _, e := range elems {
			if e.Start < 0 || e.End > len(s) || e.End < e.Start {
				t.Fatalf("Elements(%q): span %v out of range", s, e)
			}
		}
		// MembersElements reads the first array member's elements in the
		// same pass: what Members and Elements give, when both read the
		// text whole.
		if list := firstArrayMember(s, members); list != "" {
			m2, e2, c2 := MembersElements(s, list)
			var want []Span
			wantComplete := complete
			for _, m := range members {
				if m.Key == list && m.Value.End >= 0 && s[m.Value.Start] == '[' {
					es, ok := Elements(s[m.Value.Start:m.Value.End])
					wantComplete = wantComplete && ok
					for _, e := range es {
						want = append(want, Span{m.Value.Start + e.Start, m.Value.Start + e.End})
					}
				}
			}
			if wantComplete && (!c2 || !reflect.DeepEqual(m2, members) || !reflect.DeepEqual(e2, want) && len(e2)+len(want) > 0) {
				t.Fatalf("MembersElements(%q, %q) = %v, %v, %v; Members and Elements %v, %v", s, list, m2, e2, c2, members, want)
			}
			if c2 && !wantComplete {
				t.Fatalf("MembersElements(%q, %q) complete where Members and Elements are not", s, list)
			}
		}
		end := ValueEnd(s, 0)
		if end > len(s) {
			t.Fatalf("ValueEnd(%q) = %d past the end", s, end)
		}
		if !json.Valid([]byte(s)) {
			return
		}
		trimmed := strings.TrimRight(s, " \t\r\n")
		first := s[SkipSpace(s, 0)]
		if first == '{' || first == '[' || first == '"' {
			if end != len(trimmed) {
				t.Fatalf("ValueEnd(%q) = %d, want %d", s, end, len(trimmed))
			}
		}
		switch first {
		case '{':
			var want map[string]json.RawMessage
			if err := json.Unmarshal([]byte(s), &want); err != nil {
				t.Fatal(err)
			}
			if !complete {
				t.Fatalf("Members(%q) not complete", s)
			}
			got := map[string]json.RawMessage{}
			for _, m := range members {
				got[m.Key] = json.RawMessage(Value(s, m.Value))
			}
			if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("Members(%q) = %v, encoding/json %v", s, got, want)
			}
			var field struct {
				Key json.RawMessage `json:"key"`
			}
			if err := json.Unmarshal([]byte(s), &field); err != nil {
				t.Fatal(err)
			}
			v := Lookup(s, "key")
			if v != string(field.Key) && !(v == "null" && field.Key == nil) {
				t.Fatalf("Lookup(%q, key) = %s, encoding/json %s", s, v, field.Key)
			}
		case '[':
			var want []json.RawMessage
			if err := json.Unmarshal([]byte(s), &want); err != nil {
				t.Fatal(err)
			}
			if !arrComplete || len(elems) != len(want) {
				t.Fatalf("Elements(%q) = %v (complete %v), encoding/json %d elements", s, elems, arrComplete, len(want))
			}
			for i, e := range elems {
				if s[e.Start:e.End] != string(want[i]) {
					t.Fatalf("Elements(%q)[%d] = %s, encoding/json %s", s, i, s[e.Start:e.End], want[i])
				}
			}
		}
		// Literals: every string of the document, keys included, in order.
		var want []string
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if str, ok := tok.(string); ok {
				want = append(want, str)
			}
		}
		var got []string
		for _, l := range Literals(s) {
			str, ok := Unquote(s[l.Start-1 : l.End+1])
			if !ok {
				t.Fatalf("Literals(%q): %q is not a literal", s, s[l.Start-1:l.End+1])
			}
			got = append(got, str)
		}
		if !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Literals(%q) = %q, encoding/json %q", s, got, want)
		}
	})
}

// FuzzDecode: Decode gives encoding/json's value, or an error for the same
// inputs.
func FuzzDecode(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Decode(s)
		var want any
		wantErr := json.Unmarshal([]byte(s), &want)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Decode(%q) error %v, encoding/json %v", s, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) = %#v, encoding/json %#v", s, got, want)
		}
		shared, serr := DecodeShared([]byte(s))
		if (serr == nil) != (err == nil) || err == nil && !reflect.DeepEqual(shared, got) {
			t.Fatalf("DecodeShared(%q) = %#v, %v; Decode %#v, %v", s, shared, serr, got, err)
		}
	})
}

// firstArrayMember is the key of the first member of members whose value
// is an array, "" when none is.
func firstArrayMember(s string, members []Member) string {
	for _, m := range members {
		if m.Value.End >= 0 && m.Value.Start < len(s) && s[m.Value.Start] == '[' {
			return m.Key
		}
	}
	return ""
}
