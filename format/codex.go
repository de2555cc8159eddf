package format

import (
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

// Codex CLI writes each session to ~/.codex/sessions/YYYY/MM/DD/
// rollout-<time>-<id>.jsonl: one RolloutLine per line,
// {"timestamp", "type", "payload"}, where type is session_meta,
// turn_context, response_item (a Responses API item: message, reasoning,
// function_call, function_call_output, custom_tool_call, local_shell_call,
// web_search_call, ...), event_msg (what the UI showed) or compacted.
//
// Reading returns the live context, the history Codex rebuilds when it
// resumes (codex-rs core: reconstruct_history_from_rollout, compact.rs):
//
//   - response_item lines are the conversation. Consecutive assistant-side
//     items (reasoning, assistant message, function_call, custom_tool_call,
//     local_shell_call) with nothing between them are one assistant message
//     holding all their lines, so parallel calls form one tool group.
//     function_call_output and custom_tool_call_output are tool messages
//     (ToolCallIDs = [call_id]).
//   - A compacted line with replacement_history resets the history to that
//     list: everything before it becomes compact.Record, and the list's
//     items become the messages (their Source.Records are the items
//     themselves, not lines), followed by the items after the line.
//   - A compacted line without replacement_history (Codex's local
//     compaction) keeps the user's messages and the developer/system
//     instructions before it, turns the rest into records, and adds its
//     message as a Summary user message, as build_compacted_history does.
//     (Codex also trims those user messages to 20k tokens; they are kept
//     whole here.)
//   - event_msg lines (user_message, agent_message, agent_reasoning,
//     token_count, ...) duplicate or annotate response items: they are kept
//     as records and never counted. So are session_meta, turn_context,
//     web_search_call and ghost_snapshot items.
//   - User messages the harness injects are Synthetic: <environment_context>,
//     <user_instructions>, "# AGENTS.md instructions", and the IDE's
//     "# Context from my IDE setup:" block when it carries no
//     "## My request for Codex:" (when it does, it is the person's ask and
//     is kept verbatim).
//   - A user message that starts with Codex's summary prefix, or is a
//     compact handoff, or is a compacted line's message, is a Summary.

func init() {
	register(Format{
		Name:        Codex,
		Description: "Codex CLI rollout JSONL (~/.codex/sessions/**/rollout-*.jsonl)",
		Sniff:       sniffCodex,
		read:        readCodex,
		Write:       writeCodex,
	})
}

// codexSummaryPrefix opens the summary message Codex's local compaction
// puts in the history (codex-rs core/templates/compact/summary_prefix.md).
const codexSummaryPrefix = "Another language model started to solve this problem and produced a summary of its thinking process."

// codexNoSummary stands for an empty summary (build_compacted_history).
const codexNoSummary = "(no summary available)"

// Rollout line types.
const (
	cxSessionMeta  = "session_meta"
	cxTurnContext  = "turn_context"
	cxResponseItem = "response_item"
	cxEventMsg     = "event_msg"
	cxCompacted    = "compacted"
	// cxContextCompacted is the Record.Type of the event that marks a
	// compaction Codex did itself.
	cxContextCompacted = "event_msg:context_compacted"
)

// codexLine is a rollout line, decoded in one pass: the payload fields of
// response items and compacted lines sit in one struct (the other payloads
// are recorded, not read), and the large string fields decode without a
// second validation (jsonText).
type codexLine struct {
	Timestamp string     `json:"timestamp"`
	Type      string     `json:"type"`
	Payload   *codexItem `json:"payload"`
}

type codexItem struct {
	Type      string       `json:"type"`
	ID        string       `json:"id"`
	Role      string       `json:"role"`
	Content   jsonscan.Raw `json:"content"`
	Summary   jsonscan.Raw `json:"summary"`
	Name      string       `json:"name"`
	Arguments jsonText     `json:"arguments"`
	Input     jsonText     `json:"input"`
	CallID    string       `json:"call_id"`
	Output    jsonText     `json:"output"`
	Action    jsonscan.Raw `json:"action"`
	Status    string       `json:"status"`
	// compaction items
	EncryptedContent jsonText `json:"encrypted_content"`
	// event_msg exec_command_end, patch_apply_end
	ExitCode *int  `json:"exit_code"`
	Success  *bool `json:"success"`
	// event_msg thread_rolled_back
	NumTurns *int `json:"num_turns"`
	// compacted
	Message            jsonText       `json:"message"`
	ReplacementHistory []jsonscan.Raw `json:"replacement_history"`
}

type codexContentItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
	Refusal  string `json:"refusal"`
}

func sniffCodex(head []byte) int {
	best := 0
	for _, l := range headRecords(head, 4) {
		fields, ok := jsonscan.Members(l)
		if !ok || len(jsonscan.ValueOf(l, fields, "payload")) == 0 {
			continue
		}
		var typ string
		_ = json.Unmarshal(jsonscan.ValueOf(l, fields, "type"), &typ)
		switch typ {
		case cxSessionMeta:
			best = max(best, 95)
		case cxResponseItem, cxTurnContext, cxEventMsg, cxCompacted:
			best = max(best, 90)
		}
	}
	return best
}

func readCodex(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	c := cxReader{rs: rs}
	err := rs.lines(r, func(line []byte, n int) error {
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if err := c.add(rs.copyRecord(line), n); err != nil {
			return jsonError(name, Codex, n, err, `a Codex rollout line {"timestamp", "type", "payload"}`)
		}
		return c.stream(false)
	})
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return compact.Transcript{}, err
		}
		return compact.Transcript{}, &Error{File: name, Format: Codex, Offset: -1, Msg: "reading input", Err: err}
	}
	if rs.spanErr != nil {
		return compact.Transcript{}, rs.spanErr
	}
	return c.transcript(), nil
}

// cxMeta is what the reader keeps about a message beside it.
type cxMeta struct {
	types []string // record type of each source record
	inner bool     // read from a replacement_history (its records are items, not lines)
	pos   int
	pfx   string
}

// cxRef is one entry in file order: a message or a record, by index.
type cxRef struct {
	msg bool
	i   int
}

// cxReader builds the transcript's slices as it goes (they are the
// result: no copy at the end), keeping the file order of messages and
// records only to rebuild them when a compacted line resets the history.
type cxReader struct {
	msgs  []compact.Message
	meta  []cxMeta
	recs  []compact.Record
	order []cxRef
	open  bool // the last entry is an assistant message adjacent items may join
	// pending holds the event lines read while an assistant message is
	// open: they join it when its model turn goes on (Codex writes
	// agent_reasoning and token_count events between the items of one
	// turn), and take their places as records otherwise.
	pending   []compact.Record
	spans     []spanRef // pending's spans, where records are kept as spans
	rs        *readState
	summaries map[string]bool // messages of compacted lines
	failed    map[string]bool // call ids whose end event reports a failure
	line      codexLine       // decoding target, reused line after line
	// held describes, when streaming, each message the sink holds, so that
	// a rollback can say how many stay.
	held []cxHeld
}

// cxHeld is what a rollback needs to know of a message handed over.
type cxHeld struct {
	role          compact.Role
	summary, turn bool
}

// cxTurn reports whether m starts a user turn, as Codex counts them for a
// rollback: a person's message (not the harness's context, not a summary).
func cxTurn(m *compact.Message) bool {
	return m.Role == compact.RoleUser && !m.Synthetic && !m.Summary
}

// cxRolledBack is the event Codex writes when the user backtracks: the
// last num_turns user turns leave the history it resumes with.
const cxRolledBack = "thread_rolled_back"

// cxRewound is the Record.Type of the lines of rolled-back messages.
const cxRewound = "rewound"

// rollback drops the last n user turns from the history, as Codex's
// drop_last_n_user_turns does: everything from the n-th last user turn
// on (from the first when there are fewer), nothing when there is none.
// The messages' lines stay as records of Type "rewound".
func (c *cxReader) rollback(n, line int) {
	if n <= 0 {
		return
	}
	c.flush()
	c.open = false
	var turns []int
	if c.rs.streaming() {
		c.stream(true)
		for i, h := range c.held {
			if h.turn {
				turns = append(turns, i)
			}
		}
	} else {
		for i := range c.msgs {
			if cxTurn(&c.msgs[i]) {
				turns = append(turns, i)
			}
		}
	}
	if len(turns) == 0 {
		return
	}
	cut := turns[max(0, len(turns)-n)]
	if c.rs.streaming() {
		c.warnRollback(n, len(c.held)-cut, line)
		c.held = c.held[:cut]
		c.rs.rewind(cut)
		return
	}
	c.warnRollback(n, len(c.msgs)-cut, line)
	msgs, meta, recs, order := c.msgs, c.meta, c.recs, c.order
	c.msgs, c.meta, c.recs, c.order = nil, nil, nil, nil
	for _, ref := range order {
		switch {
		case !ref.msg:
			r := recs[ref.i]
			c.add1(r)
		case ref.i < cut:
			c.message(msgs[ref.i], meta[ref.i], false)
		case meta[ref.i].inner:
			// Inside a compacted record, which is kept whole.
		default:
			for _, raw := range c.rs.sourceRecords(msgs[ref.i].Source) {
				c.add1(compact.Record{Type: cxRewound, Raw: raw})
			}
		}
	}
	c.open = false
}

func (c *cxReader) warnRollback(n, left, line int) {
	c.rs.warn(Warning{Line: line, Offset: -1, Kind: WarnRewound, Record: cxRewound,
		Msg: fmt.Sprintf("%s takes back the last %d user turn(s): %d message(s), as Codex resumes without them; kept as %q records, not read", cxRolledBack, n, left, cxRewound)})
}

func (c *cxReader) add(raw []byte, n int) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		if !jsonscan.Valid(t) {
			var v any
			return json.Unmarshal(t, &v)
		}
		c.record("unknown", raw, false)
		return nil
	}
	c.line = codexLine{}
	l := &c.line
	if err := json.Unmarshal(raw, l); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			return err
		}
		// Payloads other than items and compactions are only recorded, so a
		// field of an unexpected type there does not matter; in those two
		// it is damage, named by the error.
		if l.Type == cxResponseItem || l.Type == cxCompacted {
			return err
		}
	}
	payloadType := "unknown"
	if l.Payload != nil {
		payloadType = cmp.Or(l.Payload.Type, payloadType)
	}
	var other []string
	if l.Type == cxResponseItem && payloadType == "message" && l.Payload.Content == nil {
		other = unknownContent(jsonscan.Lookup(raw, "payload"), "content")
	}
	switch {
	case other != nil:
		// Read empty, its text would be lost without a word.
		c.rs.unreadRecord(n, cxResponseItem+":message", noContentWhy(other, "content"))
		c.record(cxResponseItem+":message", raw, false)
	case l.Type == cxResponseItem:
		if l.Payload == nil || !c.item(l.Payload, raw, n, "cx", false) {
			if !codexMetaItems[payloadType] {
				c.rs.unreadRecord(n, cxResponseItem+":"+payloadType, "an item this reader does not know")
			}
			c.record(cxResponseItem+":"+payloadType, raw, false)
		}
	case l.Type == cxCompacted && l.Payload != nil:
		c.compacted(l.Payload, raw, n)
	case l.Type == cxCompacted:
		c.rs.unreadRecord(n, cxCompacted, "it has no payload")
		c.record("invalid", raw, false)
	case l.Type == cxEventMsg:
		c.event(l.Payload)
		if payloadType == cxRolledBack && l.Payload.NumTurns != nil {
			c.rollback(*l.Payload.NumTurns, n)
		}
		// context_compacted marks a compaction Codex did itself.
		c.record(cxEventMsg+":"+payloadType, raw, cxEventMsg+":"+payloadType == cxContextCompacted)
	case l.Type == "":
		c.rs.unreadRecord(n, "unknown", "it has no type")
		c.record("unknown", raw, false)
	default:
		if l.Type != cxSessionMeta && l.Type != cxTurnContext {
			c.rs.unreadRecord(n, l.Type, "a line type this reader does not know")
		}
		c.record(l.Type, raw, false)
	}
	return nil
}

// codexMetaItems are response items that are not messages and are read as
// such: kept as records, never sent to the model as messages.
var codexMetaItems = map[string]bool{"ghost_snapshot": true}

func (c *cxReader) record(typ string, raw []byte, marker bool) {
	rec := compact.Record{Type: typ, Raw: raw, Marker: marker, State: typ == cxSessionMeta || typ == cxTurnContext}
	if c.open && strings.HasPrefix(typ, cxEventMsg+":") && !marker {
		c.pending = append(c.pending, rec)
		sp, ok := c.rs.spanOf(raw)
		c.spans = append(c.spans, spanRef{sp, ok})
		return
	}
	c.flush()
	c.open = false
	c.add1(rec)
}

// add1 appends one record in file order.
func (c *cxReader) add1(rec compact.Record) {
	if c.rs.streaming() {
		c.rs.records++ // records are not streamed
		return
	}
	rec.At = len(c.msgs)
	c.order = append(c.order, cxRef{i: len(c.recs)})
	c.recs = append(c.recs, rec)
}

// flush puts the held event lines in place as records.
func (c *cxReader) flush() {
	for _, r := range c.pending {
		c.add1(r)
	}
	c.pending, c.spans = c.pending[:0], c.spans[:0]
}

func (c *cxReader) message(m compact.Message, meta cxMeta, open bool) {
	c.flush()
	c.order = append(c.order, cxRef{msg: true, i: len(c.msgs)})
	c.msgs = append(c.msgs, m)
	c.meta = append(c.meta, meta)
	c.open = open
}

// compacted applies a compacted line (see the package comment above).
func (c *cxReader) compacted(ci *codexItem, raw []byte, n int) {
	c.flush()
	if c.summaries == nil {
		c.summaries = map[string]bool{}
	}
	message := ci.Message.text()
	if ci.ReplacementHistory == nil {
		// What build_compacted_history puts in the history.
		message = cmp.Or(message, codexNoSummary)
	}
	if message != "" {
		c.summaries[message] = true
	}
	if ci.ReplacementHistory != nil {
		history := ci.ReplacementHistory
		c.demote(func(*compact.Message) bool { return false })
		c.record(cxCompacted, raw, true)
		pfx := fmt.Sprintf("cx%dr", n)
		for k, raw := range history {
			var it codexItem
			if raw.First() != '{' || json.Unmarshal(raw, &it) != nil {
				c.open = false // not an item we know: it stays inside the compacted record
				continue
			}
			c.item(&it, raw, k, pfx, true)
		}
		c.open = false
		return
	}
	c.demote(func(m *compact.Message) bool {
		switch m.Role {
		case compact.RoleUser:
			return !m.Summary
		case compact.RoleSystem, compact.RoleDeveloper:
			return true
		}
		return false
	})
	m := compact.Message{Role: compact.RoleUser, Summary: true,
		Parts: []compact.Part{{Type: compact.PartText, Text: message}},
	}
	c.rs.keep(&m, raw)
	c.message(m, cxMeta{types: []string{cxCompacted}, pos: n, pfx: "cx"}, false)
}

// demote turns the messages so far that keep does not keep into records.
// Messages read from a replacement_history vanish instead: their items
// already live inside the compacted record.
func (c *cxReader) demote(keep func(*compact.Message) bool) {
	c.flush()
	c.open = false
	if c.rs.streaming() {
		// The messages so far go to the sink; the reset says which stay.
		c.stream(true)
		keepHeld := func(role compact.Role, summary bool) bool {
			return keep(&compact.Message{Role: role, Summary: summary})
		}
		c.rs.reset(keepHeld)
		c.held = slices.DeleteFunc(c.held, func(h cxHeld) bool { return !keepHeld(h.role, h.summary) })
		return
	}
	msgs, meta, recs, order := c.msgs, c.meta, c.recs, c.order
	c.msgs, c.meta, c.recs, c.order = nil, nil, nil, nil
	for _, ref := range order {
		if !ref.msg {
			r := recs[ref.i]
			c.record(r.Type, r.Raw, r.Marker)
			continue
		}
		m, md := msgs[ref.i], meta[ref.i]
		switch {
		case keep(&m):
			c.message(m, md, false)
		case md.inner:
		default:
			for j, raw := range c.rs.sourceRecords(m.Source) {
				c.record(md.types[j], raw, md.types[j] == cxCompacted || md.types[j] == cxContextCompacted)
			}
		}
	}
	c.open = false
}

// item reads one response item; false when it is not a message item (the
// caller keeps it as a record). src is what Source.Records keeps: the line,
// or the item itself inside a replacement_history.
func (c *cxReader) item(it *codexItem, src []byte, pos int, pfx string, inner bool) bool {
	typ := cxResponseItem + ":" + it.Type
	if inner {
		typ = it.Type
	}
	parts, role, ok := codexParts(it)
	for k := range parts {
		// A web search without an id (older rollouts) gets one from its
		// place, so each pairs with its own outcome.
		if tc := parts[k].ToolCall; tc != nil && tc.ID == "" && it.Type == "web_search_call" {
			tc.ID = fmt.Sprintf("%s%d-web_search", pfx, pos)
			parts[k+1].CallID = tc.ID
		}
	}
	if !ok {
		if inner {
			// Not a message (e.g. a ghost snapshot): it stays inside the
			// compacted record, which is kept whole.
			c.open = false
			return true
		}
		return false
	}
	if role == compact.RoleAssistant && c.open && c.meta[len(c.meta)-1].inner == inner {
		last, md := &c.msgs[len(c.msgs)-1], &c.meta[len(c.meta)-1]
		for k, p := range c.pending {
			c.rs.addSource(&last.Source, p.Raw, c.spans[k].span, c.spans[k].ok)
			md.types = append(md.types, p.Type)
		}
		c.pending, c.spans = c.pending[:0], c.spans[:0]
		last.Parts = append(last.Parts, parts...)
		c.rs.keep(last, src)
		md.types = append(md.types, typ)
		return true
	}
	m := compact.Message{ID: it.ID, Role: role, Parts: parts}
	c.rs.keep(&m, src)
	switch role {
	case compact.RoleTool:
		m.ToolCallIDs = []string{it.CallID}
	case compact.RoleUser:
		text := m.Text()
		m.Summary = strings.HasPrefix(text, codexSummaryPrefix) || c.summaries[text] ||
			len(parts) == 1 && parts[0].Type == compact.PartOpaque
		m.Synthetic = !m.Summary && harnessText(text)
		markHandoff(&m)
	}
	c.message(m, cxMeta{types: []string{typ}, inner: inner, pos: pos, pfx: pfx}, role == compact.RoleAssistant)
	return true
}

// codexParts reads a message item; ok is false for items that are not part
// of the conversation the model sees as messages.
func codexParts(it *codexItem) ([]compact.Part, compact.Role, bool) {
	switch it.Type {
	case "message":
		role := compact.Role(it.Role)
		if it.Role == "" {
			role = compact.RoleAssistant
		}
		return codexContent(it.Content), role, true
	case "reasoning":
		var parts []compact.Part
		for _, s := range codexTexts(it.Summary) {
			parts = append(parts, compact.Part{Type: compact.PartThinking, Text: s})
		}
		for _, s := range codexTexts(it.Content) {
			parts = append(parts, compact.Part{Type: compact.PartThinking, Text: s})
		}
		if len(parts) == 0 {
			parts = []compact.Part{{Type: compact.PartThinking}} // encrypted only
		}
		return parts, compact.RoleAssistant, true
	case "function_call":
		args := json.RawMessage("{}")
		if it.Arguments.isString {
			args = argsFromString(it.Arguments.s)
		} else if !it.Arguments.raw.IsNull() {
			args = json.RawMessage(it.Arguments.raw)
		}
		return codexCall(it.CallID, it.Name, args), compact.RoleAssistant, true
	case "custom_tool_call":
		return codexCall(it.CallID, it.Name, jsonOf(it.Input.text())), compact.RoleAssistant, true
	case "local_shell_call":
		id := it.CallID
		if id == "" {
			id = it.ID
		}
		args := json.RawMessage(it.Action)
		if it.Action.IsNull() {
			args = json.RawMessage("{}")
		}
		return codexCall(id, "local_shell", args), compact.RoleAssistant, true
	case "web_search_call":
		// A search the model ran on the server: the call and its outcome
		// (status) are one item, so one message holds both, as Gemini
		// CLI's calls do.
		id := cmp.Or(it.ID, it.CallID)
		args := json.RawMessage(it.Action)
		if it.Action.IsNull() {
			args = json.RawMessage("{}")
		}
		parts := codexCall(id, "web_search", args)
		parts = append(parts, compact.Part{Type: compact.PartToolResult, CallID: id, Text: it.Status})
		return parts, compact.RoleAssistant, true
	case "compaction", "compaction_summary":
		// The provider's own compaction: opaque, kept as it is.
		return []compact.Part{{Type: compact.PartOpaque, Text: it.EncryptedContent.text()}}, compact.RoleUser, true
	case "function_call_output", "custom_tool_call_output":
		if it.Output.isString {
			return []compact.Part{{Type: compact.PartText, Text: it.Output.s}}, compact.RoleTool, true
		}
		return codexOutput(it.Output.raw), compact.RoleTool, true
	}
	return nil, "", false
}

func codexCall(id, name string, args json.RawMessage) []compact.Part {
	return []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: args}}}
}

// codexContent reads a message's content items (or a plain string).
func codexContent(content jsonscan.Raw) []compact.Part {
	switch content.First() {
	case '"':
		var s string
		_ = json.Unmarshal(content, &s)
		return []compact.Part{{Type: compact.PartText, Text: s}}
	case '[':
	default:
		return nil
	}
	var items []codexContentItem
	if json.Unmarshal(content, &items) != nil {
		return nil
	}
	parts := make([]compact.Part, 0, len(items))
	for _, ci := range items {
		switch ci.Type {
		case "input_text", "output_text", "text":
			parts = append(parts, compact.Part{Type: compact.PartText, Text: ci.Text})
		case "refusal":
			parts = append(parts, compact.Part{Type: compact.PartText, Text: ci.Refusal})
		case "input_image":
			parts = append(parts, compact.Part{Type: compact.PartImage, Image: imageFromURL(ci.ImageURL)})
		}
	}
	return parts
}

// codexTexts returns the texts of a list of {"type", "text"} items.
func codexTexts(list jsonscan.Raw) []string {
	if list.First() != '[' {
		return nil
	}
	var items []codexContentItem
	if json.Unmarshal(list, &items) != nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.Text)
	}
	return out
}

// codexOutput reads a tool's output: a string (the usual case), a list of
// content items, or an object with "content".
func codexOutput(out jsonscan.Raw) []compact.Part {
	switch out.First() {
	case '"':
		var s string
		_ = json.Unmarshal(out, &s)
		return []compact.Part{{Type: compact.PartText, Text: s}}
	case '[':
		return codexContent(out)
	case '{':
		if c := jsonscan.Lookup(out, "content"); c != nil {
			return codexOutput(c)
		}
		return []compact.Part{{Type: compact.PartText, Text: string(out)}}
	}
	return []compact.Part{{Type: compact.PartText}}
}

// event notes what an event line says of a call: exec_command_end's exit
// code, patch_apply_end's success.
func (c *cxReader) event(p *codexItem) {
	if p == nil || p.CallID == "" {
		return
	}
	if p.Type == "exec_command_end" && p.ExitCode != nil && *p.ExitCode != 0 ||
		p.Type == "patch_apply_end" && p.Success != nil && !*p.Success {
		if c.failed == nil {
			c.failed = map[string]bool{}
		}
		c.failed[p.CallID] = true
	}
}

// stream hands the messages that are final to the sink (all of them with
// all, else all but an assistant message still open) and forgets them. It
// does nothing when not streaming.
func (c *cxReader) stream(all bool) error {
	if !c.rs.streaming() {
		return nil
	}
	k := len(c.msgs)
	if c.open && !all && k > 0 {
		k--
	}
	for i := 0; i < k; i++ {
		m := &c.msgs[i]
		c.markFailed(m)
		stampMessage(m, Codex, c.meta[i].pfx, c.meta[i].pos)
		if err := c.rs.emit(*m); err != nil {
			return err
		}
		c.held = append(c.held, cxHeld{m.Role, m.Summary, cxTurn(m)})
	}
	c.msgs = append(c.msgs[:0], c.msgs[k:]...)
	c.meta = append(c.meta[:0], c.meta[k:]...)
	c.order = c.order[:0]
	for i := range c.msgs {
		c.order = append(c.order, cxRef{msg: true, i: i})
	}
	return nil
}

// markFailed marks a tool message whose call an end event reported failed.
func (c *cxReader) markFailed(m *compact.Message) {
	if len(m.ToolCallIDs) > 0 && c.failed[m.ToolCallIDs[0]] {
		for k := range m.Parts {
			m.Parts[k].Failed = true
		}
	}
}

func (c *cxReader) transcript() compact.Transcript {
	c.flush()
	if c.rs.streaming() {
		c.stream(true)
		return compact.Transcript{Format: string(Codex)}
	}
	for i := range c.msgs {
		m := &c.msgs[i]
		c.markFailed(m)
		stampMessage(m, Codex, c.meta[i].pfx, c.meta[i].pos)
	}
	return compact.Transcript{Format: string(Codex), Messages: c.msgs, Records: c.recs}
}

// spanRef is a record's span, when it has one (ok).
type spanRef struct {
	span compact.Span
	ok   bool
}
