package format_test

import (
	"strings"
	"testing"

	"github.com/compactkit/compact/format"
)

// QA-45: Claude Code writes each sub-agent's conversation to its own file,
// ~/.claude/projects/<project>/<session>/subagents/agent-<id>.jsonl, every
// record marked isSidechain: true (with agentId). In the main session file
// such records are a sub-agent's and rightly left out; in the sub-agent's
// own file they are the conversation. The reader leaves them all out and
// fails: "226 records, none a message (… 214 sidechain …): no message could
// be read", so inspect, count, check and compact all refuse a real file.
func TestQASubagentTranscriptIsRead(t *testing.T) {
	in := `{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/w","sessionId":"96aceb54-2324-4b17-a9af-5c3d61b28242","version":"2.1.12","gitBranch":"","agentId":"a89e48b","type":"user","message":{"role":"user","content":"Find every caller of parseAmount"},"uuid":"u1","timestamp":"2026-01-01T00:00:00Z"}
{"parentUuid":"u1","isSidechain":true,"userType":"external","cwd":"/w","sessionId":"96aceb54-2324-4b17-a9af-5c3d61b28242","version":"2.1.12","gitBranch":"","agentId":"a89e48b","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"parseAmount is called from report.py and vat.py."}]},"uuid":"a1","timestamp":"2026-01-01T00:00:01Z"}
`
	tr, err := format.Read(strings.NewReader(in), "agent-a89e48b.jsonl", "")
	if err != nil {
		t.Fatalf("a sub-agent's own transcript: %v", err)
	}
	if len(tr.Messages) != 2 {
		t.Errorf("a sub-agent's own transcript: %d messages, want 2", len(tr.Messages))
	}
}
