package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// QA-20: Redactor.Transcript masks a tool call's Arguments but leaves the
// reader's tag ToolCall.Target (the command, path or URL the arguments
// hold) as it was, so the secret stays in every copy that keeps the tag:
// a redacted checkpoint stores it and `checkpoint show --json` prints it.
func TestQAToolCallTargetRedacted(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const tok = "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"
	cmd := `curl -s -H "Authorization: Bearer ` + tok + `" https://api.github.com/user`
	args, _ := json.Marshal(map[string]string{"command": cmd})
	tr := compact.Transcript{Messages: []compact.Message{
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "who am I on GitHub?"}}},
		{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{
			ID: "c1", Name: "Bash", Arguments: args, Kind: compact.ToolKind("shell"), Target: cmd,
		}}}},
	}}
	out, found := r.Transcript(tr)
	if len(found) == 0 {
		t.Fatalf("no finding: the token in the arguments was not seen")
	}
	call := out.Messages[1].Parts[0].ToolCall
	if strings.Contains(string(call.Arguments), tok) {
		t.Errorf("arguments keep the token: %s", call.Arguments)
	}
	if strings.Contains(call.Target, tok) {
		t.Errorf("ToolCall.Target keeps the token after Transcript: %q", call.Target)
	}
	if tr.Messages[1].Parts[0].ToolCall.Target != cmd {
		t.Errorf("input modified")
	}
}

// QA-26: Transcript masks a tool definition's Description but not its
// Parameters (the JSON Schema, whose "description"/"default"/"enum" strings
// an agent fills with examples and, now and then, a real key), so
// `compact --redact-kept` writes them whole.
func TestQAToolParametersRedacted(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const tok = "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"
	params := `{"type":"object","properties":{"token":{"type":"string","description":"GitHub token, e.g. ` + tok + `","default":"` + tok + `"}}}`
	tr := compact.Transcript{
		Tools:    []compact.ToolDef{{Name: "gh", Description: "calls GitHub", Parameters: json.RawMessage(params)}},
		Messages: []compact.Message{{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "hi"}}}},
	}
	out, _ := r.Transcript(tr)
	if strings.Contains(string(out.Tools[0].Parameters), tok) {
		t.Errorf("tool parameters keep the token: %s", out.Tools[0].Parameters)
	}
	if !json.Valid(out.Tools[0].Parameters) {
		t.Errorf("parameters no longer valid JSON")
	}
}
