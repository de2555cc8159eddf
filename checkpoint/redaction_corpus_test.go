package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/corpus"
	"github.com/compactkit/compact/redact"
)

// redactMessages (one pass of the redactor over all the messages a save
// stores) masks exactly the messages that redactMessage (the per-message
// passes it replaced) masks, and stores them as it does: every case of the
// labelled redaction corpus and of gitleaks' rule cases (every third),
// planted as a message's text, as its raw source record and as a tool
// call's arguments and target.
func TestRedactMessagesMasksWhatRedactMessageMasks(t *testing.T) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	type labelled struct {
		ID      string   `json:"id"`
		Text    string   `json:"text"`
		Secrets []string `json:"secrets"`
	}
	var cases []labelled
	for _, f := range []struct {
		name   string
		stride int
	}{{"corpus.jsonl", 1}, {"gitleaks-rule-cases.jsonl", 3}} {
		sc := bufio.NewScanner(bytes.NewReader(corpus.ReadFile(t, corpus.Redact, f.name)))
		sc.Buffer(nil, 1<<24)
		for n := 0; sc.Scan(); n++ {
			var c labelled
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s line %d: %v", f.name, n+1, err)
			}
			if n%f.stride == 0 {
				cases = append(cases, c)
			}
		}
	}
	var msgs []compact.Message
	for _, c := range cases {
		rec, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"content": c.Text}})
		args, _ := json.Marshal(map[string]any{"command": c.Text})
		msgs = append(msgs,
			compact.Message{ID: c.ID + "-text", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: c.Text}}},
			compact.Message{ID: c.ID + "-record", Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartText, Text: "ok"}},
				Source: compact.Source{Format: "test", Records: []json.RawMessage{rec}}},
			compact.Message{ID: c.ID + "-call", Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartToolCall,
				ToolCall: &compact.ToolCall{ID: "call_1", Name: "bash", Arguments: args, Target: c.Text}}}},
		)
	}
	got := redactMessages(r, msgs)
	masked, missed := 0, 0
	for i := range msgs {
		old := redactMessage(r, msgs[i])
		want := appendMessage(nil, &old)
		if stored := appendMessage(nil, &got[i]); !bytes.Equal(stored, want) {
			t.Errorf("%s: stored\n%s\nredactMessage stores\n%s", msgs[i].ID, stored, want)
			continue
		}
		if !sameMessage(&old, &msgs[i]) {
			masked++
		}
		for _, s := range cases[i/3].Secrets {
			if len(s) >= 8 && strings.Contains(string(want), s) {
				missed++ // the redactor's recall, the same on both paths
			}
		}
	}
	if masked == 0 {
		t.Fatal("no message was masked: the corpus holds no secret?")
	}
	t.Logf("%d messages, %d masked by both paths; %d labelled secrets the redactor misses on both", len(msgs), masked, missed)
}
