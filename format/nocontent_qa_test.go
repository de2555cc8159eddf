package format_test

import (
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-33: a message record whose text is in no field the reader knows (a
// newer layout moved it, or another agent's file read with --format) is
// read as an empty message, silently: count sees 4 tokens where there are
// thousands, the handoff loses the text. The Claude Code reader already
// warns ("it carries no message content") and keeps the record; every
// reader should do the same (or fail naming the line), never read it empty
// without a word.
func TestQAMessageWithNoKnownContentIsNotReadEmptySilently(t *testing.T) {
	const ask = "fix the bug in main.go"
	cases := []struct{ name, fmt, in string }{
		{"openai: user text under \"text\"", "openai",
			`[{"role":"user","text":"` + ask + `"},{"role":"assistant","content":"ok"}]`},
		{"openai-jsonl: user text under \"parts\"", "openai-jsonl",
			`{"role":"user","parts":[{"text":"` + ask + `"}]}` + "\n" + `{"role":"assistant","content":"ok"}` + "\n"},
		{"gemini-cli JSON: user text under \"parts\"", "gemini-cli",
			`{"sessionId":"a","projectHash":"b","messages":[{"id":"1","type":"user","parts":[{"text":"` + ask + `"}]},{"id":"2","type":"gemini","content":"ok"}]}`},
		{"gemini-cli JSONL: user text under \"message\" (a Claude Code line)", "gemini-cli",
			`{"sessionId":"a","projectHash":"b","startTime":"2026-04-29T21:39:22.319Z"}` + "\n" +
				`{"id":"1","type":"user","message":{"role":"user","content":"` + ask + `"}}` + "\n" +
				`{"id":"2","type":"gemini","content":"ok"}` + "\n"},
		{"codex: user message text under \"text\"", "codex",
			`{"timestamp":"t","type":"session_meta","payload":{"id":"a"}}` + "\n" +
				`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","text":"` + ask + `"}}` + "\n" +
				`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}` + "\n"},
		{"mini-swe-agent: user text under \"text\"", "mini-swe-agent",
			`{"info":{},"messages":[{"role":"user","text":"` + ask + `"},{"role":"assistant","content":"ok"}]}`},
		{"anthropic: user text under \"text\"", "anthropic",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","text":"` + ask + `"},{"role":"assistant","content":"ok"}]}`},
		{"openai-responses: user message text under \"text\"", "openai-responses",
			`{"model":"m","input":[{"type":"message","role":"user","text":"` + ask + `"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`},
		// The reference behaviour, which passes today.
		{"claude-code: user text under \"text\"", "claude-code",
			`{"type":"user","uuid":"1","sessionId":"s","message":{"role":"user","text":"` + ask + `"}}` + "\n" +
				`{"type":"assistant","uuid":"2","parentUuid":"1","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}` + "\n"},
	}
	for _, c := range cases {
		var warned []format.Warning
		tr, err := format.ReadWith(strings.NewReader(c.in), "in.json", format.Name(c.fmt), format.ReadOptions{
			Warn: func(w format.Warning) { warned = append(warned, w) }})
		if err != nil {
			continue // an error naming the record is an acceptable answer
		}
		emptyUser := false
		for _, m := range tr.Messages {
			if m.Role == "user" && strings.TrimSpace(m.Text()) == "" {
				emptyUser = true
			}
		}
		if emptyUser && len(warned) == 0 {
			t.Errorf("%s: the user message is read empty (%d messages) with no warning and no error; want the record kept with a warning (as claude-code does) or an error naming it", c.name, len(tr.Messages))
		}
	}
}
