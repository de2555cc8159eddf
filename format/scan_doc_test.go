package format

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// TestScanJSONDocMatchesDecoder holds the in-place read of a whole JSON
// document to the streaming decoder's: the same fields, items and offsets,
// on every JSON document of the corpus and on hand-made shapes; and the
// in-place read declines whatever the decoder reports or keeps otherwise.
func TestScanJSONDocMatchesDecoder(t *testing.T) {
	docs := map[string][]byte{
		"bare array":     []byte(`[{"role":"user","content":"hi"}, {"role":"assistant","content":"a\"b"}]`),
		"object":         []byte("{\"model\": \"m\",\n \"messages\" : [ {\"role\":\"user\"} ,{}],\"tools\":[{\"x\":1}], \"n\": 1.5e3}"),
		"bom":            append([]byte(utf8BOM), []byte(` {"messages":[{"a":1}]} `)...),
		"escaped key":    []byte(`{"mess\u0061ges":[{"a":"\u00e9"}],"k\"ey" :{"b":[1,2]}}`),
		"duplicate keys": []byte(`{"messages":[{"a":1}],"messages":[{"b":2}]}`),
		"two lists":      []byte(`{"input":[{"a":1}],"output":[{"b":2},{"c":3}]}`),
		"empty":          []byte(`{"messages":[]}`),
		"empty array":    []byte(`[]`),
		"nested lists":   []byte(`{"x":{"messages":[1]},"messages":[[1,2],{"messages":[3]}]}`),
	}
	declined := map[string][]byte{
		"scalar list":  []byte(`{"messages":"none"}`),
		"object list":  []byte(`{"messages":{"a":1}}`),
		"trailing":     []byte(`[{"a":1}] [2]`),
		"syntax error": []byte(`[{"a":1},]`),
		"truncated":    []byte(`[{"a":1},`),
		"scalar":       []byte(`"text"`),
		"nul":          []byte("[{\"a\":\"x\x00y\"}]"),
	}
	compare := func(name string, b []byte, mustAccept bool) bool {
		accepted := false
		for _, lk := range [][]string{{"messages"}, {"input", "output"}, nil} {
			fast, ok := scanJSONDoc(b, lk)
			slow, err := decodeJSONDoc(bytes.NewReader(b), name, OpenAIChat, "a document", lk...)
			switch {
			case !ok && mustAccept:
				t.Errorf("%s %v: the in-place read declined it (decoder: %v)", name, lk, err)
			case !ok:
			case err != nil:
				t.Errorf("%s %v: the in-place read accepted what the decoder rejects: %v", name, lk, err)
			default:
				accepted = true
				if d := docDiff(fast, slow); d != "" {
					t.Errorf("%s %v: %s", name, lk, d)
				}
			}
		}
		return accepted
	}
	for name, b := range docs {
		compare(name, b, true)
	}
	if corpus.Available() {
		n := 0
		for _, path := range corpus.AllTranscripts(t) {
			if b, err := os.ReadFile(path); err == nil && len(b) < 64<<20 && compare(path, b, false) {
				n++
			}
		}
		if n == 0 {
			t.Error("no corpus transcript was read in place")
		}
		t.Logf("%d corpus documents read in place as the decoder reads them", n)
	}
	for name, b := range declined {
		if _, ok := scanJSONDoc(b, []string{"messages"}); ok {
			t.Errorf("%s: the in-place read accepted %q", name, b)
		}
	}
}

func docDiff(a, b jsonDoc) string {
	if a.object != b.object || len(a.fields) != len(b.fields) || len(a.items) != len(b.items) {
		return fmt.Sprintf("object %t/%t, %d/%d fields, %d/%d items", a.object, b.object, len(a.fields), len(b.fields), len(a.items), len(b.items))
	}
	for i := range a.fields {
		x, y := a.fields[i], b.fields[i]
		if x.key != y.key || x.offset != y.offset || !bytes.Equal(x.value, y.value) || (x.value == nil) != (y.value == nil) {
			return fmt.Sprintf("field %d: %q at %d = %.40q, decoder: %q at %d = %.40q", i, x.key, x.offset, x.value, y.key, y.offset, y.value)
		}
	}
	for i := range a.items {
		x, y := a.items[i], b.items[i]
		if !reflect.DeepEqual([]any{x.key, x.offset, string(x.raw)}, []any{y.key, y.offset, string(y.raw)}) {
			return fmt.Sprintf("item %d: %q at %d, decoder: %q at %d", i, x.key, x.offset, y.key, y.offset)
		}
	}
	return ""
}
