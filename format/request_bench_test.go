package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/cputime"
)

// requestBody builds a request of about size bytes to one of the three
// APIs compact serve reads (OpenAI Chat, OpenAI Responses, Anthropic
// Messages): a coding session of asks, tool calls with JSON arguments and
// multi-line tool results.
func requestBody(as Name, size int) []byte {
	var items []any
	output := strings.Repeat("--- FAIL: TestParse (0.00s)\n    parse_test.go:41: got \"a\\tb\", want \"a b\" — line 7\n", 12)
	for i, total := 0, 0; total < size; i++ {
		ask := fmt.Sprintf("Step %d: the parser still fails on tabs; look at parse.go and fix it, then run the tests.", i)
		args := fmt.Sprintf(`{"command":"go test ./parse -run TestParse -count=1 # %d","timeout":120}`, i)
		id := fmt.Sprintf("call_%d", i)
		var turn []any
		switch as {
		case OpenAIChat:
			turn = []any{
				map[string]any{"role": "user", "content": ask},
				map[string]any{"role": "assistant", "content": "Running the tests.", "tool_calls": []any{map[string]any{
					"id": id, "type": "function", "function": map[string]any{"name": "bash", "arguments": args}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": output},
			}
		case OpenAIResponses:
			turn = []any{
				map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": ask}}},
				map[string]any{"type": "reasoning", "id": "rs_" + id, "summary": []any{map[string]any{"type": "summary_text", "text": "Run the failing test first."}}},
				map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": "bash", "arguments": args},
				map[string]any{"type": "function_call_output", "call_id": id, "output": output},
			}
		case Anthropic:
			turn = []any{
				map[string]any{"role": "user", "content": ask},
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "text", "text": "Running the tests."},
					map[string]any{"type": "tool_use", "id": id, "name": "bash", "input": json.RawMessage(args)}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": output}}},
			}
		}
		b, _ := json.Marshal(turn)
		total += len(b)
		items = append(items, turn...)
	}
	var req map[string]any
	switch as {
	case OpenAIChat:
		req = map[string]any{"model": "gpt-4o", "messages": append([]any{map[string]any{"role": "system", "content": "You are a coding agent."}}, items...)}
	case OpenAIResponses:
		req = map[string]any{"model": "gpt-5", "instructions": "You are a coding agent.", "input": items}
	case Anthropic:
		req = map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": "You are a coding agent.", "messages": items}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(req)
	return b.Bytes()
}

// BenchmarkReadRequest100KB reads a 100 KB request of each API, as compact
// serve reads one it has not seen (issue 15: a cold request adds at most
// 1 ms in all).
func BenchmarkReadRequest100KB(b *testing.B) {
	for _, as := range []Name{OpenAIChat, OpenAIResponses, Anthropic} {
		body := requestBody(as, 100<<10)
		b.Run(string(as), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				t, err := Read(bytes.NewReader(body), "request", as)
				if err != nil || len(t.Messages) < 100 {
					b.Fatalf("%v, %d messages", err, len(t.Messages))
				}
			}
			// CPU time, which a machine shared with other work changes
			// less than wall time.
			b.ReportMetric(float64((cputime.Process()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
