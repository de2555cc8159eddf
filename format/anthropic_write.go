package format

import (
	"encoding/json"
	"io"

	"github.com/compactkit/compact"
)

// writeAnthropic writes t as an Anthropic Messages request: {"system",
// "messages", "tools"}, "system" and "tools" only when there are some; a
// transcript read from a request keeps its other fields (model, max_tokens,
// ...). One message per line.
//
// The system and developer messages of text at the start become "system";
// later ones, which Anthropic has no place for, become user messages. Tool-role
// messages become tool_result blocks, consecutive ones merged into one user
// message. A call and its result held in one message (Gemini CLI) are split
// into an assistant message and a user message. Calls without ids get
// generated ones (Anthropic requires them). Thinking is written only when
// it was read from Anthropic: the API accepts only thinking it signed.
// Names have no place in Anthropic messages and are not written.
func writeAnthropic(w io.Writer, t compact.Transcript) error {
	msgs, _ := fillCallIDs(t.Messages, false)
	e := anEncoder{t: &t}
	i := 0
	for i < len(msgs) && systemText(&msgs[i]) {
		i++
	}
	system := e.system(msgs[:i])
	for ; i < len(msgs); i++ {
		e.message(&msgs[i])
	}
	records := e.records()

	env := envelopeFields(t.Envelope)
	if Name(t.Format) != Anthropic {
		env = nil
	}
	if env == nil {
		env = []outField{{key: "system"}, {key: "messages"}, {key: "tools"}}
	}
	var fields []outField
	wroteSystem, wroteTools := false, false
	for _, f := range env {
		switch f.key {
		case "system":
			wroteSystem = true
			if system == nil {
				continue
			}
			f.value = system
		case "messages":
			if !wroteSystem && system != nil {
				fields = append(fields, outField{key: "system", value: system})
				wroteSystem = true
			}
			f = outField{key: "messages", list: records}
			if records == nil {
				f.list = []json.RawMessage{}
			}
		case "tools":
			wroteTools = true
			if len(t.Tools) == 0 {
				continue
			}
			f.value = anthropicToolsValue(f.value, t.Tools)
		}
		fields = append(fields, f)
	}
	if !wroteTools && len(t.Tools) > 0 {
		fields = append(fields, outField{key: "tools", value: anthropicToolsValue(nil, t.Tools)})
	}
	return writeObject(w, fields)
}

// systemText reports whether m can go into "system": a system or developer
// message of text only.
func systemText(m *compact.Message) bool {
	if m.Role != compact.RoleSystem && m.Role != compact.RoleDeveloper || len(m.ToolCallIDs) > 0 {
		return false
	}
	for _, p := range m.Parts {
		if p.Type != compact.PartText {
			return false
		}
	}
	return true
}

func anthropicToolsValue(old json.RawMessage, tools []compact.ToolDef) json.RawMessage {
	if old != nil {
		if prev, err := decodeAnthropicTools(old); err == nil && toolsEqual(prev, tools) {
			return old
		}
	}
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	out := make([]tool, len(tools))
	for i, d := range tools {
		schema := d.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out[i] = tool{d.Name, d.Description, schema}
	}
	return jsonOf(out)
}

// anOut is one Anthropic message being written.
type anOut struct {
	role   string
	blocks []json.RawMessage
	raw    json.RawMessage // a source record written as read
	// text is set when blocks is one freshly encoded text block, which is
	// written as a plain string.
	text *string
	// toolOnly marks a user message made of tool_result blocks answering
	// tool-role messages: the next tool-role message's results join it.
	toolOnly bool
}

type anEncoder struct {
	t    *compact.Transcript
	out  []anOut
	pool rawPool // the current message's source blocks, by the parts they hold
	// wrote counts the blocks and records written, to tell a message that
	// produced nothing.
	wrote int
}

func (e *anEncoder) records() []json.RawMessage {
	recs := make([]json.RawMessage, 0, len(e.out))
	for _, o := range e.out {
		if o.raw != nil {
			recs = append(recs, o.raw)
			continue
		}
		var content json.RawMessage
		switch {
		case len(o.blocks) == 1 && o.text != nil:
			content = jsonOf(*o.text)
		case len(o.blocks) == 0:
			content = json.RawMessage(`""`)
		default:
			content = jsonOf(o.blocks)
		}
		recs = append(recs, jsonOf(struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}{o.role, content}))
	}
	return recs
}

// system encodes the leading system messages as the "system" value: the
// source value while a single system message read from Anthropic is
// unchanged, else a string or text blocks. nil when there is none.
func (e *anEncoder) system(msgs []compact.Message) json.RawMessage {
	if len(msgs) == 0 {
		return nil
	}
	if m := &msgs[0]; len(msgs) == 1 && m.Unchanged() && fromAnthropicSystem(m) {
		return m.Source.Records[0]
	}
	var blocks []json.RawMessage
	var texts []string
	reused := false
	for i := range msgs {
		e.loadSource(&msgs[i])
		for _, p := range msgs[i].Parts {
			if p.Type != compact.PartText || p.Text == "" {
				continue
			}
			b, r := e.block([]compact.Part{p})
			reused = reused || r
			blocks = append(blocks, b)
			texts = append(texts, p.Text)
		}
	}
	switch {
	case len(blocks) == 0:
		return nil
	case len(blocks) == 1 && !reused:
		return jsonOf(texts[0])
	}
	return jsonOf(blocks)
}

// fromAnthropicSystem reports whether m was read from a request's top-level
// "system", so its record is that field's value rather than a message.
func fromAnthropicSystem(m *compact.Message) bool {
	return m.Source.Format == string(Anthropic) && m.ID == anthropicSystemID && len(m.Source.Records) == 1
}

// message encodes one message after the system prompt.
func (e *anEncoder) message(m *compact.Message) {
	if m.Unchanged() && m.Source.Format == string(Anthropic) && len(m.Source.Records) == 1 && !fromAnthropicSystem(m) {
		e.out = append(e.out, anOut{role: string(m.Role), raw: m.Source.Records[0]})
		return
	}
	e.loadSource(m)
	keep := keepThinking(e.t, m, Anthropic)
	before := e.wrote
	assistant := m.Role == compact.RoleAssistant
	// A result may join the previous user message of results only when it
	// answers a tool-role message or was split out of an assistant message.
	mergeable := assistant || m.Role == compact.RoleTool
	var turn, user []json.RawMessage // assistant blocks, user blocks being gathered
	onlyResults := true
	flushTurn := func() {
		e.add("assistant", turn)
		turn = nil
	}
	flushUser := func() {
		if onlyResults {
			e.results(user, mergeable)
		} else {
			e.add("user", user)
		}
		user, onlyResults = nil, true
	}
	for _, seg := range plan(m) {
		switch seg.kind {
		case segCalls:
			flushUser()
			for _, u := range seg.units {
				if b, ok := e.sideBlock(u, keep); ok {
					turn = append(turn, b)
				}
			}
		case segOwn:
			flushTurn()
			for _, u := range seg.units {
				if p := u.parts[0]; p.Type == compact.PartText || p.Type == compact.PartImage {
					b, _ := e.block(u.parts)
					user = append(user, b)
					onlyResults = false
				}
			}
		case segResult:
			var b json.RawMessage
			if seg.from != nil {
				raw, ok := e.pool.take(seg.from.parts)
				if ok && assistant && len(user) == 0 {
					turn = append(turn, raw) // a server tool's result stays inline
					continue
				}
				if b = raw; !ok {
					b = resultBlock(seg.id, seg.content, seg.isError)
				}
			} else {
				b = resultBlock(seg.id, seg.content, false)
			}
			flushTurn()
			user = append(user, b)
		}
	}
	flushTurn()
	flushUser()
	if e.wrote == before && !onlyThinking(m) {
		role := "user"
		if m.Role == compact.RoleAssistant {
			role = "assistant"
		}
		e.out = append(e.out, anOut{role: role})
	}
}

// sideBlock encodes a non-result unit of an assistant message; false for
// thinking that is not kept.
func (e *anEncoder) sideBlock(u unit, keep bool) (json.RawMessage, bool) {
	if p := u.parts[0]; p.Type == compact.PartThinking {
		if !keep {
			return nil, false
		}
		if raw, ok := e.pool.take(u.parts); ok {
			return raw, true
		}
		if p.Text == "" { // redacted thinking whose data is gone
			return nil, false
		}
	}
	b, _ := e.block(u.parts)
	return b, true
}

// add appends a message of role holding blocks; nothing when blocks is
// empty.
func (e *anEncoder) add(role string, blocks []json.RawMessage) {
	if len(blocks) == 0 {
		return
	}
	e.wrote += len(blocks)
	o := anOut{role: role, blocks: blocks}
	if len(blocks) == 1 {
		var b struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		// Only a block of exactly {"type","text"} may become a plain string.
		if json.Unmarshal(blocks[0], &b) == nil && b.Type == "text" && b.Text != nil &&
			string(blocks[0]) == string(textBlock(*b.Text)) {
			o.text = b.Text
		}
	}
	e.out = append(e.out, o)
}

// results appends tool_result blocks as a user message, joining the
// previous one when both answer tool-role messages.
func (e *anEncoder) results(blocks []json.RawMessage, mergeable bool) {
	if len(blocks) == 0 {
		return
	}
	e.wrote += len(blocks)
	if n := len(e.out); mergeable && n > 0 && e.out[n-1].toolOnly {
		e.out[n-1].blocks = append(e.out[n-1].blocks, blocks...)
		return
	}
	e.out = append(e.out, anOut{role: "user", blocks: blocks, toolOnly: mergeable})
}

// block encodes a unit as a content block, reusing the source block while
// its part is unchanged; reused says which.
func (e *anEncoder) block(parts []compact.Part) (raw json.RawMessage, reused bool) {
	if raw, ok := e.pool.take(parts); ok {
		return raw, true
	}
	p := parts[0]
	switch p.Type {
	case compact.PartToolResult:
		var content []compact.Part
		for _, q := range parts {
			switch {
			case q.Image != nil:
				content = append(content, compact.Part{Type: compact.PartImage, Image: q.Image})
			case q.Text != "":
				content = append(content, compact.Part{Type: compact.PartText, Text: q.Text})
			}
		}
		return resultBlock(p.CallID, content, p.IsError), false
	case compact.PartToolCall:
		tc := p.ToolCall
		if tc == nil {
			tc = &compact.ToolCall{}
		}
		return jsonOf(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{"tool_use", tc.ID, tc.Name, argsObject(tc.Arguments)}), false
	case compact.PartThinking:
		return jsonOf(struct {
			Type     string `json:"type"`
			Thinking string `json:"thinking"`
		}{"thinking", p.Text}), false
	case compact.PartImage:
		if p.Image != nil {
			return imageBlock(p.Image), false
		}
	}
	return textBlock(p.Text), false
}

func textBlock(s string) json.RawMessage {
	return jsonOf(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", s})
}

func imageBlock(img *compact.Image) json.RawMessage {
	type source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type,omitempty"`
		Data      string `json:"data,omitempty"`
		URL       string `json:"url,omitempty"`
	}
	src := source{Type: "url", URL: img.URL}
	switch {
	case img.Data != "":
		src = source{Type: "base64", MediaType: img.MediaType, Data: img.Data}
	default:
		if mt, data, ok := splitDataURL(img.URL); ok {
			src = source{Type: "base64", MediaType: mt, Data: data}
		}
	}
	return jsonOf(struct {
		Type   string `json:"type"`
		Source source `json:"source"`
	}{"image", src})
}

// resultBlock encodes a tool_result: content as a string when it is one
// text, as blocks when it holds images or several texts, absent when empty.
func resultBlock(id string, content []compact.Part, isError bool) json.RawMessage {
	type block struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
	b := block{Type: "tool_result", ToolUseID: id, IsError: isError}
	switch {
	case len(content) == 1 && content[0].Type == compact.PartText:
		b.Content = jsonOf(content[0].Text)
	case len(content) > 0:
		blocks := make([]json.RawMessage, len(content))
		for i, p := range content {
			if p.Type == compact.PartImage {
				blocks[i] = imageBlock(p.Image)
			} else {
				blocks[i] = textBlock(p.Text)
			}
		}
		b.Content = jsonOf(blocks)
	}
	return jsonOf(b)
}

// loadSource indexes the blocks of m's source record, when m was read from
// Anthropic, by the parts each decodes to.
func (e *anEncoder) loadSource(m *compact.Message) {
	e.pool = nil
	if m.Source.Format != string(Anthropic) || len(m.Source.Records) != 1 {
		return
	}
	raw := m.Source.Records[0]
	var content json.RawMessage = raw
	if !fromAnthropicSystem(m) {
		var o anMessage
		if json.Unmarshal(raw, &o) != nil {
			return
		}
		content = o.Content
	}
	var blocks []json.RawMessage
	if json.Unmarshal(content, &blocks) != nil {
		return
	}
	e.pool = rawPool{}
	for _, b := range blocks {
		if parts, err := anthropicBlockParts(b); err == nil {
			e.pool.add(parts, b)
		}
	}
}
