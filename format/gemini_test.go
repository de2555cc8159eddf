package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestGeminiCallAndResultInOneMessage(t *testing.T) {
	tr := readCorpus(t, "gemini_agentcmd_session-2025-10-29T10-36-453aa339.json")
	m := tr.Messages[1]
	if m.Parts[0].Type != compact.PartThinking || !strings.HasPrefix(m.Parts[0].Text, "Initiating File Operations\n") {
		t.Errorf("thought read as %q", m.Parts[0].Text)
	}
	g := tr.ToolGroups()
	if len(g) != 3 || g[0].Call != 1 || len(g[0].Results) != 1 || g[0].Results[0] != 1 {
		t.Fatalf("groups %+v", g)
	}
	if r := m.ResultText(); r != "Hello from Gemini CLI" {
		t.Errorf("result %q", r)
	}
	// Pruning the result rewrites only its output; the call keeps its own
	// fields (status, displayName, ...).
	for i, p := range m.Parts {
		if p.Type == compact.PartToolResult {
			m.Parts[i].Text = "[pruned]"
		}
	}
	tr.Messages[1] = m
	var out bytes.Buffer
	if err := Write(&out, tr, GeminiCLI); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Messages []struct {
			ToolCalls []map[string]json.RawMessage `json:"toolCalls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tc := doc.Messages[1].ToolCalls[0]
	if string(tc["status"]) != `"success"` || string(tc["displayName"]) != `"ReadFile"` || !bytes.Contains(tc["result"], []byte(`"output":"[pruned]"`)) {
		t.Errorf("tool call written as %s", tc["result"])
	}
	back, err := Read(bytes.NewReader(out.Bytes()), "t", "")
	if err != nil || back.Messages[1].Fingerprint() != m.Fingerprint() {
		t.Errorf("read back %v", err)
	}
}

func TestGeminiNotesAreRecords(t *testing.T) {
	src := `{"sessionId":"s","projectHash":"h","messages":[
  {"id":"1","timestamp":"2025-10-01T00:00:00Z","type":"user","content":"hi"},
  {"id":"2","timestamp":"2025-10-01T00:00:01Z","type":"info","content":"Request cancelled."},
  {"id":"3","timestamp":"2025-10-01T00:00:02Z","type":"gemini","content":[{"text":"hello"}]}
]}`
	tr, err := Read(strings.NewReader(src), "chat.json", "")
	if err != nil || tr.Format != string(GeminiCLI) {
		t.Fatal(err, tr.Format)
	}
	if len(tr.Messages) != 2 || len(tr.Records) != 1 || tr.Records[0].Type != "info" || tr.Records[0].At != 1 || tr.Messages[1].Text() != "hello" {
		t.Errorf("read %+v", tr)
	}
	var out bytes.Buffer
	if err := Write(&out, tr, GeminiCLI); err != nil || out.String() != src {
		t.Errorf("round trip (%v):\n%s", err, out.String())
	}
	_, err = Read(strings.NewReader(src[:60]), "chat.json", GeminiCLI)
	var fe *Error
	if !errors.As(err, &fe) || fe.Format != GeminiCLI || !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("truncated document: %v", err)
	}
}
