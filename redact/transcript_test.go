package redact

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

func buildTranscript() compact.Transcript {
	args, _ := json.Marshal(map[string]any{"command": "curl -H 'Authorization: Bearer " + tJWT + "' https://api.acme.io", "timeout": 30})
	m := []compact.Message{
		{ID: "u1", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "deploy with GITHUB_TOKEN=" + tGitHub}}},
		{ID: "a1", Role: compact.RoleAssistant, Parts: []compact.Part{
			{Type: compact.PartThinking, Text: "the user gave me " + tGitHub + ", use it"},
			{Type: compact.PartText, Text: "Running the request."},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "call_1", Name: "bash", Arguments: args}},
		}},
		{ID: "t1", Role: compact.RoleTool, ToolCallIDs: []string{"call_1"}, Parts: []compact.Part{
			{Type: compact.PartToolResult, CallID: "call_1", Text: "AWS_SECRET_ACCESS_KEY=" + tAWSSec + "\nok"}}},
		{ID: "u2", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartImage, Image: &compact.Image{URL: "https://u:" + tPassword + "@cdn.acme.io/a.png"}}}},
	}
	for i := range m {
		rec, _ := json.Marshal(map[string]any{"id": m[i].ID, "raw": m[i].Parts})
		m[i].Source = compact.Source{Format: "test", Records: []json.RawMessage{rec}, Fingerprint: m[i].Fingerprint()}
	}
	rec, _ := json.Marshal(map[string]string{"type": "session_meta", "cwd": "/repo", "env": "OPENAI_API_KEY=" + tOpenAI})
	return compact.Transcript{Format: "test", Messages: m,
		Records:  []compact.Record{{At: 0, Type: "session_meta", Raw: rec}},
		Envelope: json.RawMessage(`{"info": {"password": "` + tPassword + `"}}`),
		Tools:    []compact.ToolDef{{Name: "bash", Description: "runs commands; token " + tNPM}},
	}
}

func TestTranscript(t *testing.T) {
	in := buildTranscript()
	before, _ := json.Marshal(in)
	r := newTestRedactor(t)
	out, found := r.Transcript(in)

	if after, _ := json.Marshal(in); !bytes.Equal(before, after) {
		t.Fatal("Transcript modified its input")
	}
	all, _ := json.Marshal(out)
	for _, s := range []string{tGitHub, tJWT, tAWSSec, tPassword, tOpenAI, tNPM} {
		if bytes.Contains(all, []byte(s)) {
			t.Errorf("output still holds %.20s...", s)
		}
	}
	// Arguments stay valid JSON and keep their shape.
	var args map[string]any
	if err := json.Unmarshal(out.Messages[1].Parts[2].ToolCall.Arguments, &args); err != nil {
		t.Fatalf("arguments: %v", err)
	}
	if args["timeout"] != float64(30) || !strings.Contains(args["command"].(string), "Bearer [REDACTED:") {
		t.Errorf("arguments: %v", args)
	}
	// One secret, one mask: the token in the user text and in the thinking.
	if a, b := out.Messages[0].Parts[0].Text, out.Messages[1].Parts[0].Text; !strings.Contains(a, "[REDACTED:github-token#1]") ||
		!strings.Contains(b, "[REDACTED:github-token#1]") {
		t.Errorf("masks differ: %q / %q", a, b)
	}
	// Changed messages no longer claim their source records.
	for i, m := range out.Messages {
		if m.Unchanged() {
			t.Errorf("message %d still Unchanged() after redaction", i)
		}
		for _, rec := range m.Source.Records {
			if !json.Valid(rec) {
				t.Errorf("message %d: source record not JSON", i)
			}
		}
	}
	fields := map[string]int{}
	for _, f := range found {
		fields[f.Field]++
	}
	for _, f := range []string{"text", "thinking", "arguments", "result", "image", "source", "record", "envelope", "tool"} {
		if fields[f] == 0 {
			t.Errorf("no finding with field %q: %v", f, fields)
		}
	}
	// A message with no secret is untouched, source and all.
	clean := compact.Transcript{Messages: []compact.Message{in.Messages[1]}}
	clean.Messages[0].Parts = clean.Messages[0].Parts[1:2]
	clean.Messages[0].Source.Records = []json.RawMessage{json.RawMessage(`{"text": "Running the request."}`)}
	clean.Messages[0].Source.Fingerprint = clean.Messages[0].Fingerprint()
	c2, f2 := r.Transcript(clean)
	if len(f2) != 0 || !c2.Messages[0].Unchanged() {
		t.Errorf("clean message changed: %v", f2)
	}
}

// TestTranscriptRoundTrip reads a real Claude Code session, plants secrets
// in a tool result, redacts it and writes it back: the result must read
// again, keep every message, and hold no secret, not even in the raw
// records a writer copies.
func TestTranscriptRoundTrip(t *testing.T) {
	raw, err := os.ReadFile(transcriptFile(t, "claudecode_agentcmd_full-session-four.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := format.Read(bytes.NewReader(raw), "session.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	planted := false
	for i := range tr.Messages {
		for j := range tr.Messages[i].Parts {
			if p := &tr.Messages[i].Parts[j]; p.Type == compact.PartToolResult && !planted {
				p.Text += "\n$ env\nNPM_TOKEN=" + tNPM + "\nDB_PASSWORD=" + tPassword + "\n"
				planted = true
			}
		}
	}
	if !planted {
		t.Fatal("no tool result to plant a secret in")
	}
	r := newTestRedactor(t)
	out, found := r.Transcript(tr)
	if len(found) < 2 {
		t.Fatalf("findings: %v", found)
	}
	var buf bytes.Buffer
	if err := format.Write(&buf, out, format.Name(tr.Format)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{tNPM, tPassword} {
		if bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("written transcript holds %s", s)
		}
	}
	back, err := format.Read(bytes.NewReader(buf.Bytes()), "out.jsonl", "")
	if err != nil {
		t.Fatalf("re-read: %v", err)
	}
	if len(back.Messages) != len(tr.Messages) {
		t.Errorf("%d messages after, %d before", len(back.Messages), len(tr.Messages))
	}
	// Without secrets, redaction changes nothing.
	clean, err := format.Read(bytes.NewReader(raw), "session.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	c, f := r.Transcript(clean)
	if len(f) != 0 {
		t.Errorf("false positives in a real session: %v", f)
	}
	buf.Reset()
	if err := format.Write(&buf, c, format.Name(clean.Format)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), raw) {
		t.Error("a session without secrets is not written back byte for byte")
	}
}
