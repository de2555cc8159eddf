package format_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
)

// A handoff written into an OpenAI transcript has no summary field there;
// reading it back must still know it for what it is, and write it back
// byte for byte.
func TestReadMarksHandoffs(t *testing.T) {
	h := compact.Handoff{TaskSnapshot: "fix the build"}.Message()
	msgs := []map[string]any{
		{"role": "system", "content": "be brief"},
		{"role": "user", "content": h.Text()},
		{"role": "user", "content": "and " + compact.HandoffBegin + " in the middle is no handoff"},
	}
	in, _ := json.MarshalIndent(msgs, "", " ")
	tr, err := format.Read(bytes.NewReader(in), "chat.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := []bool{tr.Messages[0].Summary, tr.Messages[1].Summary, tr.Messages[2].Summary}; got[0] || !got[1] || got[2] {
		t.Fatalf("Summary flags %v, want only the handoff marked", got)
	}
	if tr.Messages[1].IsUserAsk() {
		t.Fatal("a handoff is not the user's ask")
	}
	if !tr.Messages[1].Unchanged() {
		t.Fatal("marking the handoff made it look edited")
	}
	var out bytes.Buffer
	if err := format.Write(&out, tr, format.OpenAIChat); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), string(tr.Messages[1].Source.Records[0])) {
		t.Fatal("the handoff was not written back from its source record")
	}
}
