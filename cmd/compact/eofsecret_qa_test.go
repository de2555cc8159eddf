package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QA-38 end to end: a tool output cut short (`head -c 300 deploy/5.env`)
// ends inside a quoted password. It is in the dropped middle, so by
// DESIGN's invariant it never appears in a handoff or a redacted
// checkpoint; the middle's redaction misses it (the quote never closes),
// the fallback lists it under "Names", and it lands in the handoff file,
// the compacted transcript's handoff and the redacted checkpoint. (With
// --summarizer llm it is also sent to the LLM; the LLM handoff's own check
// then catches "1 unmasked secrets (password)" and falls back to this same
// leaking fallback.)
func TestQACutShortSecretStaysOutOfHandoffAndCheckpoint(t *testing.T) {
	const secret = "Kq7mZ2pQA99xWv05"
	msgs := []map[string]any{{"role": "system", "content": "agent"}, {"role": "user", "content": "Check the deployment config."}}
	for i := 0; i < 30; i++ {
		id := fmt.Sprintf("c%d", i)
		out := strings.Repeat(fmt.Sprintf("output %d ", i), 30)
		if i == 5 {
			out = "# deploy 5\nHOST=db5.internal\nDB_PASSWORD=\"" + secret
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "bash", "arguments": fmt.Sprintf(`{"command":"head -c 300 deploy/%d.env"}`, i)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": out})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": "What did you find?"})
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "chat.json")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	code, _, stderr := runCmd(t, "", nil, "--force", "--summarizer", "fallback", "--handoff", filepath.Join(dir, "h.md"),
		"--checkpoint", ck, "--session", "s1", in, "-o", filepath.Join(dir, "out.json"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{"h.md", "out.json", "ck/s1/log"} {
		got, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(got), secret) {
			t.Errorf("%s holds the dropped middle's password %q", p, secret)
		}
	}
}
