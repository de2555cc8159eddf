package format

import (
	"strings"
	"testing"
)

// TestWarningsSayWhereOnce (QA-8.8): a warning names its file, line (or
// byte) and format once, in its location, never again in its text
// ("s.jsonl:2: claude-code: warning: line skipped: s.jsonl:2:
// claude-code: invalid JSON"): for a damaged line skipped by every
// line-oriented reader, and for invalid UTF-8 in a line and a document.
func TestWarningsSayWhereOnce(t *testing.T) {
	const bad = `{"type": oops`
	for _, c := range []struct {
		name  string
		as    Name
		lines []string // line 2 is replaced by a damaged one
	}{
		{"cc.jsonl", ClaudeCode, []string{
			`{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}`, "",
			`{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}`}},
		{"cx.jsonl", Codex, []string{
			`{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`, "",
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`}},
		{"oa.jsonl", OpenAIChatJSONL, []string{`{"role":"user","content":"hi"}`, "", `{"role":"assistant","content":"ok"}`}},
		{"rs.jsonl", OpenAIResponses, []string{
			`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`, "",
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}`}},
		{"gm.jsonl", GeminiCLI, []string{
			`{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}`, "",
			`{"id":"1","timestamp":"t","type":"user","content":"hi"}`}},
		{"oh.jsonl", OpenHands, []string{
			`{"instance_id":"a","history":[{"id":0,"source":"user","action":"message","args":{"content":"hi"}}]}`, "",
			`{"instance_id":"b","history":[{"id":0,"source":"user","action":"message","args":{"content":"yo"}}]}`}},
	} {
		t.Run(string(c.as), func(t *testing.T) {
			lines := append([]string(nil), c.lines...)
			lines[1] = bad
			var warned []Warning
			_, err := ReadWith(strings.NewReader(strings.Join(lines, "\n")+"\n"), c.name, c.as,
				ReadOptions{SkipBadLines: true, Warn: func(w Warning) { warned = append(warned, w) }})
			if err != nil {
				t.Fatal(err)
			}
			skipped := 0
			for _, w := range warned {
				if w.Kind != WarnSkipped {
					continue
				}
				skipped++
				s := w.String()
				if w.Line != 2 || !strings.HasPrefix(s, c.name+":2: "+string(c.as)+": warning: line skipped: ") {
					t.Errorf("warning %q (line %d)", s, w.Line)
				}
				if strings.Count(s, c.name) != 1 || strings.Count(s, string(c.as)+":") != 1 || strings.Contains(w.Msg, "line 2") {
					t.Errorf("the warning says where more than once: %q", s)
				}
			}
			if skipped != 1 {
				t.Errorf("%d skip warnings, want 1: %+v", skipped, warned)
			}
			// check's problem for the line says it once too.
			_, probs, err := Check([]byte(strings.Join(lines, "\n")+"\n"), c.name, c.as)
			if err != nil || len(probs) == 0 {
				t.Fatalf("Check: %v %v", probs, err)
			}
			if s := probs[0].String(); probs[0].Line != 2 || strings.Contains(s, c.name) || strings.Count(s, "line 2") != 1 || strings.Contains(s, ":2:") {
				t.Errorf("Check's problem says where more than once: %q", s)
			}
		})
	}
	for _, c := range []struct{ name, src string }{
		{"u.jsonl", "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}\n"},
		{"u.json", "[{\"role\":\"user\",\"content\":\"ok\"},\n {\"role\":\"user\",\"content\":\"caf\xe9\"}]"},
	} {
		var warned []Warning
		if _, err := ReadWith(strings.NewReader(c.src), c.name, "", ReadOptions{Warn: func(w Warning) { warned = append(warned, w) }}); err != nil || len(warned) != 1 {
			t.Fatalf("%s: %v %+v", c.name, err, warned)
		}
		s := warned[0].String()
		if strings.Count(s, c.name) != 1 || strings.Count(s, "byte") != 1 {
			t.Errorf("%s: the warning says where more than once, or not at all: %q", c.name, s)
		}
	}
}
