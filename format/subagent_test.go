package format

import (
	"bytes"
	"os"
	"testing"
)

// TestSubagentTranscript: the sample Claude Code session with every
// record marked as sub-agent a1's (what Claude Code writes to
// subagents/agent-a1.jsonl) reads as the same conversation, is written
// back byte for byte, streams the same, and checks clean; in a main
// session, the sidechain records stay out.
func TestSubagentTranscript(t *testing.T) {
	data, err := os.ReadFile("../testdata/sessions/claudecode_invoicer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	main, err := Read(bytes.NewReader(data), "s.jsonl", ClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	sub := bytes.ReplaceAll(data, []byte(`"isSidechain":false`), []byte(`"isSidechain":true,"agentId":"a1"`))
	if bytes.Equal(sub, data) {
		t.Fatal("the sample has no isSidechain fields to mark")
	}
	tr, err := Read(bytes.NewReader(sub), "agent-a1.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Messages) != len(main.Messages) {
		t.Errorf("sub-agent transcript: %d messages, the session %d", len(tr.Messages), len(main.Messages))
	}
	var out bytes.Buffer
	if err := Write(&out, tr, ClaudeCode); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), sub) {
		t.Error("sub-agent transcript not written back byte for byte")
	}
	if got := streamAll(t, sub, "agent-a1.jsonl"); len(got) != len(tr.Messages) {
		t.Errorf("streamed %d messages, read %d", len(got), len(tr.Messages))
	}
	if _, problems, err := Check(sub, "agent-a1.jsonl", ""); err != nil || len(problems) > 0 {
		t.Errorf("check: %v %v", problems, err)
	}
	// Another agent's records in it, and sidechains after a main record,
	// stay out.
	mixed := string(data) + `{"type":"user","isSidechain":true,"agentId":"b","uuid":"x1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"sub-agent ask"}}` + "\n"
	tm, err := Read(bytes.NewReader([]byte(mixed)), "s.jsonl", ClaudeCode)
	if err != nil || len(tm.Messages) != len(main.Messages) {
		t.Errorf("main session with a sidechain record: %d messages, want %d (%v)", len(tm.Messages), len(main.Messages), err)
	}
}
