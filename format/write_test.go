package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/compactkit/compact"
)

// TestWriteRejectsInvalidRawJSON: a transcript built in code whose tool
// arguments are not JSON is refused by every writer before a byte is
// written, instead of a panic or a null in their place.
func TestWriteRejectsInvalidRawJSON(t *testing.T) {
	tr := compact.Transcript{Messages: []compact.Message{
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "go"}}},
		{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"cmd":`)}}}},
	}}
	for _, f := range Formats() {
		if f.Write == nil {
			continue
		}
		var out bytes.Buffer
		err := Write(&out, tr, f.Name)
		if !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%s: err = %v, want ErrInvalidJSON", f.Name, err)
		}
		if out.Len() > 0 {
			t.Errorf("%s: wrote %d bytes before failing", f.Name, out.Len())
		}
	}
}
