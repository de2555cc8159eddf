package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A field of the wrong type is named by its path and what it holds; the
// message never shows encoding/json's names of our Go types, and the
// *json.UnmarshalTypeError is still there for errors.As.
func TestTypeErrorsSayNoGoTypes(t *testing.T) {
	for name, in := range map[string]string{
		"codex": `{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/"}}` + "\n" +
			`{"timestamp":"t","type":"compacted","payload":{"message":"m","replacement_history":5}}` + "\n",
		"claude-code": `{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"assistant","uuid":"a","parentUuid":"u","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"id":7}}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(bytes.NewReader([]byte(in)), "in.jsonl", "")
			if err == nil {
				t.Fatal("read a wrong-typed field without an error")
			}
			msg := err.Error()
			for _, internal := range []string{"Go struct", "cannot unmarshal", "jsonscan.", "json.RawMessage"} {
				if strings.Contains(msg, internal) {
					t.Fatalf("the message shows Go internals (%q): %s", internal, msg)
				}
			}
			if !strings.Contains(msg, "in.jsonl:2") || !strings.Contains(msg, "field ") {
				t.Fatalf("the message does not say where and which field: %s", msg)
			}
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &typ) {
				t.Fatalf("errors.As lost the type error: %v", err)
			}
		})
	}
}
