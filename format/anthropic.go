package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Anthropic Messages, as the API reference documents a request
// (https://docs.anthropic.com/en/api/messages): {"system": string | [text
// blocks], "messages": [{"role": "user"|"assistant", "content": string |
// [blocks]}], "tools": [...]}. Blocks: text, image (base64, url or file
// source), document, thinking, redacted_thinking, tool_use, tool_result
// (string or block content, is_error), and the server tools' server_tool_use /
// mcp_tool_use and *_tool_result blocks. A bare array of messages, and a
// single response object ({"type": "message", "role": "assistant", ...}),
// are read too.

func init() {
	register(Format{
		Name:        Anthropic,
		Description: `Anthropic Messages: {"system", "messages", "tools"}, or a bare array of messages`,
		Sniff:       sniffAnthropic,
		read:        readAnthropic,
		Write:       writeAnthropic,
	})
}

// anthropicSystemID is the ID of the system message read from the top-level
// "system" field; the writer puts that message back there.
const anthropicSystemID = "system"

type anMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
	ID      string          `json:"id"`
}

// anBlock is a content block with the fields compact reads; the block's
// other fields stay in the source record.
type anBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  string          `json:"thinking"`
	Source    *anSource       `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Title     string          `json:"title"`
}

// anSource is an image or document block's source.
type anSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
	FileID    string `json:"file_id"`
}

// scanAnthropicMessage is scanRecord for a message.
func scanAnthropicMessage(raw []byte, o *anMessage) bool {
	return scanRecord(raw, []recordField{{key: "role", strp: &o.Role}, {key: "content", raw: &o.Content}, {key: "id", str: &o.ID}})
}

// decodeAnthropicBlock reads a content block (valid JSON) into b: in place
// where scanRecord can, else through the decoder.
func decodeAnthropicBlock(raw []byte, b *anBlock) error {
	var source json.RawMessage
	if scanRecord(raw, []recordField{
		{key: "type", str: &b.Type}, {key: "text", strp: &b.Text}, {key: "thinking", str: &b.Thinking},
		{key: "source", raw: &source}, {key: "id", str: &b.ID}, {key: "name", str: &b.Name},
		{key: "input", raw: &b.Input}, {key: "tool_use_id", str: &b.ToolUseID}, {key: "content", raw: &b.Content},
		{key: "is_error", flag: &b.IsError}, {key: "title", str: &b.Title},
	}) {
		switch {
		case len(source) == 0 || string(source) == "null":
			return nil
		case source[0] == '{':
			src := &anSource{}
			if scanRecord(source, []recordField{
				{key: "type", str: &src.Type}, {key: "media_type", str: &src.MediaType}, {key: "data", str: &src.Data},
				{key: "url", str: &src.URL}, {key: "file_id", str: &src.FileID},
			}) {
				b.Source = src
				return nil
			}
		}
	}
	*b = anBlock{}
	return json.Unmarshal(raw, b)
}

func readAnthropic(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	const expected = `an Anthropic Messages request {"system", "messages"} or an array of messages`
	doc, err := readJSONDoc(r, name, Anthropic, expected, "messages")
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.docUTF8(&doc); err != nil {
		return compact.Transcript{}, err
	}
	t := compact.Transcript{Format: string(Anthropic)}
	items := doc.items
	if doc.object {
		if !hasField(doc.fields, "messages") {
			if !hasField(doc.fields, "role") || !hasField(doc.fields, "content") {
				return t, &Error{File: name, Format: Anthropic, Offset: -1,
					Msg: `expected an object with "messages" (or a single message), got an object without them`}
			}
			// A single message, e.g. an API response.
			items = []docItem{{raw: buildEnvelope(doc.fields, nil)}}
		} else {
			t.Envelope = buildEnvelope(doc.fields, map[string]string{"messages": "[]", "system": "null"})
		}
		for _, f := range doc.fields {
			switch f.key {
			case "messages":
				if f.value != nil {
					return t, &Error{File: name, Format: Anthropic, Offset: f.offset,
						Msg: fmt.Sprintf(`field "messages": expected an array of messages, got %s`, jsonscan.Describe(f.value))}
				}
			case "system":
				if t.Envelope == nil {
					continue // a single message has no system prompt
				}
				m, ok, err := anthropicSystem(f.value)
				if err != nil {
					return t, &Error{File: name, Format: Anthropic, Offset: f.offset, Msg: err.Error()}
				}
				if ok {
					t.Messages = append(t.Messages, m)
				}
			case "tools":
				tools, err := decodeAnthropicTools(f.value)
				if err != nil {
					return t, &Error{File: name, Format: Anthropic, Offset: f.offset, Msg: `field "tools": ` + err.Error()}
				}
				t.Tools = tools
			}
		}
	}
	for _, it := range items {
		m, err := decodeAnthropicMessage(it.raw, len(t.Messages))
		if err != nil {
			return t, locate(err, name, Anthropic, 0, it.offset)
		}
		t.Messages = append(t.Messages, m)
	}
	return t, nil
}

// anthropicSystem reads the top-level "system": a string or text blocks.
func anthropicSystem(raw json.RawMessage) (compact.Message, bool, error) {
	m := compact.Message{Role: compact.RoleSystem}
	switch raw = bytes.TrimSpace(raw); {
	case len(raw) == 0 || string(raw) == "null":
		return m, false, nil
	case raw[0] == '"' || raw[0] == '[':
		parts, err := anthropicContent(raw)
		if err != nil {
			return m, false, fmt.Errorf(`field "system": %w`, err)
		}
		m.Parts = parts
	default:
		return m, false, fmt.Errorf(`field "system": expected a string or an array of text blocks, got %s`, jsonscan.Describe(raw))
	}
	keepSource(&m, Anthropic, 0, anthropicSystemID, raw)
	return m, true, nil
}

func decodeAnthropicMessage(raw json.RawMessage, index int) (compact.Message, error) {
	// raw is a record of a valid document: read in place unless odd.
	var o anMessage
	if !scanAnthropicMessage(raw, &o) {
		o = anMessage{}
		if err := decodeRecord(raw, &o, "a message object"); err != nil {
			return compact.Message{}, err
		}
	}
	if o.Role == nil || *o.Role == "" {
		return compact.Message{}, &recordError{msg: `expected a message object with a "role", found none`}
	}
	if o.Content == nil || string(o.Content) == "null" {
		// No content (null is none the API takes) but other fields: read
		// empty, what they hold would be lost without a word.
		other := slices.DeleteFunc(unknownContent(raw), func(k string) bool { return strings.EqualFold(k, "content") })
		if len(other) > 0 {
			return compact.Message{}, &recordError{msg: fmt.Sprintf("message %d is %s; another format read with --format?", index, noContentWhy(other, "content"))}
		}
	}
	m := compact.Message{Role: compact.Role(*o.Role)}
	parts, err := anthropicContent(o.Content)
	if err != nil {
		return m, &recordError{msg: err.Error()}
	}
	m.Parts = parts
	// A message holding the API's compaction block summarises what came
	// before it.
	m.Summary = slices.ContainsFunc(parts, func(p compact.Part) bool { return p.Type == compact.PartOpaque })
	keepSource(&m, Anthropic, index, o.ID, raw)
	return m, nil
}

// anthropicContent reads content: a string, or an array of blocks.
func anthropicContent(raw json.RawMessage) ([]compact.Part, error) {
	return readContent(raw, "blocks", anthropicBlockParts)
}

// anthropicBlockParts reads one content block into parts: none for an empty
// text block, several for a tool_result whose content holds several blocks
// (each a tool-result part with the same call id).
func anthropicBlockParts(raw json.RawMessage) ([]compact.Part, error) {
	var b anBlock
	if i := jsonscan.SkipSpace(raw, 0); i >= len(raw) || raw[i] != '{' {
		return nil, fmt.Errorf("expected a content block object, got %s", jsonscan.Describe(raw))
	}
	if err := decodeAnthropicBlock(raw, &b); err != nil {
		return nil, fmt.Errorf("expected a content block: %w", err)
	}
	switch b.Type {
	case "text":
		if b.Text == nil || *b.Text == "" {
			return nil, nil
		}
		return []compact.Part{{Type: compact.PartText, Text: *b.Text}}, nil
	case "image":
		if img := anthropicImage(&b); img != nil {
			return []compact.Part{{Type: compact.PartImage, Image: img}}, nil
		}
		return []compact.Part{{Type: compact.PartText, Text: "[image]"}}, nil
	case "thinking":
		return []compact.Part{{Type: compact.PartThinking, Text: b.Thinking}}, nil
	case "redacted_thinking": // encrypted: only the source record carries it
		return []compact.Part{{Type: compact.PartThinking}}, nil
	case "compaction":
		// The API's own compaction (context_management compact_*): the
		// summary it continues from, kept as the API gave it and never
		// read as text.
		content, ok := jsonscan.Unquote([]byte(bytes.TrimSpace(b.Content)))
		if !ok && b.Text != nil {
			content = *b.Text
		}
		return []compact.Part{{Type: compact.PartOpaque, Text: content}}, nil
	case "tool_use", "server_tool_use", "mcp_tool_use":
		return []compact.Part{{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: b.ID, Name: b.Name, Arguments: compactJSON(b.Input)}}}, nil
	case "tool_result", "mcp_tool_result":
		return anthropicResult(b.ToolUseID, b.Content, b.IsError)
	case "document":
		return []compact.Part{{Type: compact.PartText, Text: "[document" + label(b.Title) + "]"}}, nil
	case "":
		return nil, fmt.Errorf(`content block without a "type"`)
	}
	if strings.HasSuffix(b.Type, "_tool_result") && b.ToolUseID != "" {
		// A server tool's result (web search, web fetch, code execution):
		// its content is the tool's own structure; keep it readable.
		return []compact.Part{serverResult(b.ToolUseID, b.Content)}, nil
	}
	return []compact.Part{{Type: compact.PartText, Text: "[" + b.Type + "]"}}, nil
}

func label(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func anthropicImage(b *anBlock) *compact.Image {
	if b.Source == nil {
		return nil
	}
	// A source without its data is no image another format can carry:
	// the caller writes a placeholder.
	switch {
	case b.Source.Type == "base64" && b.Source.Data != "":
		return &compact.Image{MediaType: b.Source.MediaType, Data: b.Source.Data}
	case b.Source.Type == "url" && b.Source.URL != "":
		return &compact.Image{URL: b.Source.URL}
	}
	return nil
}

// anthropicResult reads a tool_result's content: a string, or text and
// image blocks.
func anthropicResult(id string, content json.RawMessage, isError bool) ([]compact.Part, error) {
	part := func(p compact.Part) compact.Part {
		p.Type, p.CallID, p.IsError = compact.PartToolResult, id, isError
		return p
	}
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return []compact.Part{part(compact.Part{})}, nil
	}
	// content is a value of a valid record: read in place.
	if content[0] == '"' {
		s, ok := jsonscan.UnquoteShared(content)
		if !ok {
			return nil, fmt.Errorf("tool_result content: invalid string %.40q", content)
		}
		return []compact.Part{part(compact.Part{Text: s})}, nil
	}
	blocks, complete := jsonscan.Elements(content)
	if content[0] != '[' || !complete {
		return nil, fmt.Errorf("tool_result content: expected a string or an array of blocks, got %s", jsonscan.Describe(content))
	}
	var out []compact.Part
	for i, sp := range blocks {
		ps, err := anthropicBlockParts(content[sp.Start:sp.End:sp.End])
		if err != nil {
			return nil, fmt.Errorf("tool_result content[%d]: %w", i, err)
		}
		for _, p := range ps {
			switch p.Type {
			case compact.PartImage:
				out = append(out, part(compact.Part{Image: p.Image}))
			case compact.PartText:
				out = append(out, part(compact.Part{Text: p.Text}))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, part(compact.Part{}))
	}
	return out, nil
}

// serverResult renders a server tool's result block as a tool-result part:
// search results as title and URL lines, errors flagged, anything else as
// its JSON.
func serverResult(id string, content json.RawMessage) compact.Part {
	p := compact.Part{Type: compact.PartToolResult, CallID: id}
	var items []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		URL     string `json:"url"`
		Text    string `json:"text"`
		PageAge string `json:"page_age"`
	}
	var obj struct {
		Type      string `json:"type"`
		ErrorCode string `json:"error_code"`
	}
	switch {
	case json.Unmarshal(content, &items) == nil && len(items) > 0:
		var b strings.Builder
		for _, it := range items {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			switch {
			case it.URL != "":
				b.WriteString(strings.TrimSpace(it.Title + " " + it.URL))
			case it.Text != "":
				b.WriteString(it.Text)
			default:
				b.WriteString("[" + it.Type + "]")
			}
		}
		p.Text = b.String()
	case json.Unmarshal(content, &obj) == nil && obj.ErrorCode != "":
		p.Text, p.IsError = obj.Type+": "+obj.ErrorCode, true
	default:
		p.Text = string(compactJSON(content))
	}
	return p
}

// decodeAnthropicTools reads "tools": client tools {name, description,
// input_schema} and server tools {type, name, ...}.
func decodeAnthropicTools(raw json.RawMessage) ([]compact.ToolDef, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var elems []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("expected an array of tool definitions: %w", err)
	}
	tools := make([]compact.ToolDef, len(elems))
	for i, e := range elems {
		tools[i] = compact.ToolDef{Name: firstNonEmpty(e.Name, e.Type), Description: e.Description, Parameters: compactJSON(e.InputSchema)}
	}
	return tools, nil
}

// anthropicCutRequest scores a request cut off by the head before its
// "messages" (a long "system" prompt first): fields of a request only, one
// of them Anthropic's, make it likely.
func anthropicCutRequest(sh jsonShape) int {
	if !sh.cut {
		return 0
	}
	anthropic := false
	for _, f := range sh.fields {
		switch {
		case anthropicRequestKeys[f.key]:
			anthropic = true
		case !openaiRequestKeys[f.key]:
			return 0
		}
	}
	if anthropic {
		return 20
	}
	return 0
}

// sniffAnthropic scores Anthropic Messages: block types only Anthropic has
// (tool_use, tool_result, thinking, image sources) or a top-level "system"
// make it likely; plain user/assistant strings are more likely OpenAI Chat.
func sniffAnthropic(head []byte) int {
	sh := shapeOf(head)
	var items [][]byte
	system := false
	switch sh.kind {
	case '[':
		items = sh.items
	case '{':
		msgs, ok := sh.field("messages")
		if !ok {
			typ, _ := sh.field("type")
			_, hasRole := sh.field("role")
			_, hasContent := sh.field("content")
			if string(typ.value) == `"message"` && hasRole && hasContent {
				return 50 // a Messages API response object
			}
			return anthropicCutRequest(sh)
		}
		for _, f := range sh.fields {
			switch {
			case anthropicRequestKeys[f.key]:
				system = true
			case !openaiRequestKeys[f.key]:
				return 0 // an agent's own file with a "messages" list
			}
		}
		items = headItems(msgs.value, sniffItems)
	default:
		return 0
	}
	if len(items) == 0 {
		return 0
	}
	ev := chatEvidenceOf(items)
	switch {
	case ev.messages == 0 || ev.others > 0 || ev.openai > 0 || ev.responses > 0:
		return 0
	case ev.foreign > 0:
		return 6
	case ev.anthropic > 0 && system:
		return 50
	case ev.anthropic > 0:
		return 45
	case system:
		return 40
	}
	return 15
}
