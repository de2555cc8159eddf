package format_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/compactkit/compact/format"
)

const chat = `[
  {"role": "system", "content": "You are a shell assistant."},
  {"role": "user", "content": "Which files are here?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"dir\": \".\"}"}}]},
  {"role": "tool", "tool_call_id": "call_1", "content": "README.md"},
  {"role": "assistant", "content": "Just README.md."}
]`

// Read detects the format from the content and keeps each message's source
// record, so unchanged messages can be written back byte for byte.
func ExampleRead() {
	t, err := format.Read(strings.NewReader(chat), "chat.json", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Format, len(t.Messages), "messages")
	for _, g := range t.ToolGroups() {
		fmt.Println("call in message", g.Call, "answered by", g.Results)
	}
	fmt.Println("unchanged:", t.Messages[1].Unchanged())
	// Output:
	// openai 5 messages
	// call in message 2 answered by [3]
	// unchanged: true
}

// A malformed file gets an *Error saying where and what was expected.
func ExampleRead_badInput() {
	_, err := format.Read(strings.NewReader(`[{"role": "user", "content": 42}]`), "chat.json", "")
	var fe *format.Error
	if errors.As(err, &fe) {
		fmt.Println(err)
	}
	// Output:
	// chat.json: byte 1: openai: content: expected a string or an array of parts, got a number
}

// Convert writes a transcript in another format: here OpenAI Chat to an
// Anthropic Messages request, the system message moving to "system" and the
// tool message becoming a tool_result block.
func ExampleConvert() {
	if err := format.Convert(os.Stdout, strings.NewReader(chat), "chat.json", format.Anthropic); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	// "system": "You are a shell assistant.",
	// "messages": [
	// {"role":"user","content":"Which files are here?"},
	// {"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"ls","input":{"dir":"."}}]},
	// {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"README.md"}]},
	// {"role":"assistant","content":"Just README.md."}
	// ]
	// }
}
