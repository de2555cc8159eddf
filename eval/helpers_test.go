package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/compactor"
	"github.com/compactkit/compact/format"
)

// fallbackConfig is the compaction future_use.py measures by default:
// the CLI's defaults with --summarizer fallback.
func fallbackConfig() compactor.Config {
	cfg := compactor.DefaultConfig()
	cfg.Strategy = compactor.StrategyFallback
	return cfg
}

// agentSession writes an OpenAI Chat session of turns tool calls: the
// agent reads a file per turn (its output names a function and a
// constant), says what it found, and from turn 5 on edits a file it read
// five turns before, so later turns need names only earlier turns held.
func agentSession(t testing.TB, turns int) []byte {
	t.Helper()
	msgs := []compact.Message{
		{Role: compact.RoleSystem, Parts: []compact.Part{{Type: compact.PartText, Text: "You are a coding agent."}}},
		{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: "Make the request handlers retry on timeouts."}}},
	}
	pad := strings.Repeat("// filler line of an unremarkable source file\n", 60)
	for i := range turns {
		id := fmt.Sprintf("call_%d", i)
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("pkg/mod%d/handler%d.go", i, i)})
		var text string
		if i >= 5 {
			j := i - 5
			args, _ = json.Marshal(map[string]string{"path": fmt.Sprintf("pkg/mod%d/handler%d.go", j, j),
				"edit": fmt.Sprintf("retry handle_request_%d on timeout_after_%d", j, j)})
			text = fmt.Sprintf("Editing pkg/mod%d/handler%d.go to retry handle_request_%d.", j, j, j)
		} else {
			text = fmt.Sprintf("Reading pkg/mod%d/handler%d.go.", i, i)
		}
		msgs = append(msgs,
			compact.Message{Role: compact.RoleAssistant, Parts: []compact.Part{
				{Type: compact.PartText, Text: text},
				{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: "tool", Arguments: args}}}},
			compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: []compact.Part{{Type: compact.PartText,
				Text: fmt.Sprintf("package mod%d\n\nconst timeout_after_%d = %d\n\nfunc handle_request_%d() error {\n%s}\n", i, i, 30000+i, i, pad)}}},
		)
	}
	var b bytes.Buffer
	if err := format.Write(&b, compact.Transcript{Messages: msgs}, format.OpenAIChat); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
