package compact_test

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func text(role compact.Role, s string) compact.Message {
	return compact.Message{Role: role, Parts: []compact.Part{{Type: compact.PartText, Text: s}}}
}

func calls(ids ...string) compact.Message {
	m := compact.Message{Role: compact.RoleAssistant}
	for _, id := range ids {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}})
	}
	return m
}

func result(id string) compact.Message {
	return compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id},
		Parts: []compact.Part{{Type: compact.PartText, Text: "ok " + id}}}
}

func blockResults(ids ...string) compact.Message {
	m := compact.Message{Role: compact.RoleUser}
	for _, id := range ids {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: id, Text: "done"})
	}
	return m
}

func TestToolGroups(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []compact.Message
		groups  []compact.ToolGroup
		orphans []compact.Orphan
	}{
		{
			name:   "parallel calls answered by separate tool messages",
			msgs:   []compact.Message{text("user", "go"), calls("a", "b"), result("b"), result("a"), text("assistant", "done")},
			groups: []compact.ToolGroup{{Call: 1, Results: []int{2, 3}}},
		},
		{
			name:   "anthropic style: results as blocks of one user message",
			msgs:   []compact.Message{calls("a", "b"), blockResults("a", "b")},
			groups: []compact.ToolGroup{{Call: 0, Results: []int{1}}},
		},
		{
			name: "call and result in one message (gemini)",
			msgs: []compact.Message{func() compact.Message {
				m := calls("g1")
				m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolResult, CallID: "g1", Text: "x"})
				return m
			}()},
			groups: []compact.ToolGroup{{Call: 0, Results: []int{0}}},
		},
		{
			name:    "result before its call and a call never answered",
			msgs:    []compact.Message{result("x"), calls("x"), calls("y")},
			groups:  []compact.ToolGroup{{Call: 1, Missing: []string{"x"}}, {Call: 2, Missing: []string{"y"}}},
			orphans: []compact.Orphan{{Kind: compact.OrphanResult, Index: 0, CallID: "x"}, {Kind: compact.OrphanCall, Index: 1, CallID: "x"}, {Kind: compact.OrphanCall, Index: 2, CallID: "y"}},
		},
		{
			name:   "id-less legacy function calls match positionally",
			msgs:   []compact.Message{calls(""), result(""), calls(""), result("")},
			groups: []compact.ToolGroup{{Call: 0, Results: []int{1}}, {Call: 2, Results: []int{3}}},
		},
		{
			name:   "a reused id answers the oldest open call",
			msgs:   []compact.Message{calls("r"), result("r"), calls("r"), result("r")},
			groups: []compact.ToolGroup{{Call: 0, Results: []int{1}}, {Call: 2, Results: []int{3}}},
		},
		{
			name:    "a list of ids answers several calls",
			msgs:    []compact.Message{calls("p", "q"), {Role: compact.RoleTool, ToolCallIDs: []string{"p", "q"}}},
			groups:  []compact.ToolGroup{{Call: 0, Results: []int{1}}},
			orphans: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := compact.Transcript{Messages: tt.msgs}
			got := tr.ToolGroups()
			require.Len(t, got, len(tt.groups))
			for i, g := range got {
				assert.Equal(t, tt.groups[i].Call, g.Call)
				assert.Equal(t, tt.groups[i].Results, g.Results)
				assert.Equal(t, tt.groups[i].Missing, g.Missing)
			}
			assert.Equal(t, tt.orphans, tr.Orphans())
		})
	}
}

func TestToolGroupEnd(t *testing.T) {
	tr := compact.Transcript{Messages: []compact.Message{calls("a", "b"), text("user", "note"), result("a"), result("b")}}
	g := tr.ToolGroups()
	require.Len(t, g, 1)
	assert.Equal(t, 3, g[0].End())
}

func TestFingerprintAndUnchanged(t *testing.T) {
	m := text("user", "hello")
	m.Source = compact.Source{Format: "openai", Records: []json.RawMessage{json.RawMessage(`{"role":"user","content":"hello"}`)}, Fingerprint: m.Fingerprint()}
	assert.True(t, m.Unchanged())

	c := m.Clone()
	c.Parts[0].Text = "hello!"
	assert.False(t, c.Unchanged(), "edited copy must not reuse source bytes")
	assert.True(t, m.Unchanged(), "clone must not share parts")

	other := text("user", "hel")
	other.Name = "lo"
	assert.NotEqual(t, text("user", "hello").Fingerprint(), other.Fingerprint(), "length prefixes keep fields apart")
	m.ID = "different"
	assert.True(t, m.Unchanged(), "the ID is not content")
}

func TestIsUserAsk(t *testing.T) {
	assert.True(t, func() bool { m := text("user", "fix the bug"); return m.IsUserAsk() }())
	synthetic := text("user", "<system-reminder>x</system-reminder>")
	synthetic.Synthetic = true
	assert.False(t, synthetic.IsUserAsk())
	res := blockResults("a")
	assert.False(t, res.IsUserAsk())
	h := compact.Handoff{TaskSnapshot: "x"}.Message()
	assert.False(t, h.IsUserAsk())
	empty := text("user", "  ")
	assert.False(t, empty.IsUserAsk())
}

func TestTranscriptHashIgnoresFormat(t *testing.T) {
	a := compact.Transcript{Format: "openai", Messages: []compact.Message{text("user", "x")}}
	b := compact.Transcript{Format: "anthropic", Messages: []compact.Message{text("user", "x")}}
	assert.Equal(t, a.Hash(), b.Hash())
	b.Messages = append(b.Messages, text("assistant", "y"))
	assert.NotEqual(t, a.Hash(), b.Hash())
}
