package compact

import (
	"encoding/hex"
	"encoding/json"
	"slices"
)

// Transcript is an agent's conversation: its messages in order, plus what the
// source file held besides messages, so it can be written back in its format.
type Transcript struct {
	// Format names the format the transcript was read from ("" when built in
	// code). Writers use it to decide which source records they may reuse.
	Format   string    `json:"format,omitempty"`
	Messages []Message `json:"messages"`
	// Tools are the tool definitions offered to the model, where the source
	// has them. They count towards the prompt.
	Tools []ToolDef `json:"tools,omitempty"`
	// Records are the source's records that are not messages (session
	// metadata, snapshots, progress events, compaction markers), kept in place
	// rather than dropped.
	Records []Record `json:"records,omitempty"`
	// Envelope is the source document around the messages, for formats that
	// wrap the conversation in an object (SWE-agent .traj, Gemini CLI
	// sessions): everything but the message list, as read.
	Envelope json.RawMessage `json:"envelope,omitempty"`
}

// ToolDef is a tool the model may call.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema
}

// Record is a non-message record of the source, kept where it stood.
type Record struct {
	// At is the index of the message the record preceded in the source;
	// len(Messages) when it came after the last one.
	At int `json:"at"`
	// Type is the record's kind in its format (e.g. "file-history-snapshot",
	// "session_meta", "compact_boundary").
	Type string          `json:"type"`
	Raw  json.RawMessage `json:"raw"`
	// Marker is set on records that mark a compaction done by the agent
	// itself (Claude Code compact_boundary and summary lines, Codex
	// compacted).
	Marker bool `json:"marker,omitempty"`
	// State is set by the reader on records that describe the state the
	// session continues from rather than one message (Codex session_meta
	// and turn_context): a compaction that drops the messages around one
	// keeps the last record of its Type.
	State bool `json:"state,omitempty"`
}

// Hash returns a sha256 of the transcript's messages (their content, in
// order), in hex. It identifies a transcript's conversation regardless of the
// format it is stored in.
func (t *Transcript) Hash() string {
	ch := getContentHasher()
	defer contentHashers.Put(ch)
	for i := range t.Messages {
		t.Messages[i].writeContent(ch)
	}
	return hex.EncodeToString(ch.h.Sum(nil))
}

// Clone returns a copy of t whose message slice, parts and tool calls can be
// changed without touching t. Raw source bytes are shared: they are never
// modified in place.
func (t *Transcript) Clone() Transcript {
	c := *t
	c.Messages = make([]Message, len(t.Messages))
	for i, m := range t.Messages {
		c.Messages[i] = m.Clone()
	}
	c.Tools = append([]ToolDef(nil), t.Tools...)
	c.Records = append([]Record(nil), t.Records...)
	return c
}

// Clone returns a copy of m whose parts and tool calls can be changed
// without touching m.
func (m Message) Clone() Message {
	m.Parts = append([]Part(nil), m.Parts...)
	for i, p := range m.Parts {
		if p.ToolCall != nil {
			tc := *p.ToolCall
			m.Parts[i].ToolCall = &tc
		}
		if p.Image != nil {
			img := *p.Image
			m.Parts[i].Image = &img
		}
	}
	m.ToolCallIDs = append([]string(nil), m.ToolCallIDs...)
	m.Source.Records = append([]json.RawMessage(nil), m.Source.Records...)
	m.Source.Spans = append([]Span(nil), m.Source.Spans...)
	return m
}

// ToolGroup is an assistant turn that makes tool calls, with the messages
// that answer them. A group is the unit a compaction must keep or drop whole.
type ToolGroup struct {
	// Call is the index of the message making the calls.
	Call  int        `json:"call"`
	Calls []ToolCall `json:"calls"`
	// Results are the indices of the messages holding the answers, ascending.
	// A format that stores a call and its result in one message (Gemini CLI)
	// lists Call itself.
	Results []int `json:"results"`
	// Missing lists the ids of calls nothing answers.
	Missing []string `json:"missing,omitempty"`
}

// End returns the index of the group's last message.
func (g ToolGroup) End() int {
	end := g.Call
	if n := len(g.Results); n > 0 && g.Results[n-1] > end {
		end = g.Results[n-1]
	}
	return end
}

// OrphanKind says which half of a tool pair is missing.
type OrphanKind string

// Kinds of orphan.
const (
	OrphanResult OrphanKind = "result_without_call"
	OrphanCall   OrphanKind = "call_without_result"
)

// Orphan is a tool result with no call before it, or a call with no result.
type Orphan struct {
	Kind   OrphanKind `json:"kind"`
	Index  int        `json:"index"` // the message holding the orphan
	CallID string     `json:"call_id"`
}

// ToolGroups returns each assistant turn that makes calls, grouped with the
// results that answer it, in transcript order. Results are matched by call
// id, the first unanswered call with that id before the result winning.
// Calls without an id (legacy OpenAI function_call) are answered by the next
// id-less result after them.
func (t *Transcript) ToolGroups() []ToolGroup {
	groups, _ := t.pairs()
	return groups
}

// Orphans returns the tool results that answer no earlier call and the calls
// that no result answers, in transcript order.
func (t *Transcript) Orphans() []Orphan {
	_, orphans := t.ToolPairs()
	return orphans
}

// ToolPairs returns ToolGroups and Orphans at once, pairing the transcript
// once instead of twice.
func (t *Transcript) ToolPairs() ([]ToolGroup, []Orphan) {
	groups, orphans := t.pairs()
	for _, g := range groups {
		for _, id := range g.Missing {
			orphans = append(orphans, Orphan{Kind: OrphanCall, Index: g.Call, CallID: id})
		}
	}
	sortOrphans(orphans)
	return groups, orphans
}

// pairs matches results to calls in one pass. Results answering nothing are
// returned as orphans; unanswered calls are left in each group's Missing.
func (t *Transcript) pairs() ([]ToolGroup, []Orphan) {
	var groups []ToolGroup
	var orphans []Orphan
	// Calls waiting for their result, one FIFO per id: waiting holds the
	// calls in the order made (group, call, next waiting call with the
	// same id), open the first and last of each id's queue. answered is
	// flat, one flag per call, at base[g] for group g.
	type waitingCall struct{ g, c, next int }
	var waiting []waitingCall
	open := map[string][2]int{} // id -> first and last index into waiting, plus one
	var answered []bool
	var base []int
	for i := range t.Messages {
		m := &t.Messages[i]
		if calls := m.ToolCalls(); len(calls) > 0 {
			g := len(groups)
			groups = append(groups, ToolGroup{Call: i, Calls: calls})
			base = append(base, len(answered))
			answered = append(answered, make([]bool, len(calls))...)
			for c, call := range calls {
				waiting = append(waiting, waitingCall{g: g, c: c})
				w := len(waiting)
				if q, ok := open[call.ID]; ok {
					waiting[q[1]-1].next = w
					open[call.ID] = [2]int{q[0], w}
				} else {
					open[call.ID] = [2]int{w, w}
				}
			}
		}
		for _, id := range m.ResultIDs() {
			q, ok := open[id]
			if !ok {
				orphans = append(orphans, Orphan{Kind: OrphanResult, Index: i, CallID: id})
				continue
			}
			g := waiting[q[0]-1].g
			if next := waiting[q[0]-1].next; next == 0 {
				delete(open, id)
			} else {
				open[id] = [2]int{next, q[1]}
			}
			for c, call := range groups[g].Calls {
				if call.ID == id && !answered[base[g]+c] {
					answered[base[g]+c] = true
					break
				}
			}
			if r := groups[g].Results; len(r) == 0 || r[len(r)-1] != i {
				groups[g].Results = append(groups[g].Results, i)
			}
		}
	}
	for g := range groups {
		for c, call := range groups[g].Calls {
			if !answered[base[g]+c] {
				groups[g].Missing = append(groups[g].Missing, call.ID)
			}
		}
	}
	return groups, orphans
}

func sortOrphans(o []Orphan) {
	slices.SortStableFunc(o, func(a, b Orphan) int { return a.Index - b.Index })
}
