package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// OpenAI Responses API items, as the API reference documents "input" and
// "output" (https://platform.openai.com/docs/api-reference/responses):
// message (input_text / output_text / refusal / input_image content),
// function_call and function_call_output (paired by call_id), reasoning
// (summary and reasoning_text; encrypted_content stays in the source record
// only), custom_tool_call(_output), the client-run computer, local_shell,
// shell and apply_patch calls with their *_output items, the server-run
// web_search, file_search, code_interpreter, image_generation and mcp calls
// (call and result in one item), and the compaction item of
// /responses/compact. Inputs: a JSON array of items, JSON lines of items, a
// request {"instructions", "input", "tools"} or a response object {"output"}.
//
// Consecutive output items (reasoning, assistant message, calls) form one
// assistant message, as one model turn; each item stays one of its source
// records. compact has no writer for this format.

func init() {
	register(Format{
		Name:        OpenAIResponses,
		Description: `OpenAI Responses API items: a JSON array, JSON lines, a request {"input"} or a response {"output"}`,
		Sniff:       sniffResponses,
		read:        readResponses,
	})
}

type respItem struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Role string `json:"role"`
	// EncryptedContent is a compaction item's (or reasoning item's) opaque
	// payload.
	EncryptedContent string          `json:"encrypted_content"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            json.RawMessage `json:"input"`
	Output           json.RawMessage `json:"output"`
	Summary          []respSummary   `json:"summary"`
	Action           json.RawMessage `json:"action"`
	Operation        json.RawMessage `json:"operation"`
	Queries          json.RawMessage `json:"queries"`
	Results          json.RawMessage `json:"results"`
	Result           json.RawMessage `json:"result"`
	Code             string          `json:"code"`
	Outputs          json.RawMessage `json:"outputs"`
	Error            json.RawMessage `json:"error"`
	Status           string          `json:"status"`
}

// respSummary is one entry of a reasoning item's summary.
type respSummary struct {
	Text string `json:"text"`
}

// scanRespItem is scanRecord for an item (raw valid JSON).
func scanRespItem(raw []byte, it *respItem) bool {
	var summary json.RawMessage
	if !scanRecord(raw, []recordField{
		{key: "type", str: &it.Type}, {key: "id", str: &it.ID}, {key: "role", str: &it.Role},
		{key: "encrypted_content", str: &it.EncryptedContent}, {key: "content", raw: &it.Content},
		{key: "call_id", str: &it.CallID}, {key: "name", str: &it.Name}, {key: "arguments", raw: &it.Arguments},
		{key: "input", raw: &it.Input}, {key: "output", raw: &it.Output}, {key: "summary", raw: &summary},
		{key: "action", raw: &it.Action}, {key: "operation", raw: &it.Operation}, {key: "queries", raw: &it.Queries},
		{key: "results", raw: &it.Results}, {key: "result", raw: &it.Result}, {key: "code", str: &it.Code},
		{key: "outputs", raw: &it.Outputs}, {key: "error", raw: &it.Error}, {key: "status", str: &it.Status},
	}) {
		return false
	}
	switch {
	case len(summary) == 0 || string(summary) == "null":
		return true
	case summary[0] != '[':
		return false
	}
	elems, _ := jsonscan.Elements(summary)
	it.Summary = make([]respSummary, len(elems))
	for i, e := range elems {
		v := summary[e.Start:e.End]
		if string(v) != "null" && !scanRecord(v, []recordField{{key: "text", str: &it.Summary[i].Text}}) {
			return false
		}
	}
	return true
}

// responsesItemTypes are the item types of the API's input and output lists.
var responsesItemTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "computer_call": true,
	"computer_call_output": true, "local_shell_call": true, "local_shell_call_output": true,
	"shell_call": true, "shell_call_output": true, "apply_patch_call": true,
	"apply_patch_call_output": true, "web_search_call": true, "file_search_call": true,
	"code_interpreter_call": true, "image_generation_call": true, "mcp_call": true,
	"mcp_list_tools": true, "mcp_approval_request": true, "mcp_approval_response": true,
	"item_reference": true, "compaction": true,
}

func readResponses(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	br, sh := peekShape(r)
	t := compact.Transcript{Format: string(OpenAIResponses)}
	b := respBuilder{t: &t, rs: rs}
	if sh.kind == 'l' {
		err := rs.lines(br, func(line []byte, n int) error {
			if n == 1 {
				line = bytes.TrimPrefix(line, utf8BOM)
			}
			raw := append(json.RawMessage(nil), line...)
			return locate(b.add(raw, jsonscan.Valid(raw)), name, OpenAIResponses, n, 0)
		})
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				err = &Error{File: name, Format: OpenAIResponses, Offset: -1, Msg: "reading input", Err: err}
			}
			return t, err
		}
		b.flush()
		return t, nil
	}
	const expected = `Responses API items: an array, or an object with "input" or "output"`
	doc, err := readJSONDoc(br, name, OpenAIResponses, expected, "input", "output")
	if err != nil {
		return t, err
	}
	if err := rs.docUTF8(&doc); err != nil {
		return compact.Transcript{}, err
	}
	items := doc.items
	if doc.object {
		if !hasField(doc.fields, "input") && !hasField(doc.fields, "output") {
			if !hasField(doc.fields, "type") && !hasField(doc.fields, "role") {
				return t, &Error{File: name, Format: OpenAIResponses, Offset: -1,
					Msg: `expected Responses API items, got an object without "input", "output" or an item "type"`}
			}
			items = []docItem{{raw: buildEnvelope(doc.fields, nil)}} // a single item
		} else {
			t.Envelope = buildEnvelope(doc.fields, map[string]string{"input": "[]", "output": "[]", "instructions": "null"})
			if err := b.envelope(doc.fields, name); err != nil {
				return t, err
			}
		}
		// Inputs come before outputs, whatever the field order.
		sort.SliceStable(items, func(i, j int) bool { return items[i].key == "input" && items[j].key != "input" })
	}
	for _, it := range items {
		if err := b.add(it.raw, true); err != nil { // a record of a valid document
			return t, locate(err, name, OpenAIResponses, 0, it.offset)
		}
	}
	b.flush()
	return t, nil
}

// respBuilder turns items into messages.
type respBuilder struct {
	rs *readState
	t  *compact.Transcript
	// turn is the assistant message being built from consecutive output
	// items, with its source records.
	turn    *compact.Message
	turnID  string
	records []json.RawMessage
}

// envelope reads a request's or response's fields: instructions, a string
// input, tools.
func (b *respBuilder) envelope(fields []docField, name string) error {
	for _, f := range fields {
		switch f.key {
		case "instructions":
			var s string
			if json.Unmarshal(f.value, &s) == nil && s != "" {
				m := compact.Message{Role: compact.RoleSystem, Parts: []compact.Part{{Type: compact.PartText, Text: s}}}
				keepSource(&m, OpenAIResponses, len(b.t.Messages), "instructions", f.value)
				b.t.Messages = append(b.t.Messages, m)
			}
		case "input":
			var s string
			if f.value != nil && json.Unmarshal(f.value, &s) == nil && s != "" {
				m := compact.Message{Role: compact.RoleUser, Parts: []compact.Part{{Type: compact.PartText, Text: s}}}
				keepSource(&m, OpenAIResponses, len(b.t.Messages), "", f.value)
				b.t.Messages = append(b.t.Messages, m)
			}
		case "tools":
			tools, err := decodeOpenAITools(f.value)
			if err != nil {
				return &Error{File: name, Format: OpenAIResponses, Offset: f.offset, Msg: `field "tools": ` + err.Error()}
			}
			b.t.Tools = tools
		}
	}
	return nil
}

// add reads one item.
//
// valid says raw is known to be valid JSON: it is then read in place
// (scanRespItem) unless odd.
func (b *respBuilder) add(raw json.RawMessage, valid bool) error {
	var it respItem
	if !valid || !scanRespItem(raw, &it) {
		it = respItem{}
		if err := decodeRecord(raw, &it, "a Responses API item"); err != nil {
			return err
		}
	}
	typ := it.Type
	if typ == "" {
		switch {
		case it.Role != "":
			typ = "message" // an EasyInputMessage
		case it.ID != "":
			typ = "item_reference"
		default:
			return &recordError{msg: `expected a Responses API item with a "type" or "role", found neither`}
		}
	}
	if typ == "message" && it.Content == nil {
		if other := unknownContent(raw, "content"); other != nil {
			// Read empty, its text would be lost without a word: kept
			// as a record, unread.
			b.rs.unreadRecord(0, "message", noContentWhy(other, "content"))
			typ = "message:unread"
		}
	}
	switch {
	case typ == "message":
		parts, err := responsesContent(it.Content)
		if err != nil {
			return err
		}
		if it.Role == "assistant" {
			b.open(it.ID, raw).Parts = append(b.turn.Parts, parts...)
			return nil
		}
		if it.Role == "" {
			return &recordError{msg: `expected a message item with a "role", found none`}
		}
		b.flush()
		b.push(compact.Message{Role: compact.Role(it.Role), Parts: parts}, it.ID, raw)
	case typ == "reasoning":
		m := b.open(it.ID, raw)
		for _, s := range it.Summary {
			if s.Text != "" {
				m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: s.Text})
			}
		}
		var texts []struct {
			Text string `json:"text"`
		}
		if len(it.Content) > 0 && it.Content[0] == '[' {
			json.Unmarshal(it.Content, &texts)
		}
		for _, s := range texts {
			if s.Text != "" {
				m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: s.Text})
			}
		}
	case strings.HasSuffix(typ, "_call_output"):
		id := firstNonEmpty(it.CallID, it.ID)
		b.flush()
		b.push(compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: outputParts(it.Output)}, "", raw)
	case strings.HasSuffix(typ, "_call") && it.CallID != "":
		// Run by the client: the result comes as a *_call_output item.
		m := b.open(it.ID, raw)
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{
			ID: it.CallID, Name: firstNonEmpty(it.Name, strings.TrimSuffix(typ, "_call")), Arguments: callArgs(&it)}})
	case strings.HasSuffix(typ, "_call"):
		// Run by the server: the item holds the call and its result.
		m := b.open(it.ID, raw)
		m.Parts = append(m.Parts,
			compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{
				ID: it.ID, Name: firstNonEmpty(it.Name, strings.TrimSuffix(typ, "_call")), Arguments: callArgs(&it)}},
			serverCallResult(&it))
	case typ == "compaction":
		// The API's own compaction: a summary only it can read, kept as
		// it is (see compact.PartOpaque).
		b.flush()
		b.push(compact.Message{Role: compact.RoleUser, Summary: true,
			Parts: []compact.Part{{Type: compact.PartOpaque, Text: it.EncryptedContent}}}, it.ID, raw)
	default:
		// compaction_trigger, item_reference, mcp_list_tools, approvals,
		// and types this reader does not know: kept in place as records.
		at := len(b.t.Messages)
		if b.turn != nil {
			at++
		}
		if !responsesItemTypes[typ] && typ != "compaction_trigger" && typ != "message:unread" {
			b.rs.unreadRecord(0, typ, "an item type this reader does not know")
		}
		b.t.Records = append(b.t.Records, compact.Record{At: at, Type: typ, Raw: raw, Marker: typ == "compaction_trigger"})
	}
	return nil
}

// open returns the assistant message being built, starting one if needed,
// and adds raw to its records.
func (b *respBuilder) open(id string, raw json.RawMessage) *compact.Message {
	if b.turn == nil {
		b.turn = &compact.Message{Role: compact.RoleAssistant}
		b.turnID = id
	}
	b.records = append(b.records, raw)
	return b.turn
}

// flush ends the assistant message being built.
func (b *respBuilder) flush() {
	if b.turn == nil {
		return
	}
	b.push(*b.turn, b.turnID, b.records...)
	b.turn, b.turnID, b.records = nil, "", nil
}

func (b *respBuilder) push(m compact.Message, id string, records ...json.RawMessage) {
	keepSource(&m, OpenAIResponses, len(b.t.Messages), id, records...)
	b.t.Messages = append(b.t.Messages, m)
}

// callArgs is a call item's input: function arguments (a JSON-encoded
// string), a custom tool's free-form input, or the action of a built-in tool.
func callArgs(it *respItem) json.RawMessage {
	switch {
	case len(it.Arguments) > 0:
		return openAIArgs(it.Arguments)
	case len(it.Input) > 0:
		return compactJSON(it.Input)
	case len(it.Action) > 0:
		return compactJSON(it.Action)
	case len(it.Operation) > 0:
		return compactJSON(it.Operation)
	case len(it.Queries) > 0:
		return compactJSON(json.RawMessage(`{"queries":` + string(it.Queries) + `}`))
	case it.Code != "":
		return jsonOf(map[string]string{"code": it.Code})
	}
	return nil
}

// serverCallResult renders what a server-run call returned.
func serverCallResult(it *respItem) compact.Part {
	p := compact.Part{Type: compact.PartToolResult, CallID: it.ID}
	if e := bytes.TrimSpace(it.Error); len(e) > 0 && string(e) != "null" {
		p.IsError = true
		var s string
		if json.Unmarshal(e, &s) != nil {
			s = string(compactJSON(e))
		}
		p.Text = s
		return p
	}
	for _, raw := range []json.RawMessage{it.Output, it.Results, it.Outputs} {
		if raw = bytes.TrimSpace(raw); len(raw) > 0 && string(raw) != "null" {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				p.Text = s
			} else {
				p.Text = string(compactJSON(raw))
			}
			return p
		}
	}
	if len(it.Result) > 0 { // an image generation's base64 image
		p.Text = "[generated image]"
		return p
	}
	p.Text = it.Status
	return p
}

// responsesContent reads a message item's content: a string, or parts.
func responsesContent(raw json.RawMessage) ([]compact.Part, error) {
	return readContent(raw, "parts", func(e json.RawMessage) ([]compact.Part, error) {
		if p, ok := responsesPart(e); ok {
			return []compact.Part{p}, nil
		}
		return nil, nil
	})
}

// respPart is a content part with the fields compact reads.
type respPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	FileID   string `json:"file_id"`
	Filename string `json:"filename"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// zero sets *p to its zero value and returns p: what a scan filled before
// it declined is not left for the decoder to keep.
func zero[T any](p *T) *T {
	var z T
	*p = z
	return p
}

// responsesPart reads one content part; false for an empty text.
func responsesPart(raw json.RawMessage) (compact.Part, bool) {
	var p respPart
	// raw is a value of a valid record: an object is read in place.
	if !scanRecord(raw, []recordField{
		{key: "type", str: &p.Type}, {key: "text", str: &p.Text}, {key: "refusal", str: &p.Refusal},
		{key: "image_url", str: &p.ImageURL}, {key: "file_id", str: &p.FileID}, {key: "filename", str: &p.Filename},
		{key: "stdout", str: &p.Stdout}, {key: "stderr", str: &p.Stderr},
	}) && json.Unmarshal(raw, zero(&p)) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return compact.Part{Type: compact.PartText, Text: s}, true
		}
		return compact.Part{Type: compact.PartText, Text: string(compactJSON(raw))}, true
	}
	switch p.Type {
	case "input_text", "output_text", "text", "summary_text", "reasoning_text":
		return compact.Part{Type: compact.PartText, Text: p.Text}, p.Text != ""
	case "refusal":
		return compact.Part{Type: compact.PartText, Text: p.Refusal}, p.Refusal != ""
	case "input_image", "computer_screenshot":
		if p.ImageURL != "" {
			return compact.Part{Type: compact.PartImage, Image: imageOfURL(p.ImageURL)}, true
		}
		return compact.Part{Type: compact.PartText, Text: "[image" + label(p.FileID) + "]"}, true
	case "input_file":
		return compact.Part{Type: compact.PartText, Text: "[file" + label(firstNonEmpty(p.Filename, p.FileID)) + "]"}, true
	}
	if p.Stdout != "" || p.Stderr != "" { // a shell_call_output entry
		return compact.Part{Type: compact.PartText, Text: strings.TrimRight(p.Stdout+"\n"+p.Stderr, "\n")}, true
	}
	if p.Type != "" && p.Text == "" {
		return compact.Part{Type: compact.PartText, Text: string(compactJSON(raw))}, true
	}
	return compact.Part{Type: compact.PartText, Text: p.Text}, p.Text != ""
}

// outputParts reads a *_call_output's output: a string, parts, or one
// object (a computer screenshot).
func outputParts(raw json.RawMessage) []compact.Part {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch raw[0] {
	case '"':
		if s, ok := jsonscan.UnquoteShared(raw); ok && s != "" {
			return []compact.Part{{Type: compact.PartText, Text: s}}
		}
		return nil
	case '[':
		elems, _ := jsonscan.Elements(raw)
		var parts []compact.Part
		for _, e := range elems {
			if p, ok := responsesPart(raw[e.Start:e.End:e.End]); ok {
				parts = append(parts, p)
			}
		}
		return parts
	}
	if p, ok := responsesPart(raw); ok {
		return []compact.Part{p}
	}
	return nil
}

// respEvidence weighs sniffed records as Responses items.
func respEvidence(items [][]byte) (resp, plain, other int) {
	for _, it := range items {
		keys := recordKeys(it)
		if keys == nil {
			other++
			continue
		}
		var typ string
		json.Unmarshal(keys["type"], &typ)
		_, hasRole := keys["role"]
		switch {
		case typ == "message" || typ == "" && hasRole:
			var parts []struct {
				Type string `json:"type"`
			}
			switch {
			case json.Unmarshal(keys["content"], &parts) != nil:
				if typ == "message" {
					resp++
				} else {
					plain++
				}
			case len(parts) == 0:
				plain++
			default:
				switch pt := parts[0].Type; {
				case responsesPartTypes[pt] || pt == "refusal":
					resp++
				default:
					other++ // Anthropic blocks or OpenAI Chat parts
				}
			}
			if _, ok := keys["stop_reason"]; ok {
				other++ // an Anthropic response
			}
		case responsesItemTypes[typ]:
			resp++
		default:
			other++
		}
	}
	return resp, plain, other
}

// sniffResponses scores Responses API items: item types and content part
// types only this API has. A request with a plain string "input" is likely
// too.
func sniffResponses(head []byte) int {
	sh := shapeOf(head)
	var items [][]byte
	switch sh.kind {
	case '[', 'l':
		items = sh.items
	case '{':
		if obj, ok := sh.field("object"); ok && (string(obj.value) == `"response"` || string(obj.value) == `"response.compaction"`) {
			return 60
		}
		in, hasIn := sh.field("input")
		out, hasOut := sh.field("output")
		switch {
		case hasIn && len(in.value) > 0 && in.value[0] == '"':
			if _, ok := sh.field("model"); ok {
				return 35
			}
			return 0
		case hasIn:
			items = headItems(in.value, sniffItems)
		case hasOut:
			items = headItems(out.value, sniffItems)
		default: // a single item
			if typ, ok := sh.field("type"); ok && len(typ.value) > 2 && responsesItemTypes[string(typ.value[1:len(typ.value)-1])] &&
				string(typ.value) != `"message"` {
				return 30
			}
			return 0
		}
	}
	if len(items) == 0 {
		return 0
	}
	resp, plain, other := respEvidence(items)
	switch {
	case other > 0:
		return 0
	case resp > 0:
		return 45
	case plain > 0 && sh.kind == '{':
		return 35 // {"input": [{role, content}]} is a Responses request
	}
	return 0
}

// peekShape says whether r is JSON lines (kind 'l') or one document, and
// returns a reader that still yields all of r (of a known size when r's
// is), for readers that accept both.
func peekShape(r io.Reader) (io.Reader, jsonShape) {
	size := sizeOf(r)
	head, err := readHead(r, SniffSize)
	var rest io.Reader = io.MultiReader(bytes.NewReader(head), r)
	switch {
	case err != nil:
		rest = io.MultiReader(bytes.NewReader(head), errReader{err})
	case size >= 0:
		rest = &sizedReader{rest, size} // read whole in one buffer still
	}
	// Only lines or not matters here: the first value, whole in the head,
	// with more after it.
	sh := jsonShape{kind: '{'}
	h := bytes.TrimPrefix(head, utf8BOM)
	if end := jsonscan.ValueEnd(h, 0); end > 0 && jsonscan.SkipSpace(h, end) < len(h) {
		sh.kind = 'l'
	}
	return rest, sh
}

// errReader returns its error, so a read error met while peeking is
// reported where the reader meets it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
