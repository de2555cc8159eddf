package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Fuzz targets, one per reader of the API formats. Each reads arbitrary
// bytes with its format forced: it must return a transcript or an *Error,
// never panic; and a transcript it returns must convert to every writer and
// read back with its calls, orphans and texts (checkConversion).
//
//	go test -fuzz=FuzzReadOpenAIChat -fuzztime=2m ./format/

func FuzzReadOpenAIChat(f *testing.F) {
	seedFuzz(f, "testdata/openai/*.json", `[{"role":"user","content":[{"type":"text","text":"x"}]}]`, `{"messages":[],"tools":[]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, OpenAIChat) })
}

func FuzzReadOpenAIChatJSONL(f *testing.F) {
	seedFuzz(f, "testdata/openai/*.jsonl", "{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"x\"}\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, OpenAIChatJSONL) })
}

// seedFuzz adds the fixtures matching glob, the small corpus files (the
// large ones slow every execution down) and extra inputs as seeds.
func seedFuzz(f *testing.F, glob string, extra ...string) {
	files, _ := filepath.Glob(glob)
	var seeds []string
	if corpus.Available() { // the shared corpus adds seeds where it is
		seeds, _ = filepath.Glob(filepath.Join(corpusDir(f), "*"))
	}
	for _, c := range seeds {
		if st, err := os.Stat(c); err == nil && st.Size() < 16<<10 && filepath.Ext(c) != ".md" && filepath.Ext(c) != ".py" {
			files = append(files, c)
		}
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

func fuzzReader(t *testing.T, data []byte, as Name) {
	for _, fm := range Formats() {
		if fm.Sniff != nil {
			fm.Sniff(data) // must not panic on any head
		}
	}
	tr, err := Read(bytes.NewReader(data), "fuzz", as)
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) is not an *Error", err, err)
		}
		if fe.File != "fuzz" || fe.Msg == "" {
			t.Fatalf("error %+v does not name the file or say what was expected", fe)
		}
		return
	}
	for _, to := range writers {
		checkConversion(t, tr, to)
	}
}

// FuzzScanOAMessage: where the one-pass reader of a chat message serves a
// record, it reads what json.Unmarshal reads.
func FuzzScanOAMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`,
		`{"role":"tool","tool_call_id":"c","content":"ok","name":"f"}`,
		`{"role":"user","content":[{"type":"text","text":"hi"}],"ROLE":"system"}`,
		`{"role":"assistant","function_call":{"name":"f","arguments":{"a":1}},"refusal":null,"reasoning_content":"r"}`,
		`{"role":1}`, `{"role":"user","tool_calls":[null,{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := scanOAMessage(raw)
		if !ok || !json.Valid(raw) {
			return
		}
		var want oaMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("served %q, which json.Unmarshal refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(normOA(got), normOA(want)) {
			t.Fatalf("%q:\n got %+v\nwant %+v", raw, got, want)
		}
	})
}

// normOA makes raw values comparable (nil and empty alike).
func normOA(o oaMessage) oaMessage {
	norm := func(r jsonscan.Raw) jsonscan.Raw {
		if len(r) == 0 {
			return nil
		}
		return r
	}
	o.Content, o.Reasoning, o.ID = norm(o.Content), norm(o.Reasoning), norm(o.ID)
	if o.FunctionCall != nil && len(o.FunctionCall.Arguments) == 0 {
		o.FunctionCall.Arguments = nil
	}
	for i := range o.ToolCalls {
		if fn := o.ToolCalls[i].Function; fn != nil && len(fn.Arguments) == 0 {
			fn.Arguments = nil
		}
	}
	if len(o.ToolCalls) == 0 {
		o.ToolCalls = nil
	}
	return o
}
