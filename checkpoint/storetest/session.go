package storetest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
)

// NewSession returns the first checkpoint of a growing agent session: the
// user's ask, no steps yet. Grow adds one agent step at a time, the way a
// loop that checkpoints every step builds its state.
func NewSession(session string) *checkpoint.Checkpoint {
	ask := "the integration tests of the payments service fail since the upgrade; find out why and fix it"
	return &checkpoint.Checkpoint{
		Session: session, Task: ask, Status: checkpoint.StatusRunning,
		Transcript: &compact.Transcript{Format: "test", Messages: []compact.Message{
			{ID: "u0", Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: ask}}},
		}},
		ToolCache: map[string]json.RawMessage{},
	}
}

var (
	tools = []string{"read_file", "run_tests", "grep", "edit_file", "list_dir"}
	words = strings.Fields("func return if err != nil the test payment service handler request response " +
		"amount currency ledger account balance retry timeout context cancel error wrap assert expected got " +
		"package import struct interface string int64 decimal round upgrade version module go.mod")
)

// text returns n bytes or so of code-like lines drawn from r.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		for range 3 + r.IntN(9) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Grow appends step i (from 0) to c: an assistant message that explains
// and calls a tool (with the raw source record a reader would keep), the
// tool's result (a few hundred bytes to a couple of KB), a completed plan
// step and the call's cached result. The content depends on i alone.
func Grow(c *checkpoint.Checkpoint, i int) {
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	tool := tools[r.IntN(len(tools))]
	id := fmt.Sprintf("call_%04d", i)
	args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("internal/payments/file_%d.go", r.IntN(40)), "line": r.IntN(400)})
	call := &compact.ToolCall{ID: id, Name: tool, Arguments: args}
	say := text(r, 60+r.IntN(200))
	asst := compact.Message{ID: fmt.Sprintf("a%d", i), Role: compact.RoleAssistant,
		Parts: []compact.Part{{Type: compact.PartText, Text: say}, {Type: compact.PartToolCall, ToolCall: call}}}
	raw, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": asst.ID, "message": map[string]any{
		"role": "assistant", "content": []any{map[string]any{"type": "text", "text": say},
			map[string]any{"type": "tool_use", "id": id, "name": tool, "input": json.RawMessage(args)}}}})
	asst.Source = compact.Source{Format: "test", Records: []json.RawMessage{raw}, Fingerprint: asst.Fingerprint()}
	out := text(r, 200+r.IntN(1200))
	res := compact.Message{ID: fmt.Sprintf("t%d", i), Role: compact.RoleTool, ToolCallIDs: []string{id},
		Parts: []compact.Part{{Type: compact.PartToolResult, CallID: id, Text: out}}}
	c.Transcript.Messages = append(c.Transcript.Messages, asst, res)
	key := fmt.Sprintf("%s:%040x", tool, r.Uint64())
	c.Steps = append(c.Steps, checkpoint.Step{ID: fmt.Sprintf("step-%04d", i), Status: checkpoint.StepCompleted,
		Tool: tool, Args: args, Output: strings.SplitN(out, "\n", 2)[0], Duration: time.Duration(r.IntN(900)) * time.Millisecond})
	c.CurrentStep = c.Steps[len(c.Steps)-1].ID
	if c.ToolCache == nil {
		c.ToolCache = map[string]json.RawMessage{}
	}
	sum, _ := json.Marshal(map[string]any{"lines": strings.Count(out, "\n"), "bytes": len(out)})
	c.ToolCache[key] = sum
}
