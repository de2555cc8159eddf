package format_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-36: `compact convert --to claude-code` (and `checkpoint show
// --transcript --to claude-code`) writes a file Claude Code cannot load:
// (a) a tool call's arguments are copied as they were read, so the
// pretty-printed args of a Gemini CLI session (or an OpenAI arguments
// string holding newlines) put line breaks inside a JSONL record: the file
// does not even read back (`inspect`: "line 2: invalid JSON"), exit 0 on
// convert; 4 of the corpus's Gemini sessions convert to such files.
// (b) a Gemini model turn's tool results are written as tool_result blocks
// inside the assistant record; Claude Code (the Anthropic API) takes
// tool_result only in a user turn (convert --to anthropic splits them).
func TestQAClaudeCodeWriterWritesLoadableJSONL(t *testing.T) {
	gemini := `{
  "sessionId": "a",
  "projectHash": "b",
  "messages": [
    {"id": "1", "type": "user", "content": "list the files"},
    {"id": "2", "type": "gemini", "content": "", "toolCalls": [
      {"id": "ls-1", "name": "list_directory", "args": {
          "path": "/tmp"
        }, "status": "success", "result": [{"functionResponse": {"id": "ls-1", "name": "list_directory", "response": {"output": "a b"}}}]}
    ]},
    {"id": "3", "type": "gemini", "content": "done"}
  ]
}`
	openai := `[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\n  \"path\": \"/tmp\"\n}"}}]},{"role":"tool","tool_call_id":"c1","content":"a b"}]`
	for _, c := range []struct{ name, in string }{{"gemini-cli", gemini}, {"openai", openai}} {
		var out bytes.Buffer
		if err := format.Convert(&out, strings.NewReader(c.in), "in", format.Name("claude-code")); err != nil {
			t.Fatalf("%s: convert: %v", c.name, err)
		}
		for i, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			var rec struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("%s: line %d of the claude-code output is not a JSON record: %v: %.80q", c.name, i+1, err, line)
				continue
			}
			var blocks []struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(rec.Message.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "tool_result" && rec.Type == "assistant" {
					t.Errorf("%s: line %d: a tool_result block inside an assistant record (the API takes it only in a user turn)", c.name, i+1)
				}
			}
		}
		if _, err := format.Read(strings.NewReader(out.String()), "out.jsonl", format.Name("claude-code")); err != nil {
			t.Errorf("%s: the claude-code output does not read back: %v", c.name, err)
		}
	}
}
