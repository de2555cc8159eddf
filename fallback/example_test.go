package fallback_test

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/fallback"
)

// A window with an ask, a failing command, a fix and a passing run becomes
// a handoff under the same headings an LLM handoff uses.
func ExampleBuild() {
	call := func(id, cmd string) compact.Part {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: args}}
	}
	out := func(id, text string) compact.Message {
		return compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}
	}
	window := []compact.Message{
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "Make the tests pass. Don't change the public API."}}},
		{Role: compact.RoleAssistant, Parts: []compact.Part{call("1", "go test ./...")}},
		out("1", "--- FAIL: TestSum (0.00s)\n    sum_test.go:9: Sum(2, 2) = 5, want 4\nexit status 1"),
		{Role: compact.RoleAssistant, Parts: []compact.Part{{Type: compact.PartText, Text: "The bug is an off-by-one in `Sum`: it adds 1."}}},
		{Role: compact.RoleAssistant, Parts: []compact.Part{call("2", "sed -i 's/a + b + 1/a + b/' sum.go && go test ./...")}},
		out("2", "ok  \texample.com/sum\t0.002s\nexit status 0"),
	}
	h, err := fallback.Build(window, fallback.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Task:", h.TaskSnapshot)
	fmt.Println("Constraints:", h.Constraints)
	for _, a := range h.CompletedActions {
		fmt.Println("Action:", a)
	}
	fmt.Println("Decisions:", h.Decisions)
	fmt.Println("Files:", h.RelevantFiles)
	// Output:
	// Task: Make the tests pass. Don't change the public API.
	// Constraints: [Don't change the public API.]
	// Action: bash go test ./... → exit 1: --- FAIL: TestSum (0.00s) | sum_test.go:9: Sum(2, 2) = 5, want 4
	// Action: bash sed -i 's/a + b + 1/a + b/' sum.go && go test ./... → exit 0: ok  	example.com/sum	0.002s (2 lines)
	// Decisions: [The bug is an off-by-one in `Sum`: it adds 1.]
	// Files: [sum.go (edited) sum_test.go:9]
}
