package format_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-43: detection looks at the first SniffSize (1 MiB) bytes; an OpenAI
// Chat, Anthropic or SWE-agent document whose first message is longer
// (a pasted log, a big file read into the system prompt) was "unrecognised
// transcript format", though it is valid and reads with --format.
//
// Each document here must be detected as the same document with a short
// first message is, and read whole. The key orders are the ones writers
// use (Python's and the SDKs' insertion order) and Go's sorted map keys,
// which put a message's "content" before its "role".
func TestQADetectsADocumentWhoseFirstMessageIsOverTheSniffSize(t *testing.T) {
	big := strings.Repeat("word \\\"quoted\\\" ", format.SniffSize/14+20000)
	docs := []struct {
		name, want, doc string
		msgs            int
	}{
		{"openai array", "openai", `[{"role":"user","content":"BIG"},{"role":"assistant","content":"ok"}]`, 2},
		{"openai array, sorted keys", "openai", `[{"content":"BIG","role":"user"},{"content":"ok","role":"assistant"}]`, 2},
		{"openai request, system first", "openai", `{"model":"gpt-4o","messages":[{"role":"system","content":"BIG"},{"role":"user","content":"hi"}]}`, 2},
		{"openai content parts", "openai", `[{"role":"user","content":[{"type":"text","text":"BIG"}]},{"role":"assistant","content":"ok"}]`, 2},
		{"anthropic, long system prompt", "anthropic", `{"model":"claude","max_tokens":1024,"system":"BIG","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`, 3},
		{"anthropic, long first message", "anthropic", `{"model":"claude","max_tokens":1024,"system":"be brief","messages":[{"role":"user","content":"BIG"},{"role":"assistant","content":"ok"}]}`, 3},
		{"anthropic blocks", "anthropic", `{"model":"claude","max_tokens":1024,"system":[{"type":"text","text":"BIG"}],"messages":[{"role":"user","content":"hi"}]}`, 2},
		{"responses items", "openai-responses", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"BIG"}]},{"type":"function_call","call_id":"c","name":"x","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]`, 3},
		{"responses request, long input", "openai-responses", `{"model":"gpt-5","input":[{"role":"user","content":"BIG"}]}`, 1},
		{"swe-agent, long observation", "swe-agent", `{"environment":"swe_main","trajectory":[{"action":"ls","observation":"BIG","response":"r","thought":"t"}],"history":[{"role":"system","content":"s"},{"role":"assistant","content":"ok"}],"info":{}}`, 2},
		{"swe-agent, sorted keys", "swe-agent", `{"history":[{"content":"BIG","role":"system"},{"content":"ok","role":"assistant"}],"info":{},"trajectory":[]}`, 2},
	}
	for _, d := range docs {
		short, err := format.Detect([]byte(strings.Replace(d.doc, "BIG", "short", 1)))
		if err != nil || string(short.Name) != d.want {
			t.Fatalf("%s: the short document is detected as %v (%v), want %s", d.name, short.Name, err, d.want)
		}
		doc := strings.Replace(d.doc, "BIG", big, 1)
		tr, err := format.Read(strings.NewReader(doc), "t.json", "")
		if err != nil {
			t.Errorf("%s document with a %d-byte first message: %v", d.name, len(big), err)
			continue
		}
		if tr.Format != d.want || len(tr.Messages) != d.msgs {
			t.Errorf("%s document: read as %s with %d messages, want %s with %d", d.name, tr.Format, len(tr.Messages), d.want, d.msgs)
		}
	}

	// QA's own documents (sorted keys): the Anthropic one has no field
	// only Anthropic has, so it is what its short twin is.
	bigWords := strings.Repeat("word ", format.SniffSize/5+20000)
	qa := map[string]any{
		"openai":    []any{map[string]any{"role": "user", "content": bigWords}, map[string]any{"role": "assistant", "content": "ok"}},
		"anthropic": map[string]any{"model": "m", "max_tokens": 100, "messages": []any{map[string]any{"role": "user", "content": bigWords}, map[string]any{"role": "assistant", "content": "ok"}}},
		"swe-agent": map[string]any{"history": []any{map[string]any{"role": "system", "content": bigWords}, map[string]any{"role": "assistant", "content": "ok"}}, "info": map[string]any{}, "trajectory": []any{}},
	}
	for name, doc := range qa {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		short, err := format.Detect([]byte(strings.Replace(string(b), bigWords, "short", 1)))
		if err != nil {
			t.Fatalf("%s: short twin: %v", name, err)
		}
		tr, err := format.Read(strings.NewReader(string(b)), "t.json", "")
		if err != nil {
			t.Errorf("%s document with a %d-byte first message: %v", name, len(bigWords), err)
			continue
		}
		if tr.Format != string(short.Name) || len(tr.Messages) != 2 {
			t.Errorf("%s document: read as %s with %d messages, its short twin is %s", name, tr.Format, len(tr.Messages), short.Name)
		}
	}
}

// A window that ends inside one string of something no format claims says
// so, and what to do.
func TestUnrecognisedLongStringSaysTryFormat(t *testing.T) {
	doc := `{"notes":"` + strings.Repeat("x", format.SniffSize+10) + `"}`
	_, err := format.Read(strings.NewReader(doc), "n.json", "")
	if !errors.Is(err, format.ErrUnknownFormat) || !strings.Contains(err.Error(), "--format") {
		t.Fatalf("err = %v, want unrecognised with a --format hint", err)
	}
}
