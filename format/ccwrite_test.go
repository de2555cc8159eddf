package format

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/internal/corpus"
)

// TestConvertCorpusToClaudeCode converts every corpus transcript to Claude
// Code and checks what Claude Code needs to load it: one JSON record per
// line, tool_use inputs that are objects, tool_result blocks only in user
// records; and that it reads back with the same calls and pairs (QA-36:
// pretty-printed arguments broke the JSONL, Gemini results sat in the
// assistant turn).
func TestConvertCorpusToClaudeCode(t *testing.T) {
	for _, file := range corpus.AllTranscripts(t) {
		in := readFile(t, file)
		name := filepath.Base(file)
		out := writeTo(t, in, ClaudeCode)
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		if Name(in.Format) == ClaudeCode && len(in.Envelope) > 0 {
			// A {"loglines": [...]} export is written back as one.
			lines = nil
			if !json.Valid(out) {
				t.Errorf("%s: the export written is not JSON", name)
			}
		}
		for i, line := range lines {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("%s: line %d is not JSON: %v", name, i+1, err)
			}
			var rec struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &rec) != nil {
				continue // a record of the input kept as it was
			}
			var elems []json.RawMessage
			if rec.Message.Content == nil || rec.Message.Content[0] != '[' {
				continue
			}
			if err := json.Unmarshal(rec.Message.Content, &elems); err != nil {
				t.Fatalf("%s: line %d: content: %v", name, i+1, err)
			}
			for _, e := range elems {
				var b struct {
					Type  string          `json:"type"`
					Input json.RawMessage `json:"input"`
				}
				if json.Unmarshal(e, &b) != nil {
					continue
				}
				switch {
				case b.Type == "tool_result" && rec.Type != ccUser:
					t.Errorf("%s: line %d: a tool_result in a %s record", name, i+1, rec.Type)
				case b.Type == "tool_use" && (len(b.Input) == 0 || b.Input[0] != '{'):
					t.Errorf("%s: line %d: a tool_use input %.40s, not an object", name, i+1, b.Input)
				}
			}
		}
		back, err := Read(bytes.NewReader(out), "out.jsonl", "")
		if err != nil || Name(back.Format) != ClaudeCode {
			t.Fatalf("%s: read back as %q: %v", name, back.Format, err)
		}
		if g, w := callNames(back), callNames(in); g != w {
			t.Errorf("%s: calls read back differ", name)
		}
		if g, w := orphanKinds(back), orphanKinds(in); g != w {
			t.Errorf("%s: orphans %s, want %s", name, g, w)
		}
	}
}
