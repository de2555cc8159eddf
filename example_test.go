package compact_test

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
)

// A transcript's tool groups are the units a compaction keeps or drops
// whole: each assistant turn that calls tools, with the messages answering it.
func ExampleTranscript_ToolGroups() {
	call := func(id string) compact.Part {
		return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)}}
	}
	t := compact.Transcript{Messages: []compact.Message{
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "run the tests twice"}}},
		{Role: compact.RoleAssistant, Parts: []compact.Part{call("a"), call("b")}},
		{Role: compact.RoleTool, ToolCallIDs: []string{"a"}, Parts: []compact.Part{{Type: compact.PartText, Text: "ok"}}},
		{Role: compact.RoleTool, ToolCallIDs: []string{"b"}, Parts: []compact.Part{{Type: compact.PartText, Text: "ok"}}},
		{Role: compact.RoleAssistant, Parts: []compact.Part{call("c")}},
	}}
	for _, g := range t.ToolGroups() {
		fmt.Printf("call at %d answered by %v, unanswered %v\n", g.Call, g.Results, g.Missing)
	}
	fmt.Println(len(t.Orphans()), "orphan")
	// Output:
	// call at 1 answered by [2 3], unanswered []
	// call at 4 answered by [], unanswered [c]
	// 1 orphan
}

// ParseHandoff reads a handoff back from its rendering, or from an LLM's
// answer that uses the same headings.
func ExampleParseHandoff() {
	h := compact.Handoff{
		TaskSnapshot:     "Make the retry test pass.",
		CompletedActions: []string{"bash `go test ./retry` → exit 1", "edit retry/backoff.go → ok"},
		RelevantFiles:    []string{"retry/backoff.go (edited)"},
	}
	back, err := compact.ParseHandoff(h.Render())
	fmt.Println(err, back.TaskSnapshot, len(back.CompletedActions), back.RelevantFiles[0])
	// Output: <nil> Make the retry test pass. 2 retry/backoff.go (edited)
}

// An agent loop builds its transcript with the message constructors: no
// parts by hand, and every call paired with its result.
func ExampleAssistantMessage() {
	t := compact.Transcript{Messages: []compact.Message{
		compact.UserMessage("Run the tests."),
		compact.AssistantMessage("Running them.", compact.ToolCall{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"cmd":"go test ./..."}`)}),
		compact.ToolErrorMessage("call_1", "--- FAIL: TestParse"),
		compact.AssistantMessage("", compact.ToolCall{ID: "call_2", Name: "bash", Arguments: json.RawMessage(`{"cmd":"go test -run TestParse -v"}`)}),
		compact.ToolResultMessage("call_2", "ok"),
	}}
	fmt.Println(t.Messages[0].IsUserAsk(), len(t.ToolGroups()), len(t.Orphans()), t.Messages[2].Parts[0].IsError)
	// Output: true 2 0 true
}
