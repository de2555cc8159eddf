package format

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrongFormatIsNotReadEmptySilently: any sample session read with
// --format of every other format either fails, or reads no message empty
// without a warning (QA-33: a forced format read every line as an empty
// message, exit 0, no word).
func TestWrongFormatIsNotReadEmptySilently(t *testing.T) {
	files, err := filepath.Glob("../testdata/sessions/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample sessions: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Formats() {
			warned := 0
			tr, err := ReadWith(bytes.NewReader(data), file, f.Name, ReadOptions{Warn: func(Warning) { warned++ }})
			if err != nil {
				continue
			}
			empty := 0
			for _, m := range tr.Messages {
				if len(m.Parts) == 0 {
					empty++
				}
			}
			if empty > 0 && warned == 0 {
				t.Errorf("%s read as %s: %d of %d messages empty, no warning", filepath.Base(file), f.Name, empty, len(tr.Messages))
			}
		}
	}
}

// TestMessageWithNoKnownContentIsKept: where a format keeps records, a
// message whose content is under a field the reader does not know is kept
// as a record (written back as it was) with an unread warning that names
// the fields; where it keeps none, the read fails naming the message.
func TestMessageWithNoKnownContentIsKept(t *testing.T) {
	const ask = `"fix the bug in main.go"`
	kept := []struct {
		as       Name
		in, line string
	}{
		{Codex, `{"timestamp":"t","type":"session_meta","payload":{"id":"a"}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","text":` + ask + `}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}` + "\n",
			`"text":` + ask},
		{GeminiCLI, `{"sessionId":"a","projectHash":"b","startTime":"2026-04-29T21:39:22.319Z"}` + "\n" +
			`{"id":"1","type":"user","parts":[{"text":` + ask + `}]}` + "\n" +
			`{"id":"2","type":"gemini","content":"ok"}` + "\n",
			`"parts":[{"text":` + ask},
		{GeminiCLI, `{"sessionId":"a","projectHash":"b","messages":[{"id":"1","type":"user","parts":[{"text":` + ask + `}]},{"id":"2","type":"gemini","content":"ok"}]}`,
			`"parts":[{"text":` + ask},
		{MiniSWEAgent, `{"info":{},"messages":[{"role":"user","text":` + ask + `},{"role":"assistant","content":"ok"}]}`,
			`"text":` + ask},
		{OpenAIResponses, `{"model":"m","input":[{"type":"message","role":"user","text":` + ask + `},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`,
			`"text":` + ask},
	}
	for _, c := range kept {
		var warned []Warning
		tr, err := ReadWith(strings.NewReader(c.in), "in", c.as, ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
		if err != nil {
			t.Errorf("%s: %v", c.as, err)
			continue
		}
		if len(tr.Messages) != 1 || len(warned) != 1 || warned[0].Kind != WarnUnread || !strings.Contains(warned[0].Msg, `"content"`) {
			t.Errorf("%s: %d messages, warnings %v; want the reply and one unread warning naming the fields", c.as, len(tr.Messages), warned)
		}
		if f, _ := Lookup(c.as); f.Write == nil {
			continue
		}
		var out bytes.Buffer
		if err := Write(&out, tr, c.as); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.line) {
			t.Errorf("%s: the unread record is not written back:\n%s", c.as, out.String())
		}
	}
	failed := []struct {
		as   Name
		in   string
		want string
	}{
		{OpenAIChat, `[{"role":"assistant","content":"hi"},{"role":"user","text":` + ask + `}]`, `message 1 is a message with none of the fields`},
		{OpenAIChatJSONL, `{"role":"user","parts":[{"text":` + ask + `}]}` + "\n", `in:1: openai-jsonl: message 0`},
		{Anthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"user","text":` + ask + `}]}`, `message 0 is a message with none`},
		{Anthropic, `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":null,"tool_calls":[]}]}`, `but "tool_calls"`},
	}
	for _, c := range failed {
		_, err := Read(strings.NewReader(c.in), "in", c.as)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.as, err, c.want)
		}
	}
	// Empty messages with nothing else stay empty messages, read without a word.
	for _, in := range []string{`[{"role":"user","content":""},{"role":"assistant","content":null}]`, `[{"role":"user"},{"role":"assistant","audio":{"id":"a"}}]`} {
		var warned []Warning
		tr, err := ReadWith(strings.NewReader(in), "in", OpenAIChat, ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }})
		if err != nil || len(tr.Messages) != 2 || len(warned) != 0 {
			t.Errorf("%s: %d messages, %v, %v", in, len(tr.Messages), warned, err)
		}
	}
}
