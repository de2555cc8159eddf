package format

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/compactkit/compact"
)

// writeOpenAIChat writes t as Chat Completions messages: a plain JSON array
// of messages, or, when t has tool definitions or was read from a request
// object, {"messages": [...], "tools": [...]} (a read request keeps its
// other fields: model, temperature, ...). One message per line.
func writeOpenAIChat(w io.Writer, t compact.Transcript) error {
	records := openAIRecords(&t, OpenAIChat)
	env := envelopeFields(t.Envelope)
	if Name(t.Format) != OpenAIChat {
		env = nil
	}
	if env == nil && len(t.Tools) == 0 {
		return writeArray(w, records)
	}
	if env == nil {
		env = []outField{{key: "messages"}, {key: "tools"}}
	}
	var fields []outField
	wroteTools := false
	for _, f := range env {
		switch f.key {
		case "messages":
			f = outField{key: "messages", list: records}
			if records == nil {
				f.list = []json.RawMessage{}
			}
		case "tools", "functions":
			if wroteTools {
				continue
			}
			wroteTools = true
			if len(t.Tools) == 0 {
				continue
			}
			f.value = openAIToolsValue(f, t.Tools)
		}
		fields = append(fields, f)
	}
	if !wroteTools && len(t.Tools) > 0 {
		fields = append(fields, outField{key: "tools", value: openAIToolsValue(outField{key: "tools"}, t.Tools)})
	}
	return writeObject(w, fields)
}

// writeOpenAIChatJSONL writes t's messages one per line. JSON lines have no
// place for tool definitions; they are not written.
func writeOpenAIChatJSONL(w io.Writer, t compact.Transcript) error {
	var b bytes.Buffer
	for _, r := range openAIRecords(&t, OpenAIChatJSONL) {
		b.Reset()
		if bytes.IndexByte(r, '\n') >= 0 { // a pretty-printed record from a JSON array
			if err := json.Compact(&b, r); err == nil {
				r = b.Bytes()
			}
		}
		if _, err := w.Write(r); err != nil {
			return err
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	return nil
}

// openAIToolsValue encodes tools for the field f of a read request, reusing
// its value while the definitions are unchanged.
func openAIToolsValue(f outField, tools []compact.ToolDef) json.RawMessage {
	if f.value != nil {
		if old, err := decodeOpenAITools(f.value); err == nil && toolsEqual(old, tools) {
			return f.value
		}
	}
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	if f.key == "functions" {
		out := make([]function, len(tools))
		for i, d := range tools {
			out[i] = function{d.Name, d.Description, d.Parameters}
		}
		return jsonOf(out)
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	out := make([]tool, len(tools))
	for i, d := range tools {
		out[i] = tool{"function", function{d.Name, d.Description, d.Parameters}}
	}
	return jsonOf(out)
}

func toolsEqual(a, b []compact.ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description ||
			!bytes.Equal(compactJSON(a[i].Parameters), compactJSON(b[i].Parameters)) {
			return false
		}
	}
	return true
}

// oaOut is a Chat Completions message as written.
type oaOut struct {
	Role             string            `json:"role"`
	Name             string            `json:"name,omitempty"`
	Content          json.RawMessage   `json:"content"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	ToolCalls        []json.RawMessage `json:"tool_calls,omitempty"`
	FunctionCall     *oaOutFunction    `json:"function_call,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
}

type oaOutFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaOutCall struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function oaOutFunction `json:"function"`
}

// openAIRecords encodes every message of t as Chat Completions message
// records, in order. A message read from OpenAI Chat and unchanged is its
// source record; others are encoded, split where OpenAI needs several
// messages for what another format says in one (each tool result is its own
// "tool" message, right after the assistant message making the call).
func openAIRecords(t *compact.Transcript, to Name) []json.RawMessage {
	msgs, names := fillCallIDs(t.Messages, true)
	e := oaEncoder{t: t, to: to}
	for i := range msgs {
		m := &msgs[i]
		if m.Unchanged() && sameFamily(m.Source.Format, to) && len(m.Source.Records) == 1 {
			e.out = append(e.out, m.Source.Records[0])
			continue
		}
		e.message(m, names[i])
	}
	return e.out
}

type oaEncoder struct {
	t   *compact.Transcript
	to  Name
	out []json.RawMessage
	// pool and calls hold the current message's source parts and calls,
	// when it was read from OpenAI Chat, to reuse the unchanged ones.
	pool  rawPool
	calls map[string][]json.RawMessage
}

// message encodes one message; legacyName names the function an id-less
// result answers.
func (e *oaEncoder) message(m *compact.Message, legacyName string) {
	e.loadSource(m)
	keep := keepThinking(e.t, m, e.to)
	role := outRole(m.Role)
	name := m.Name
	if role == "user" && m.Role != compact.RoleUser && m.Role != compact.RoleTool && name == "" {
		name = string(m.Role) // an agent's own role: say whose it was
	}
	before := len(e.out)
	for _, seg := range plan(m) {
		switch seg.kind {
		case segOwn:
			e.chunk(role, name, seg.units, keep)
		case segCalls:
			if role == "assistant" {
				e.chunk(role, name, seg.units, keep)
			} else {
				e.chunk("assistant", "", seg.units, keep)
			}
		case segResult:
			rname := legacyName
			if seg.from == nil { // the message itself is the answer: keep its name
				rname = firstNonEmpty(name, legacyName)
			}
			e.result(seg.id, e.content(partUnits(seg.content), false), rname)
		}
	}
	if len(e.out) == before && !onlyThinking(m) {
		e.out = append(e.out, jsonOf(oaOut{Role: role, Name: name, Content: json.RawMessage(`""`)}))
	}
}

// partUnits makes one unit of each part.
func partUnits(parts []compact.Part) []unit {
	out := make([]unit, len(parts))
	for i := range parts {
		out[i] = unit{parts: parts[i : i+1]}
	}
	return out
}

// onlyThinking reports whether m holds nothing but thinking: such a message
// has nothing to say in a format that does not keep thinking.
func onlyThinking(m *compact.Message) bool {
	if len(m.Parts) == 0 || len(m.ToolCallIDs) > 0 {
		return false
	}
	for _, p := range m.Parts {
		if p.Type != compact.PartThinking {
			return false
		}
	}
	return true
}

// outRole maps a role onto the roles Chat Completions accepts. Roles of
// agent formats with no equivalent (mini-swe-agent's "exit") become user
// messages named after the role.
func outRole(r compact.Role) string {
	switch r {
	case compact.RoleSystem, compact.RoleDeveloper, compact.RoleUser, compact.RoleAssistant:
		return string(r)
	case compact.RoleTool:
		return "user" // a tool message without ids: nothing to answer
	}
	return "user"
}

// chunk emits one message of role holding us (text, images, thinking and
// calls); nothing when us has nothing OpenAI can hold.
func (e *oaEncoder) chunk(role, name string, us []unit, keepThinking bool) {
	var o oaOut
	o.Role, o.Name = role, name
	var content []unit
	for _, u := range us {
		p := u.parts[0]
		switch p.Type {
		case compact.PartThinking:
			if keepThinking && p.Text != "" {
				if o.ReasoningContent != "" {
					o.ReasoningContent += "\n"
				}
				o.ReasoningContent += p.Text
			}
		case compact.PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			if p.ToolCall.ID == "" {
				o.FunctionCall = &oaOutFunction{Name: p.ToolCall.Name, Arguments: argsToString(p.ToolCall.Arguments)}
				continue
			}
			o.ToolCalls = append(o.ToolCalls, e.call(p.ToolCall))
		case compact.PartText, compact.PartImage:
			content = append(content, u)
		}
	}
	if len(content) == 0 && o.ReasoningContent == "" && len(o.ToolCalls) == 0 && o.FunctionCall == nil {
		return
	}
	calls := len(o.ToolCalls) > 0 || o.FunctionCall != nil
	o.Content = e.content(content, calls)
	e.out = append(e.out, jsonOf(o))
}

// result emits the tool message answering call id ("function" message for
// an id-less legacy call).
func (e *oaEncoder) result(id string, content json.RawMessage, name string) {
	if id == "" {
		e.out = append(e.out, jsonOf(oaOut{Role: "function", Name: name, Content: content}))
		return
	}
	e.out = append(e.out, jsonOf(oaOut{Role: "tool", Name: name, Content: content, ToolCallID: id}))
}

// content encodes text and image units: a string for a single text, an
// array of parts otherwise, null when empty and the message makes calls.
func (e *oaEncoder) content(us []unit, nullable bool) json.RawMessage {
	if len(us) == 0 {
		if nullable {
			return json.RawMessage("null")
		}
		return json.RawMessage(`""`)
	}
	if len(us) == 1 && us[0].parts[0].Type == compact.PartText {
		if raw, ok := e.pool.take(us[0].parts); ok && !isTextPart(raw) {
			return json.RawMessage("[" + string(raw) + "]") // a placeholder for audio or a file
		}
		return jsonOf(us[0].parts[0].Text)
	}
	parts := make([]json.RawMessage, 0, len(us))
	for _, u := range us {
		if raw, ok := e.pool.take(u.parts); ok {
			parts = append(parts, raw)
			continue
		}
		p := u.parts[0]
		if p.Type == compact.PartImage && p.Image != nil {
			parts = append(parts, jsonOf(struct {
				Type     string `json:"type"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}{Type: "image_url", ImageURL: struct {
				URL string `json:"url"`
			}{imageAsURL(p.Image)}}))
			continue
		}
		parts = append(parts, jsonOf(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", p.Text}))
	}
	return jsonOf(parts)
}

func isTextPart(raw json.RawMessage) bool {
	var p struct {
		Type string `json:"type"`
	}
	json.Unmarshal(raw, &p)
	return p.Type == "text"
}

// call encodes a tool call, reusing its source record while unchanged.
func (e *oaEncoder) call(tc *compact.ToolCall) json.RawMessage {
	k := tc.ID + "\x00" + tc.Name + "\x00" + string(tc.Arguments)
	if q := e.calls[k]; len(q) > 0 {
		e.calls[k] = q[1:]
		return q[0]
	}
	return jsonOf(oaOutCall{ID: tc.ID, Type: "function",
		Function: oaOutFunction{Name: tc.Name, Arguments: argsToString(tc.Arguments)}})
}

// loadSource indexes the content parts and tool calls of m's source record,
// when m was read from OpenAI Chat, so unchanged ones are written as read.
func (e *oaEncoder) loadSource(m *compact.Message) {
	e.pool, e.calls = nil, nil
	if !sameFamily(m.Source.Format, e.to) || len(m.Source.Records) != 1 {
		return
	}
	var src struct {
		Content   json.RawMessage   `json:"content"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	if json.Unmarshal(m.Source.Records[0], &src) != nil {
		return
	}
	var elems []json.RawMessage
	if json.Unmarshal(src.Content, &elems) == nil {
		e.pool = rawPool{}
		for _, raw := range elems {
			if p, err := openAIPart(raw); err == nil && p != nil {
				e.pool.add([]compact.Part{*p}, raw)
			}
		}
	}
	e.calls = map[string][]json.RawMessage{}
	for _, raw := range src.ToolCalls {
		var c oaToolCall
		if json.Unmarshal(raw, &c) == nil {
			tc := openAIToolCall(c)
			k := tc.ID + "\x00" + tc.Name + "\x00" + string(tc.Arguments)
			e.calls[k] = append(e.calls[k], raw)
		}
	}
}
