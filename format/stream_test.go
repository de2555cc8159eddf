package format

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/corpus"
)

// streamAll collects what Stream hands over, applying its resets as a
// caller keeping the live context would.
func streamAll(t *testing.T, data []byte, name string) []compact.Message {
	t.Helper()
	var msgs []compact.Message
	_, err := Stream(bytes.NewReader(data), name, "", ReadOptions{}, Sink{
		Message: func(m compact.Message) error { msgs = append(msgs, m); return nil },
		Reset: func(keep func(compact.Role, bool) bool) {
			kept := msgs[:0]
			for _, m := range msgs {
				if keep != nil && keep(m.Role, m.Summary) {
					kept = append(kept, m)
				}
			}
			msgs = kept
		},
		Rewind: func(n int) { msgs = msgs[:n] },
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return msgs
}

// TestStreamMatchesRead: for every corpus file, the messages Stream hands
// over (resets applied) are the messages Read returns, with the same ids,
// content and tags.
func TestStreamMatchesRead(t *testing.T) {
	for _, file := range corpus.AllTranscripts(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Read(bytes.NewReader(data), file, "")
		if err != nil {
			t.Fatal(err)
		}
		got := streamAll(t, data, file)
		if len(got) != len(want.Messages) {
			t.Errorf("%s: streamed %d messages, read %d", filepath.Base(file), len(got), len(want.Messages))
			continue
		}
		for i := range got {
			g, w := &got[i], &want.Messages[i]
			if g.ID != w.ID || g.Fingerprint() != w.Fingerprint() || g.Source.Fingerprint != w.Source.Fingerprint ||
				len(g.Source.Records) != len(w.Source.Records) || tagsOf(g) != tagsOf(w) {
				t.Errorf("%s: message %d differs: %s %s vs %s %s", filepath.Base(file), i, g.ID, tagsOf(g), w.ID, tagsOf(w))
				break
			}
		}
	}
}

func tagsOf(m *compact.Message) string {
	var b bytes.Buffer
	for _, p := range m.Parts {
		if p.ToolCall != nil {
			b.WriteString(string(p.ToolCall.Kind) + ":" + p.ToolCall.Target + ";")
		}
		if p.Failed {
			b.WriteString("F")
		}
		if p.Harness {
			b.WriteString("H")
		}
	}
	return b.String()
}

// TestStreamCompactions: a Claude Code compact boundary and a Codex
// compacted line reset what was streamed, so the messages kept are the
// live context.
func TestStreamCompactions(t *testing.T) {
	cc := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"old ask"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"old answer"}]}}
{"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"logicalParentUuid":"a1","sessionId":"s"}
{"type":"user","uuid":"s1","parentUuid":"b1","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"summary"}}
{"type":"user","uuid":"u2","parentUuid":"s1","sessionId":"s","message":{"role":"user","content":"new ask"}}
`
	got := streamAll(t, []byte(cc), "cc.jsonl")
	if len(got) != 2 || got[0].ID != "s1" || got[1].ID != "u2" {
		t.Errorf("claude code: %d messages %+v", len(got), got)
	}
	cx := `{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ask"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"answer"}]}}
{"timestamp":"t","type":"compacted","payload":{"message":"what happened"}}
`
	got = streamAll(t, []byte(cx), "r.jsonl")
	var roles []string
	for _, m := range got {
		roles = append(roles, string(m.Role))
	}
	if len(got) != 3 || !got[2].Summary || got[0].Role != compact.RoleDeveloper || got[1].Role != compact.RoleUser {
		t.Errorf("codex: %v", roles)
	}
}
