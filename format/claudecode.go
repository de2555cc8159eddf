package format

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Claude Code keeps each session in ~/.claude/projects/<project>/<id>.jsonl:
// one JSON record per line. Conversation records ("user", "assistant")
// carry an Anthropic API message in "message"; the rest are metadata
// ("file-history-snapshot", "summary" title lines, "system" events such as
// "compact_boundary", "queue-operation", ...). Records link into a chain by
// uuid/parentUuid; Claude Code resumes by walking that chain back from the
// newest record, and a compact_boundary (parentUuid null) starts a new
// chain, so what it resumes with is everything after the last boundary.
//
// Reading follows the same rules, returning the live context:
//
//   - Records after the last compact_boundary are the conversation; records
//     before it are kept as compact.Record (Type "user"/"assistant" for the
//     compacted-away turns), so the file round-trips and nothing is lost.
//     A file with no boundary but an isCompactSummary record (exports that
//     leave out system records, such as the {"loglines": [...]} export)
//     starts its live context at the last such summary.
//   - One API message that Claude Code split over several "assistant"
//     records (one per content block, same message.id) is one Message whose
//     Source.Records holds every line, in order, the metadata records
//     written between them (progress, file-history-snapshot,
//     queue-operation, …) included, so that writing it back keeps the
//     lines where they were.
//   - A conversation record written a second time (same uuid) is read
//     once; the copy is kept as a Record of Type "duplicate", with a
//     warning.
//   - Tool results ride in "user" records as tool_result blocks: they become
//     tool-result parts (CallID = tool_use_id, IsError = is_error) of a user
//     message, as in the Anthropic API.
//   - User records written by the harness are Synthetic: isMeta records,
//     slash-command echoes (<command-name>, <local-command-stdout>, ...),
//     "Caveat: ..." notes, "[Request interrupted by user...]" and content
//     that is only <system-reminder> blocks.
//   - isCompactSummary records (and "summary" records that carry a message)
//     are Summary messages; compact_boundary records and summary title lines
//     are Marker records.
//   - Sidechain records (isSidechain: true, a sub-agent's own conversation
//     that older versions wrote into the main file) are not part of the main
//     context: they are kept as Records of Type "sidechain". A file whose
//     first conversation record is a sidechain is a sub-agent's own
//     transcript (subagents/agent-<id>.jsonl, every record a sidechain):
//     the records of that agentId are its conversation, read as such.
//   - Lines that are valid JSON but not a record (not an object, no type)
//     are kept as Records of Type "unknown", records of a type the reader
//     does not know as Records of that type, and user or assistant records
//     that carry no message content (no message object, no content) as
//     Records of Type "invalid", each with a WarnUnread warning. A message
//     whose content or a field has a type no message has (a number for
//     content, a string for a flag) is damage: an *Error naming the line
//     and the field, as is a line that is not valid JSON (a truncated last
//     line); ReadOptions.SkipBadLines skips such lines with a warning
//     instead.
//
//   - A session is a tree: rewinding the conversation (Esc-Esc, editing an
//     earlier prompt) starts a new branch from an earlier record, and
//     Claude Code resumes the branch that leads to its newest record,
//     walking parentUuid back from it. The reader follows it: a user
//     prompt whose parent is a record of the live branch with messages
//     after it starts a new branch, and those messages leave the live
//     context. They are kept as Records of Type "rewound" (written back
//     byte for byte, where they stood), with a WarnRewound warning saying
//     how many were left off. Progress records sit on the chain but are
//     passed through (a record whose parent is a progress record hangs off
//     that record's parent), attachment and system records stand where
//     their parent does, and the records of one API message (parallel tool
//     calls) and the tool results that answer them hang off one another
//     beside the chain, as Claude Code takes them back in: none of them
//     starts a branch. A parent that is not in the file (a slice of a
//     session, a damaged line) continues the chain (compact check reports
//     the gap). Files are append-only, so the newest record is the last.

func init() {
	register(Format{
		Name:        ClaudeCode,
		Description: `Claude Code session JSONL (~/.claude/projects/*/*.jsonl) and its {"loglines": [...]} export`,
		Sniff:       sniffClaudeCode,
		read:        readClaudeCode,
		Write:       writeClaudeCode,
	})
}

// ccHeader is the part of a Claude Code record the reader looks at.
type ccHeader struct {
	Type             string       `json:"type"`
	Subtype          string       `json:"subtype"`
	UUID             string       `json:"uuid"`
	ParentUUID       string       `json:"parentUuid"`
	IsSidechain      bool         `json:"isSidechain"`
	AgentID          string       `json:"agentId"`
	IsMeta           bool         `json:"isMeta"`
	IsCompactSummary bool         `json:"isCompactSummary"`
	Message          jsonscan.Raw `json:"message"`
}

type ccMessage struct {
	ID      string       `json:"id"`
	Role    string       `json:"role"`
	Content jsonscan.Raw `json:"content"`
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   jsonscan.Raw    `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *ccImageSource  `json:"source"`
}

type ccImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// Claude Code record types and the system subtype that marks a compaction.
const (
	ccUser            = "user"
	ccAssistant       = "assistant"
	ccSystem          = "system"
	ccSummary         = "summary"
	ccCompactBoundary = "compact_boundary"
	ccSidechain       = "sidechain" // Record.Type of sidechain records
	ccInvalid         = "invalid"   // Record.Type of message records that cannot be read as messages
	ccDuplicate       = "duplicate" // Record.Type of a conversation record written a second time
	ccUnknown         = "unknown"   // Record.Type of lines that are not records
	ccRewound         = "rewound"   // Record.Type of the records of a branch the conversation was rewound from
)

func sniffClaudeCode(head []byte) int {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return 0
	}
	if fields, _ := jsonscan.Members(t); len(fields) > 0 && fields[0].Key == "loglines" {
		for _, e := range headItems(jsonscan.ValueOf(t, fields, "loglines"), 3) {
			if ccRecordScore(e) > 0 {
				return 85
			}
		}
		return 0
	}
	best := 0
	for _, l := range headRecords(head, 8) {
		best = max(best, ccRecordScore(l))
	}
	return best
}

// ccRecordScore scores one record: conversation records with session
// fields are unmistakable; metadata records with their own signature fields
// nearly so.
func ccRecordScore(rec []byte) int {
	fields, ok := jsonscan.Members(rec)
	if !ok {
		return 0
	}
	has := func(k string) bool { return len(jsonscan.ValueOf(rec, fields, k)) > 0 }
	var typ string
	_ = json.Unmarshal(jsonscan.ValueOf(rec, fields, "type"), &typ)
	session := has("sessionId") || has("parentUuid") || has("uuid")
	switch typ {
	case ccUser, ccAssistant:
		msg := jsonscan.ValueOf(rec, fields, "message")
		if len(msg) == 0 || msg[0] != '{' || !jsonscan.HasKeys(msg, "role") {
			return 0
		}
		if session {
			return 90
		}
		return 60
	case ccSummary:
		if has("leafUuid") || (has("summary") && session) {
			return 90
		}
	case "file-history-snapshot":
		if has("snapshot") || has("messageId") {
			return 90
		}
	case ccSystem, "queue-operation", "progress", "attachment", "custom-title":
		if has("sessionId") {
			return 80
		}
	}
	return 0
}

func readClaudeCode(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	head, _ := br.Peek(min(br.Size(), 4096))
	if fields, _ := jsonscan.Members(bytes.TrimPrefix(head, utf8BOM)); len(fields) > 0 && fields[0].Key == "loglines" {
		return readClaudeCodeExport(br, rs)
	}
	c := newCCReader(rs)
	err := rs.lines(br, func(line []byte, n int) error {
		if err := c.add(rs.copyRecord(line), n); err != nil {
			return jsonError(name, ClaudeCode, n, err, "a Claude Code session record (one JSON object per line)")
		}
		return c.stream(false)
	})
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return compact.Transcript{}, err
		}
		return compact.Transcript{}, &Error{File: name, Format: ClaudeCode, Offset: -1, Msg: "reading input", Err: err}
	}
	t := c.transcript()
	if rs.spanErr != nil {
		return compact.Transcript{}, rs.spanErr
	}
	return t, nil
}

func readClaudeCodeExport(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	const expected = `a Claude Code export {"loglines": [records]}`
	doc, err := readWholeDoc(r, name, ClaudeCode, expected)
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.checkUTF8(doc, 0, 0); err != nil {
		return compact.Transcript{}, err
	}
	d, ok := splitList(doc, "loglines")
	if !ok {
		return compact.Transcript{}, &Error{File: name, Format: ClaudeCode, Offset: -1, Msg: "expected " + expected}
	}
	c := newCCReader(rs)
	for i, e := range d.elems {
		if err := c.add(e, 0); err != nil {
			return compact.Transcript{}, jsonError(name, ClaudeCode, 0, fmt.Errorf("loglines[%d]: %w", i, err), "a Claude Code record in loglines")
		}
	}
	t := c.transcript()
	t.Envelope = d.env
	return t, nil
}

// ccItem is a message or a record, in file order, before the live context
// is known.
type ccItem struct {
	msg   *compact.Message
	rec   compact.Record
	msgID string   // API message id of an assistant message, for merging
	types []string // record type of each of msg's source records
	pos   int      // line number (JSONL) or index (export) of the first record
	span  spanRef  // rec's span, for a record that may join a message
	n     int      // msg's ordinal among the live messages (1-based)
	off   bool     // msg lies on a branch the conversation was rewound from
}

type ccReader struct {
	rs          *readState
	items       []ccItem
	boundary    int // item index of the last compact_boundary, -1 when none
	lastSummary int // item index of the last isCompactSummary message
	uuids       map[string]bool
	sawBoundary bool
	// chain places each chain record (by uuid) in the live branch: the
	// number of live messages up to it and its line. live counts the live
	// messages read so far, base those before the last reset.
	chain      map[string]ccNode
	live, base int
	// subagent is set when the first conversation record is a sidechain:
	// the file is sub-agent agentID's own transcript.
	sawConversation, subagent bool
	agentID                   string
	// open is the item index of the assistant message whose next record
	// (same message.id) may still follow, -1 when none; pending holds the
	// metadata records read since, which join that message when it
	// continues (Claude Code writes progress and snapshot records between
	// the records of one streamed message).
	open    int
	pending []ccItem
}

func newCCReader(rs *readState) *ccReader {
	return &ccReader{rs: rs, boundary: -1, lastSummary: -1, open: -1, uuids: map[string]bool{}, chain: map[string]ccNode{}}
}

// ccNode is where a chain record stands: after the first n live messages,
// at the record of line line (its own, or, for a record that starts no
// message, its parent's).
type ccNode struct {
	n, line int
}

// ccChainTypes are the record types on Claude Code's parent chain besides
// user and assistant messages (progress records are passed through).
var ccChainTypes = map[string]bool{ccSystem: true, "attachment": true, "progress": true}

// place puts a chain record that starts no message where its parent
// stands (a progress record's children hang off its parent, as Claude Code
// reads them); a record whose parent is not in the file stands at the end.
func (c *ccReader) place(h *ccHeader, pos int) {
	if h.UUID == "" || h.IsSidechain {
		return
	}
	at := ccNode{n: c.live, line: pos}
	if p, ok := c.chain[h.ParentUUID]; ok && h.ParentUUID != "" {
		at = p
	}
	c.chain[h.UUID] = at
}

// rewind is called before a user prompt whose parent is parent: when the
// parent is a record of the live branch with live messages after it, the
// conversation was rewound to it, and those messages leave the live context.
func (c *ccReader) rewind(parent string, pos int) error {
	p, ok := c.chain[parent]
	if !ok || parent == "" || p.n >= c.live || p.n < c.base {
		return nil
	}
	left := 0
	for i := len(c.items) - 1; i >= 0; i-- {
		it := &c.items[i]
		if it.msg == nil || it.off {
			continue
		}
		if it.n <= p.n {
			break
		}
		it.off = true
		left++
	}
	if c.rs.streaming() {
		// Messages handed over already: the sink drops them.
		left = c.live - p.n
		c.rs.rewind(p.n - c.base)
	}
	c.live = p.n
	c.rs.warn(Warning{Line: pos, Offset: -1, Kind: WarnRewound, Record: ccRewound,
		Msg: fmt.Sprintf("the conversation was rewound to the record at line %d: %d message(s) after it are on a branch Claude Code no longer resumes; kept as %q records, not read", p.line, left, ccRewound)})
	return nil
}

// ccKnownTypes are the record types Claude Code writes besides user and
// assistant messages: metadata, kept as records and read as such. A type
// not listed is kept too, with a warning that it was not read.
var ccKnownTypes = map[string]bool{
	ccSystem: true, ccSummary: true, "file-history-snapshot": true, "file-history-delta": true,
	"progress": true, "queue-operation": true, "attachment": true, "custom-title": true,
	"last-prompt": true, "pr-link": true, "agent-name": true, "tag": true,
}

// add reads one record. It fails on bytes that are not JSON and on a
// conversation record whose fields have the wrong type (naming the
// field); everything else is kept, as a message or a record. pos is the
// line number (0 in an export).
func (c *ccReader) add(raw []byte, pos int) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		if !jsonscan.Valid(t) {
			var v any
			return json.Unmarshal(t, &v)
		}
		c.rs.unreadRecord(pos, ccUnknown, "not a JSON object")
		c.record(ccUnknown, raw, false)
		return nil
	}
	var h ccHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			return err
		}
		if h.Type == ccUser || h.Type == ccAssistant {
			return err // names the field
		}
		c.rs.unreadRecord(pos, cmp.Or(h.Type, ccInvalid), "field "+typ.Field+" has a "+typ.Value)
		c.record(ccInvalid, raw, false)
		return nil
	}
	conversation := h.Type == ccUser || h.Type == ccAssistant || (h.Type == ccSummary && h.Message.First() == '{')
	if conversation && !c.sawConversation {
		// A file that opens with a sub-agent's record is that sub-agent's
		// own transcript (subagents/agent-<id>.jsonl): its records are the
		// conversation.
		c.sawConversation = true
		c.subagent, c.agentID = h.IsSidechain, h.AgentID
	}
	if c.subagent && h.IsSidechain && h.AgentID == c.agentID {
		h.IsSidechain = false
	}
	switch {
	case conversation && h.UUID != "" && c.uuids[h.UUID] && !h.IsSidechain:
		c.rs.warn(Warning{Line: pos, Offset: -1, Kind: WarnDuplicate, Record: h.Type,
			Msg: fmt.Sprintf("record %s was written before; read once, the copy kept as a %q record", h.UUID, ccDuplicate)})
		c.record(ccDuplicate, raw, false)
	case h.IsSidechain:
		c.record(ccSidechain, raw, false)
	case conversation:
		read, err := c.message(&h, raw, pos)
		if err != nil {
			return err
		}
		if read && h.UUID != "" {
			c.uuids[h.UUID] = true
			c.chain[h.UUID] = ccNode{n: c.live, line: pos}
		}
	case h.Type == ccSystem:
		c.place(&h, pos)
		typ := h.Subtype
		if typ == "" {
			typ = ccSystem
		}
		c.close()
		if typ == ccCompactBoundary {
			c.boundary = len(c.items)
			if c.rs.streaming() {
				// Everything so far leaves the live context.
				if err := c.stream(true); err != nil {
					return err
				}
				c.rs.reset(nil)
			}
			c.sawBoundary = true
			c.base = c.live
		}
		c.record(typ, raw, typ == ccCompactBoundary)
	case h.Type == ccSummary:
		c.close()
		c.record(ccSummary, raw, true)
	case h.Type == "":
		c.rs.unreadRecord(pos, ccUnknown, "it has no type")
		c.record(ccUnknown, raw, false)
	default:
		if ccChainTypes[h.Type] {
			c.place(&h, pos)
		}
		if !ccKnownTypes[h.Type] {
			c.rs.unreadRecord(pos, h.Type, "a record type this reader does not know")
		}
		c.record(h.Type, raw, false)
	}
	return nil
}

// record keeps a non-message record: pending while an assistant message
// may continue, else in place.
func (c *ccReader) record(typ string, raw []byte, marker bool) {
	it := ccItem{rec: compact.Record{Type: typ, Raw: raw, Marker: marker}}
	if c.open >= 0 && !marker {
		it.span.span, it.span.ok = c.rs.spanOf(raw)
		c.pending = append(c.pending, it)
		return
	}
	c.items = append(c.items, it)
}

// close ends the open assistant message: the records held back take their
// places after it.
func (c *ccReader) close() {
	c.items = append(c.items, c.pending...)
	c.pending, c.open = c.pending[:0], -1
}

// message reads a conversation record. A record whose message or content
// has the wrong type is an error naming the field.
func (c *ccReader) message(h *ccHeader, raw []byte, pos int) (read bool, err error) {
	var msg ccMessage
	if h.Message.First() == '{' {
		if err := json.Unmarshal(h.Message, &msg); err != nil {
			return false, fmt.Errorf("field \"message\": %w", err)
		}
	}
	if msg.Content.IsNull() {
		// No message here (a message that is not an object, a content
		// missing): the record is read past, not taken for damage.
		c.rs.unreadRecord(pos, h.Type, "it carries no message content")
		c.record(ccInvalid, raw, false)
		return false, nil
	}
	parts, ok := ccParts(msg.Content)
	if !ok {
		return false, fmt.Errorf("field \"message.content\" is %s, expected a string or a list of content blocks", jsonscan.Describe(msg.Content))
	}
	role := compact.RoleUser
	if h.Type == ccAssistant || msg.Role == ccAssistant {
		role = compact.RoleAssistant
	}
	// Claude Code writes one record per content block of a streamed API
	// message; records sharing message.id are one message, whatever
	// metadata records sit between them.
	if role == compact.RoleAssistant && msg.ID != "" && c.open >= 0 {
		if last := &c.items[c.open]; last.msgID == msg.ID {
			for _, p := range c.pending {
				c.rs.addSource(&last.msg.Source, p.rec.Raw, p.span.span, p.span.ok)
				last.types = append(last.types, p.rec.Type)
			}
			c.pending = c.pending[:0]
			last.msg.Parts = append(last.msg.Parts, parts...)
			c.rs.keep(last.msg, raw)
			last.types = append(last.types, h.Type)
			return true, nil
		}
	}
	c.close()
	if role == compact.RoleUser && !h.IsCompactSummary && h.Type == ccUser &&
		!slices.ContainsFunc(parts, func(p compact.Part) bool { return p.Type == compact.PartToolResult }) {
		if err := c.rewind(h.ParentUUID, pos); err != nil {
			return false, err
		}
	}
	c.live++
	m := &compact.Message{ID: h.UUID, Role: role, Parts: parts}
	c.rs.keep(m, raw)
	if role == compact.RoleUser {
		m.Summary = h.IsCompactSummary || h.Type == ccSummary
		m.Synthetic = !m.Summary && (h.IsMeta || harnessOnly(parts))
		markHandoff(m)
		if m.Summary && h.IsCompactSummary {
			if c.rs.streaming() && !c.sawBoundary {
				// The live context starts at the last summary when no
				// boundary marks it.
				if err := c.stream(true); err != nil {
					return false, err
				}
				c.rs.reset(nil)
			}
			c.lastSummary = len(c.items)
			if !c.sawBoundary {
				c.base = c.live - 1
			}
		}
	}
	it := ccItem{msg: m, types: []string{h.Type}, pos: pos, n: c.live}
	if role == compact.RoleAssistant && msg.ID != "" {
		it.msgID = msg.ID
		c.open = len(c.items)
	}
	c.items = append(c.items, it)
	return true, nil
}

// stream hands the messages that are final to the sink (all of them with
// all, else those before the assistant message still open) and forgets
// the items before them. It does nothing when not streaming.
func (c *ccReader) stream(all bool) error {
	if !c.rs.streaming() {
		return nil
	}
	k := len(c.items)
	if c.open >= 0 && !all {
		k = c.open
	}
	for _, it := range c.items[:k] {
		if it.msg == nil || it.off {
			c.rs.records++
			continue
		}
		stampMessage(it.msg, ClaudeCode, "cc", it.pos)
		if err := c.rs.emit(*it.msg); err != nil {
			return err
		}
	}
	c.items = append(c.items[:0], c.items[k:]...)
	if c.open >= 0 {
		c.open -= k
		if all {
			c.open = -1
		}
	}
	return nil
}

// transcript assembles the live context: items after the reset point are
// messages; messages before it are demoted to records.
func (c *ccReader) transcript() compact.Transcript {
	c.close()
	if c.rs.streaming() {
		c.stream(true)
		return compact.Transcript{Format: string(ClaudeCode)}
	}
	reset := c.boundary
	if reset < 0 {
		reset = c.lastSummary
	}
	t := compact.Transcript{Format: string(ClaudeCode)}
	// Sized first: a slice grown by appends holds up to twice the messages
	// of a long session, and its abandoned copies beside it.
	n := 0
	for i, it := range c.items {
		if it.msg != nil && !it.off && i >= reset {
			n++
		}
	}
	if n > 0 {
		t.Messages = make([]compact.Message, 0, n)
	}
	for i, it := range c.items {
		switch {
		case it.msg == nil:
			it.rec.At = len(t.Messages)
			t.Records = append(t.Records, it.rec)
		case i < reset || it.off:
			for j, raw := range c.rs.sourceRecords(it.msg.Source) {
				typ := it.types[j]
				if it.off {
					typ = ccRewound
				}
				t.Records = append(t.Records, compact.Record{At: len(t.Messages), Type: typ, Raw: raw})
			}
		default:
			stampMessage(it.msg, ClaudeCode, "cc", it.pos)
			t.Messages = append(t.Messages, *it.msg)
		}
	}
	return t
}

// ccParts reads a message's content: a string, or a list of blocks. A
// string element of the list (not something Claude Code writes, but seen in
// the wild) is read as text. Unknown block types are left out of Parts
// (they stay in the source record).
//
// content was validated with the record it is a slice of, and the record's
// bytes are kept and never written again: strings and the list are read in
// place (jsonscan), without the second validation pass and the copy that
// json.Unmarshal would make.
func ccParts(content jsonscan.Raw) ([]compact.Part, bool) {
	switch content.First() {
	case '"':
		s, ok := jsonscan.UnquoteShared(content)
		if !ok {
			return nil, false
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, true
	case '[':
	default:
		return nil, false
	}
	spans, complete := jsonscan.Elements(content)
	if !complete {
		return nil, false
	}
	parts := make([]compact.Part, 0, len(spans))
	for _, sp := range spans {
		raw := jsonscan.Raw(content[sp.Start:sp.End:sp.End])
		if raw.First() == '"' {
			s, ok := jsonscan.UnquoteShared(raw)
			if !ok {
				return nil, false
			}
			parts = append(parts, compact.Part{Type: compact.PartText, Text: s})
			continue
		}
		if raw.First() != '{' {
			return nil, false
		}
		var b ccBlock
		if json.Unmarshal(raw, &b) != nil {
			return nil, false
		}
		parts = append(parts, ccBlockParts(&b)...)
	}
	return parts, true
}

func ccBlockParts(b *ccBlock) []compact.Part {
	switch b.Type {
	case "text":
		return []compact.Part{{Type: compact.PartText, Text: b.Text}}
	case "thinking":
		return []compact.Part{{Type: compact.PartThinking, Text: b.Thinking}}
	case "redacted_thinking":
		return []compact.Part{{Type: compact.PartThinking}}
	case "tool_use", "server_tool_use":
		args := b.Input
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: b.ID, Name: b.Name, Arguments: args}}}
	case "tool_result":
		text, images := ccResultContent(b.Content)
		parts := []compact.Part{{Type: compact.PartToolResult, Text: text, CallID: b.ToolUseID, IsError: b.IsError}}
		for _, img := range images {
			parts = append(parts, compact.Part{Type: compact.PartImage, Image: img, CallID: b.ToolUseID})
		}
		return parts
	case "image":
		if img := ccImage(b.Source); img != nil {
			return []compact.Part{{Type: compact.PartImage, Image: img}}
		}
	}
	return nil
}

// ccResultContent reads a tool_result's content: a string, or text and
// image blocks. Images come back as image parts tied to the call by CallID,
// so that writing re-attaches them to their result.
func ccResultContent(content jsonscan.Raw) (string, []*compact.Image) {
	switch content.First() {
	case '"':
		var s string
		_ = json.Unmarshal(content, &s)
		return s, nil
	case '[':
		var blocks []ccBlock
		if json.Unmarshal(content, &blocks) != nil {
			return string(content), nil
		}
		var texts []string
		var images []*compact.Image
		for i := range blocks {
			switch blocks[i].Type {
			case "text":
				texts = append(texts, blocks[i].Text)
			case "image":
				if img := ccImage(blocks[i].Source); img != nil {
					images = append(images, img)
				}
			}
		}
		return strings.Join(texts, "\n"), images
	case 0, 'n':
		return "", nil
	}
	return string(content), nil
}

func ccImage(s *ccImageSource) *compact.Image {
	switch {
	case s == nil:
		return nil
	case s.Type == "url" || s.URL != "":
		return &compact.Image{URL: s.URL, MediaType: s.MediaType}
	default:
		return &compact.Image{MediaType: s.MediaType, Data: s.Data}
	}
}
