// Package compact is the vocabulary of the compact toolkit: transcripts,
// messages, tool calls, handoffs and compaction records.
//
// It has no dependencies beyond the standard library. Every other package
// (format, tokens, redact, fallback, compactor, checkpoint) speaks these
// types, so a transcript read from a Claude Code session can be counted,
// redacted, compacted and checkpointed without conversions in between.
package compact

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strings"
	"sync"
)

// Role is who speaks a message. The constants cover the roles every format
// maps onto; a format's own role that has no equivalent is kept as is.
type Role string

// Roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer" // OpenAI's successor of system for reasoning models
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool's answer, in formats that give it its own message
)

// PartType says what a content part holds.
type PartType string

// Part types, in the order a format may interleave them within a message.
const (
	PartText       PartType = "text"
	PartImage      PartType = "image"
	PartThinking   PartType = "thinking" // reasoning the model showed (or summarised)
	PartToolCall   PartType = "tool_call"
	PartToolResult PartType = "tool_result"
	// PartOpaque is content only its provider can read: a provider's own
	// compaction (an OpenAI Responses or Codex compaction item's
	// encrypted_content, an Anthropic compaction block). Text holds it as
	// the source has it. It is never shown to a model or a summarizer as
	// text, and counters estimate its tokens.
	PartOpaque PartType = "opaque"
)

// Part is one piece of a message's content. Which fields are set depends on
// Type: Text for text, thinking and tool results; Image for images; ToolCall
// for tool calls; CallID (and IsError) for tool results.
type Part struct {
	Type     PartType  `json:"type"`
	Text     string    `json:"text,omitempty"`
	Image    *Image    `json:"image,omitempty"`
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// CallID is the id of the tool call a tool-result part answers.
	CallID string `json:"call_id,omitempty"`
	// IsError marks a tool result the tool reported as failed.
	IsError bool `json:"is_error,omitempty"`

	// Failed and Harness are tags a reader derives from its agent's
	// conventions (package format), so that no layer above has to know
	// them. They are not content: Fingerprint leaves them out and writers
	// do not emit them.
	//
	// Failed marks a tool result that failed by the agent's conventions:
	// IsError, a non-zero exit code in the output's envelope, an error
	// observation. It is set on tool-result parts, and on the text parts
	// of a message that answers by ToolCallIDs or of a harness message
	// that reports a command's result.
	Failed bool `json:"failed,omitempty"`
	// Harness marks a text part that the agent's harness injected
	// (reminders, caveats, command wrappers, environment context) rather
	// than the person or the model wrote.
	Harness bool `json:"harness,omitempty"`
}

// ToolKind says what a tool call does, whichever agent made it. Readers set
// it from their agent's table in package format; the layers above read it
// instead of guessing from tool names.
type ToolKind string

// Tool kinds. The zero value means the call was not tagged (built in code);
// ToolOther means the reader tagged it and it is none of the others, or a
// tool its tables do not know.
const (
	ToolShell  ToolKind = "shell"  // runs a command
	ToolRead   ToolKind = "read"   // reads a file
	ToolWrite  ToolKind = "write"  // creates, edits or deletes a file
	ToolSearch ToolKind = "search" // searches file contents or names
	ToolList   ToolKind = "list"   // lists a directory
	ToolWeb    ToolKind = "web"    // fetches a page or searches the web
	ToolPlan   ToolKind = "plan"   // updates a plan or a todo list
	ToolAgent  ToolKind = "agent"  // hands a subtask to another agent
	ToolOther  ToolKind = "other"  // a known tool of none of the kinds above
)

// Image references an image in a message: by URL, or inline as base64 data.
type Image struct {
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"` // base64, when the source carried the bytes inline
}

// ToolCall is one call an assistant message makes.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the call's input as JSON. Formats that carry arguments as a
	// JSON-encoded string (OpenAI) are decoded into it; a string that is not
	// valid JSON is kept as a JSON string value.
	Arguments json.RawMessage `json:"arguments,omitempty"`

	// Kind and Target are tags the reader derives from its agent's
	// conventions (see Part.Failed): what the call does and what it works
	// on (a path, a command, a URL or a query). Fingerprint leaves them out.
	Kind   ToolKind `json:"kind,omitempty"`
	Target string   `json:"target,omitempty"`
}

// Message is one turn of a transcript.
//
// Source keeps the records the message was read from, so a writer can emit an
// unchanged message byte for byte (see Message.Unchanged).
type Message struct {
	// ID is stable across reads of the same file: the source's own id where it
	// has one (a uuid, an API message id), otherwise derived from the content
	// and position by the reader.
	ID    string `json:"id"`
	Role  Role   `json:"role"`
	Name  string `json:"name,omitempty"`
	Parts []Part `json:"parts,omitempty"`
	// ToolCallIDs lists the calls a tool-role message answers: OpenAI's
	// tool_call_id (one), SWE-agent's tool_call_ids (a list). Formats that put
	// results inside content parts (Anthropic, Gemini) use Part.CallID instead.
	ToolCallIDs []string `json:"tool_call_ids,omitempty"`
	// Synthetic marks a message that rides in the user role but was written by
	// the agent's harness, not the person: injected reminders, environment
	// context, command caveats. It is never taken for a user's ask.
	Synthetic bool `json:"synthetic,omitempty"`
	// Summary marks a message that summarises earlier turns: a compact handoff
	// or an agent's own compaction summary (Claude Code isCompactSummary,
	// Codex compacted).
	Summary bool   `json:"summary,omitempty"`
	Source  Source `json:"source,omitzero"`
}

// Source is where a message came from.
type Source struct {
	Format string `json:"format,omitempty"`
	// Records holds the source records exactly as read: one for most formats,
	// several where one message was split over records (Claude Code writes one
	// line per content block of an API message).
	Records []json.RawMessage `json:"records,omitempty"`
	// Fingerprint is the message's Fingerprint when it was read. A writer may
	// emit Records verbatim only while the two still agree.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Spans stand in for Records when the reader was asked to note where
	// the records lie in a file instead of holding their bytes (a long
	// transcript is then not held twice: decoded and as bytes); the
	// records are read back, checked against Span.Sum, before writing
	// (format.LoadSources). A message holds Records or Spans, not both.
	// Spans point into one file, so they are not serialised.
	Spans []Span `json:"-"`
}

// Span is where one source record lies in the file it was read from: Len
// bytes at byte Offset, whose CRC-32C (Castagnoli) is Sum, so that a file
// changed since it was read is caught instead of written from.
type Span struct {
	Offset int64
	Len    int
	Sum    uint32
}

// Text returns the message's text parts joined by newlines: what a person
// would read as the message. Thinking, tool calls and results are left out.
func (m Message) Text() string {
	return m.joinParts(PartText)
}

// ResultText returns the text of the message's tool-result parts, or of its
// text parts when it is a tool-role message that answers by ToolCallIDs.
func (m Message) ResultText() string {
	if s := m.joinParts(PartToolResult); s != "" {
		return s
	}
	if len(m.ToolCallIDs) > 0 {
		return m.Text()
	}
	return ""
}

func (m Message) joinParts(t PartType) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type != t || p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// ToolCalls returns the calls the message makes, in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.Type == PartToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// ResultIDs returns the ids of the calls the message answers: its
// ToolCallIDs and the CallID of each tool-result part, in order, without
// repeats.
func (m Message) ResultIDs() []string {
	var ids []string
	seen := func(id string) bool {
		for _, x := range ids {
			if x == id {
				return true
			}
		}
		return false
	}
	for _, id := range m.ToolCallIDs {
		if !seen(id) {
			ids = append(ids, id)
		}
	}
	for _, p := range m.Parts {
		if p.Type == PartToolResult && !seen(p.CallID) {
			ids = append(ids, p.CallID)
		}
	}
	return ids
}

// IsToolResult reports whether the message carries tool results rather than
// something a person or the model said.
func (m Message) IsToolResult() bool {
	if m.Role == RoleTool || len(m.ToolCallIDs) > 0 {
		return true
	}
	for _, p := range m.Parts {
		if p.Type == PartToolResult {
			return true
		}
	}
	return false
}

// IsUserAsk reports whether the message is something the person asked: a
// user-role message with text that is neither a tool result, nor injected by
// the harness, nor a summary.
func (m Message) IsUserAsk() bool {
	return m.Role == RoleUser && !m.Synthetic && !m.Summary && !m.IsToolResult() &&
		strings.TrimSpace(m.Text()) != ""
}

// IsSummary reports whether the message summarises earlier turns: marked
// Summary by its reader, or a user message whose text is a compact handoff
// (a format with no place for the mark may lose it).
func (m Message) IsSummary() bool {
	if m.Summary {
		return true
	}
	if m.Role != RoleUser {
		return false
	}
	for _, p := range m.Parts {
		if p.Type == PartText {
			return IsHandoffText(p.Text)
		}
	}
	return false
}

// Fingerprint returns a hash of the message's content: role, name, parts,
// answered call ids and flags, but not its ID or Source. Two messages with the
// same fingerprint say the same thing.
func (m Message) Fingerprint() string {
	ch := getContentHasher()
	defer contentHashers.Put(ch)
	m.writeContent(ch)
	var sum [sha256.Size]byte
	return hex.EncodeToString(ch.h.Sum(sum[:0])[:16])
}

// Unchanged reports whether the message still holds what it was read with,
// so its Source.Records may be written back verbatim.
func (m Message) Unchanged() bool {
	return len(m.Source.Records) > 0 && m.Source.Fingerprint != "" &&
		m.Source.Fingerprint == m.Fingerprint()
}

// contentHasher is a hash and the scratch buffer strings go through on
// their way into it: converting each to []byte would copy every message's
// whole content once more per hash. Hashers are pooled: fingerprinting
// every message of a long transcript would otherwise allocate a buffer per
// message.
type contentHasher struct {
	h   hash.Hash
	buf [4096]byte
}

var contentHashers = sync.Pool{New: func() any { return &contentHasher{h: sha256.New()} }}

// getContentHasher returns a reset hasher from the pool.
func getContentHasher() *contentHasher {
	ch := contentHashers.Get().(*contentHasher)
	ch.h.Reset()
	return ch
}

// writeContent feeds the content fields to ch with length prefixes, so
// that no two different messages produce the same byte stream.
func (m Message) writeContent(ch *contentHasher) {
	h, buf := ch.h, ch.buf[:]
	str := func(s string) {
		binary.LittleEndian.PutUint64(buf[:8], uint64(len(s)))
		h.Write(buf[:8])
		for len(s) > 0 {
			n := copy(buf, s)
			h.Write(buf[:n])
			s = s[n:]
		}
	}
	flag := func(b bool) {
		if b {
			str("1")
		} else {
			str("0")
		}
	}
	str(string(m.Role))
	str(m.Name)
	flag(m.Synthetic)
	flag(m.Summary)
	str(strings.Join(m.ToolCallIDs, "\x00"))
	for _, p := range m.Parts {
		str(string(p.Type))
		str(p.Text)
		str(p.CallID)
		flag(p.IsError)
		if p.Image != nil {
			str(p.Image.URL)
			str(p.Image.MediaType)
			str(p.Image.Data)
		}
		if p.ToolCall != nil {
			str(p.ToolCall.ID)
			str(p.ToolCall.Name)
			str(string(p.ToolCall.Arguments))
		}
	}
}

// UserMessage returns a user message holding text: an ask, as an agent
// loop appends it.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{{Type: PartText, Text: text}}}
}

// AssistantMessage returns an assistant message holding text (none when
// empty) followed by the tool calls it makes, in order.
func AssistantMessage(text string, calls ...ToolCall) Message {
	m := Message{Role: RoleAssistant}
	if text != "" {
		m.Parts = append(m.Parts, Part{Type: PartText, Text: text})
	}
	for i := range calls {
		c := calls[i]
		m.Parts = append(m.Parts, Part{Type: PartToolCall, ToolCall: &c})
	}
	return m
}

// ToolResultMessage returns the tool message answering the call callID
// with output, in the shape every writer maps onto its format.
func ToolResultMessage(callID, output string) Message {
	return Message{Role: RoleTool, ToolCallIDs: []string{callID}, Parts: []Part{{Type: PartText, Text: output}}}
}

// ToolErrorMessage is ToolResultMessage for a call that failed: its output
// is marked IsError (and Failed).
func ToolErrorMessage(callID, output string) Message {
	m := ToolResultMessage(callID, output)
	m.Parts[0].IsError, m.Parts[0].Failed = true, true
	return m
}
