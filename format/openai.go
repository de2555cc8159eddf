package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
	"github.com/compactkit/compact/internal/parallel"
)

// OpenAI Chat Completions messages, as the API reference documents the
// "messages" parameter (https://platform.openai.com/docs/api-reference/chat/create):
// {"role", "content": string | [parts], "name", "tool_calls", "tool_call_id",
// "refusal"}, the deprecated "function_call" and role "function", plus the
// "reasoning_content" / "reasoning" fields OpenAI-compatible servers (DeepSeek,
// vLLM, OpenRouter) add to assistant messages.

func init() {
	register(Format{
		Name:        OpenAIChat,
		Description: `OpenAI Chat Completions messages: a JSON array, or {"messages": [...], "tools": [...]}`,
		Sniff:       sniffOpenAIChat,
		read:        readOpenAIChat,
		Write:       writeOpenAIChat,
	})
	register(Format{
		Name:        OpenAIChatJSONL,
		Description: "OpenAI Chat Completions messages, one JSON object per line",
		Sniff:       sniffOpenAIChatJSONL,
		read:        readOpenAIChatJSONL,
		Write:       writeOpenAIChatJSONL,
	})
}

// oaMessage is a Chat Completions message as read. The raw values are
// slices of the record (jsonscan.Raw: no copy), read before the record is
// returned and never kept.
type oaMessage struct {
	Role             *string      `json:"role"`
	Content          jsonscan.Raw `json:"content"`
	Name             string       `json:"name"`
	ToolCalls        []oaToolCall `json:"tool_calls"`
	ToolCallID       *string      `json:"tool_call_id"`
	FunctionCall     *oaFunction  `json:"function_call"`
	Refusal          *string      `json:"refusal"`
	ReasoningContent *string      `json:"reasoning_content"`
	Reasoning        jsonscan.Raw `json:"reasoning"`
	ID               jsonscan.Raw `json:"id"`
}

type oaToolCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function *oaFunction `json:"function"`
	Custom   *struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom"`
}

// oaFunction is a call's function. Arguments is a JSON-encoded string per
// the API; some logs store the object itself, which is accepted too.
type oaFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// oaPart is one element of array content.
type oaPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text"`
	ImageURL   json.RawMessage `json:"image_url"` // {"url", "detail"}, or a bare URL string
	InputAudio *struct {
		Format string `json:"format"`
	} `json:"input_audio"`
	File *struct {
		Filename string `json:"filename"`
		FileID   string `json:"file_id"`
	} `json:"file"`
	Refusal string `json:"refusal"`
}

func readOpenAIChat(r io.Reader, rs *readState) (compact.Transcript, error) {
	if rs.spanning() {
		if t, ok := readOpenAIChatSpans(r, rs); ok {
			return t, nil
		}
		// Anything else is read again, whole, the usual way: it says what
		// is wrong and where.
		r = io.NewSectionReader(rs.opts.Source, 0, math.MaxInt64)
	}
	name := rs.name
	doc, err := readJSONDoc(r, name, OpenAIChat, openAIChatExpected, "messages")
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.docUTF8(&doc); err != nil {
		return compact.Transcript{}, err
	}
	t, err := openAIChatFields(&doc, name)
	if err != nil {
		return t, err
	}
	// Records decode independently: on all cores.
	t.Messages = make([]compact.Message, len(doc.items))
	at, err := parallel.Each(len(doc.items), func(i int) error {
		m, err := decodeOpenAIMessage(doc.items[i].raw, OpenAIChat, i, true)
		t.Messages[i] = m
		return err
	})
	if err != nil {
		t.Messages = t.Messages[:at]
		return t, locate(err, name, OpenAIChat, 0, doc.items[at].offset)
	}
	return t, nil
}

const openAIChatExpected = `an array of chat messages or an object with "messages"`

// readOpenAIChatSpans reads an OpenAI Chat document record by record
// (streamDoc), keeping each message's record as its span in the input:
// the document is never held whole. ok is false for anything but a valid
// document whose records all read (the caller reads it again to say what
// is wrong); the warnings found are given only when ok.
func readOpenAIChatSpans(r io.Reader, rs *readState) (t compact.Transcript, ok bool) {
	var warnings []Warning
	warn := rs.opts.Warn
	rs.opts.Warn = func(w Warning) { warnings = append(warnings, w) }
	defer func() {
		rs.opts.Warn = warn
		if ok && warn != nil {
			for _, w := range warnings {
				warn(w)
			}
		}
	}()
	var batches [][]compact.Message
	var shared sharedStrings
	n := 0
	doc, ok := streamDoc(r, []string{"messages"}, func(items []docItem) error {
		for _, it := range items {
			if err := rs.checkUTF8(it.raw, 0, it.offset); err != nil {
				return err
			}
		}
		batch := make([]compact.Message, len(items))
		if _, err := parallel.Each(len(items), func(i int) error {
			m, err := decodeOpenAIMessage(items[i].raw, OpenAIChat, n+i, true)
			raw := items[i].raw
			m.Source.Records = nil
			m.Source.Spans = []compact.Span{{Offset: items[i].offset, Len: len(raw), Sum: spanSum(raw)}}
			detach(&m, raw)
			batch[i] = m
			return err
		}); err != nil {
			return err
		}
		for i := range batch {
			shared.share(&batch[i])
		}
		batches = append(batches, batch)
		n += len(batch)
		return nil
	})
	if !ok {
		return t, false
	}
	for _, f := range doc.fields {
		if rs.checkUTF8(f.value, 0, f.offset) != nil {
			return t, false
		}
	}
	t, err := openAIChatFields(&doc, rs.name)
	if err != nil {
		return t, false
	}
	// One slice of the right size, not the slack and the copies of one
	// grown batch by batch.
	t.Messages = make([]compact.Message, 0, n)
	for i, b := range batches {
		t.Messages = append(t.Messages, b...)
		batches[i] = nil
	}
	return t, true
}

// openAIChatFields reads what an OpenAI Chat document holds besides its
// messages: the tools, and the envelope of an object.
func openAIChatFields(doc *jsonDoc, name string) (compact.Transcript, error) {
	t := compact.Transcript{Format: string(OpenAIChat)}
	if !doc.object {
		return t, nil
	}
	var sawMessages bool
	for _, f := range doc.fields {
		switch f.key {
		case "messages":
			sawMessages = true
			if f.value != nil { // a scalar where the list belongs
				return t, &Error{File: name, Format: OpenAIChat, Offset: f.offset,
					Msg: fmt.Sprintf(`field "messages": expected an array of chat messages, got %s`, jsonscan.Describe(f.value))}
			}
		case "tools", "functions":
			tools, err := decodeOpenAITools(f.value)
			if err != nil {
				return t, &Error{File: name, Format: OpenAIChat, Offset: f.offset, Msg: fmt.Sprintf("field %q: %v", f.key, err)}
			}
			t.Tools = append(t.Tools, tools...)
		}
	}
	if !sawMessages {
		msg := `expected an array of chat messages or an object with "messages", got an object without "messages"`
		if hasField(doc.fields, "role") {
			msg = `expected an array of chat messages, got a single message object (for one message per line, use --format openai-jsonl)`
		}
		return t, &Error{File: name, Format: OpenAIChat, Offset: -1, Msg: msg}
	}
	t.Envelope = buildEnvelope(doc.fields, map[string]string{"messages": "[]"})
	return t, nil
}

func hasField(fields []docField, key string) bool {
	for _, f := range fields {
		if f.key == key {
			return true
		}
	}
	return false
}

func readOpenAIChatJSONL(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	t := compact.Transcript{Format: string(OpenAIChatJSONL)}
	index := 0
	err := rs.lines(r, func(line []byte, n int) error {
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		// A valid line is read in place as a document's record is; the
		// decoder reads the rest and says what is wrong.
		raw := rs.copyRecord(line)
		m, err := decodeOpenAIMessage(raw, OpenAIChatJSONL, index, jsonscan.Valid(raw))
		if err != nil {
			return locate(err, name, OpenAIChatJSONL, n, 0)
		}
		if sp, ok := rs.spanOf(raw); ok {
			m.Source.Records, m.Source.Spans = nil, []compact.Span{sp}
			detach(&m, raw)
		}
		index++
		if rs.streaming() {
			return rs.emit(m) // one message a line: final once read
		}
		t.Messages = append(t.Messages, m)
		return nil
	})
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			err = &Error{File: name, Format: OpenAIChatJSONL, Offset: -1, Msg: "reading input", Err: err}
		}
		return t, err
	}
	return t, nil // no lines: a conversation not started yet (Read rejects empty input it has to detect)
}

// recordError is a problem with one record, located by the caller.
type recordError struct {
	msg    string
	offset int64 // within the record, when known
	err    error
}

func (e *recordError) Error() string { return e.msg }

// locate turns a record's error into an *Error at the record's line (JSONL)
// or byte offset (JSON).
func locate(err error, file string, f Name, line int, base int64) error {
	var re *recordError
	if !errors.As(err, &re) {
		return err
	}
	e := &Error{File: file, Format: f, Line: line, Offset: -1, Msg: re.msg, Err: re.err}
	if line == 0 {
		e.Offset = base + re.offset
	}
	return e
}

// decodeRecord unmarshals raw into v, turning failures into a recordError
// that says what was expected.
func decodeRecord(raw []byte, v any, expected string) error {
	if i := jsonscan.SkipSpace(raw, 0); i >= len(raw) || raw[i] != '{' {
		return &recordError{msg: fmt.Sprintf("expected %s, got %s", expected, jsonscan.Describe(raw))}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		e := jsonError("", "", 0, err, expected).(*Error)
		re := &recordError{msg: e.Msg, err: e.Err}
		if e.Offset > 0 {
			re.offset = e.Offset
		}
		return re
	}
	return nil
}

// oaContentFields are the fields of a Chat Completions message that carry
// what it says.
var oaContentFields = []string{"content", "tool_calls", "function_call", "refusal", "reasoning_content", "reasoning", "audio"}

// decodeOpenAIMessage turns one Chat Completions message record into a
// Message that keeps raw as its source. valid says raw is known to be
// valid JSON (a record of a document json.Valid accepted): the record is
// then read in place (scanOpenAIMessage) unless it holds anything the
// decoder would read differently or report.
func decodeOpenAIMessage(raw json.RawMessage, f Name, index int, valid bool) (compact.Message, error) {
	var o oaMessage
	if !valid || !scanOpenAIMessage(raw, &o) {
		o = oaMessage{}
		if err := decodeRecord(raw, &o, "a chat message object"); err != nil {
			return compact.Message{}, err
		}
	}
	if o.Role == nil || *o.Role == "" {
		return compact.Message{}, &recordError{msg: `expected a chat message object with a "role", found none`}
	}
	if o.Content == nil && o.ToolCalls == nil && o.FunctionCall == nil && o.Refusal == nil && o.ReasoningContent == nil && o.Reasoning == nil {
		if other := unknownContent(raw, oaContentFields...); other != nil {
			// Read empty, its text would be lost without a word.
			return compact.Message{}, &recordError{msg: fmt.Sprintf("message %d is %s; another format read with --format?", index, noContentWhy(other, oaContentFields...))}
		}
	}
	m := compact.Message{Role: compact.Role(*o.Role), Name: o.Name}
	switch *o.Role {
	case "function": // the deprecated answer to a function_call: no id
		m.Role = compact.RoleTool
		m.ToolCallIDs = []string{""}
	case "tool":
		id := ""
		if o.ToolCallID != nil {
			id = *o.ToolCallID
		}
		m.ToolCallIDs = []string{id}
	}
	if o.ReasoningContent != nil && *o.ReasoningContent != "" {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: *o.ReasoningContent})
	}
	if reasoning := rawString(o.Reasoning); reasoning != "" &&
		(o.ReasoningContent == nil || *o.ReasoningContent != reasoning) {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartThinking, Text: reasoning})
	}
	parts, err := openAIContent(json.RawMessage(o.Content))
	if err != nil {
		return m, err
	}
	// One slice of the parts, sized for all of them: a long transcript
	// holds one per message.
	switch more := len(o.ToolCalls) + boolInt(o.FunctionCall != nil); {
	case more > 0:
		n := len(m.Parts) + len(parts) + more + boolInt(o.Refusal != nil && *o.Refusal != "")
		m.Parts = append(append(make([]compact.Part, 0, n), m.Parts...), parts...)
	case m.Parts == nil && len(parts) > 0 && len(parts) == cap(parts):
		m.Parts = parts // a slice of its own (openAIContent's)
	default:
		m.Parts = append(m.Parts, parts...)
	}
	if o.Refusal != nil && *o.Refusal != "" && !hasText(parts, *o.Refusal) {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: *o.Refusal})
	}
	for _, c := range o.ToolCalls {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall, ToolCall: openAIToolCall(c)})
	}
	if fc := o.FunctionCall; fc != nil {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{Name: fc.Name, Arguments: openAIArgs(fc.Arguments)}})
	}
	// A log's own message id, where it keeps one.
	keepSource(&m, f, index, rawString(o.ID), raw)
	return m, nil
}

// scanOpenAIMessage fills o from raw, a valid JSON record, as
// json.Unmarshal would, reading it in place: strings without escapes share
// raw's bytes. It returns false, leaving o for the decoder to fill again,
// on anything where the two could differ or the decoder would report
// something: a key given twice or in another case than the field's, a
// value of another type than the field's.
func scanOpenAIMessage(raw []byte, o *oaMessage) bool {
	members, ok := jsonscan.Members(raw)
	if !ok {
		return false
	}
	var seen uint16
	for _, m := range members {
		v := raw[m.Value.Start:m.Value.End:m.Value.End]
		var bit uint16
		switch m.Key {
		case "role":
			bit, ok = 1<<0, scanStringPtr(v, &o.Role)
		case "content":
			bit, o.Content = 1<<1, v
		case "name":
			bit, ok = 1<<2, scanString(v, &o.Name)
		case "tool_calls":
			bit, ok = 1<<3, scanToolCalls(v, &o.ToolCalls)
		case "tool_call_id":
			bit, ok = 1<<4, scanStringPtr(v, &o.ToolCallID)
		case "function_call":
			bit = 1 << 5
			if string(v) != "null" {
				o.FunctionCall = &oaFunction{}
				ok = scanFunction(v, o.FunctionCall)
			}
		case "refusal":
			bit, ok = 1<<6, scanStringPtr(v, &o.Refusal)
		case "reasoning_content":
			bit, ok = 1<<7, scanStringPtr(v, &o.ReasoningContent)
		case "reasoning":
			bit, o.Reasoning = 1<<8, v
		case "id":
			bit, o.ID = 1<<9, v
		default:
			ok = !foldsTo(m.Key, "role", "content", "name", "tool_calls", "tool_call_id", "function_call",
				"refusal", "reasoning_content", "reasoning", "id")
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return true
}

// foldsTo reports whether key matches one of names the way encoding/json
// matches a key to a field when no field has exactly that name.
func foldsTo(key string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// scanString reads a JSON string or null (which leaves *s) into *s.
func scanString(v []byte, s *string) bool {
	switch v[0] {
	case 'n':
		return true
	case '"':
		var ok bool
		*s, ok = jsonscan.UnquoteShared(v)
		return ok
	}
	return false
}

// scanStringPtr reads a JSON string into a new *p, or null into nil.
func scanStringPtr(v []byte, p **string) bool {
	if v[0] == 'n' {
		*p = nil
		return true
	}
	var s string
	if !scanString(v, &s) {
		return false
	}
	*p = &s
	return true
}

func scanToolCalls(v []byte, calls *[]oaToolCall) bool {
	if v[0] == 'n' {
		*calls = nil
		return true
	}
	elems, ok := jsonscan.Elements(v)
	if !ok || v[0] != '[' {
		return false
	}
	out := make([]oaToolCall, len(elems))
	for i, e := range elems {
		c := v[e.Start:e.End:e.End]
		members, ok := jsonscan.Members(c)
		if !ok {
			return false
		}
		var seen uint8
		for _, m := range members {
			f := c[m.Value.Start:m.Value.End:m.Value.End]
			var bit uint8
			switch m.Key {
			case "id":
				bit, ok = 1<<0, scanString(f, &out[i].ID)
			case "type":
				bit, ok = 1<<1, scanString(f, &out[i].Type)
			case "function":
				bit = 1 << 2
				if string(f) != "null" {
					out[i].Function = &oaFunction{}
					ok = scanFunction(f, out[i].Function)
				}
			case "custom":
				ok = false // rare: the decoder reads it
			default:
				ok = !foldsTo(m.Key, "id", "type", "function", "custom")
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
		}
	}
	*calls = out
	return true
}

func scanFunction(v []byte, fn *oaFunction) bool {
	members, ok := jsonscan.Members(v)
	if !ok {
		return false
	}
	var seen uint8
	for _, m := range members {
		f := v[m.Value.Start:m.Value.End:m.Value.End]
		var bit uint8
		switch m.Key {
		case "name":
			bit, ok = 1<<0, scanString(f, &fn.Name)
		case "arguments":
			bit, fn.Arguments = 1<<1, f
		default:
			ok = !foldsTo(m.Key, "name", "arguments")
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return true
}

// rawString is the string a raw value holds, or "" when it holds
// anything else (json.Unmarshal into a string, its error ignored).
func rawString(raw []byte) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, _ := jsonscan.UnquoteShared(raw)
	return s
}

func hasText(parts []compact.Part, s string) bool {
	for _, p := range parts {
		if p.Type == compact.PartText && p.Text == s {
			return true
		}
	}
	return false
}

func openAIToolCall(c oaToolCall) *compact.ToolCall {
	tc := &compact.ToolCall{ID: c.ID}
	switch {
	case c.Function != nil:
		tc.Name, tc.Arguments = c.Function.Name, openAIArgs(c.Function.Arguments)
	case c.Custom != nil: // a custom (free-form input) tool
		tc.Name, tc.Arguments = c.Custom.Name, jsonOf(c.Custom.Input)
	}
	return tc
}

// openAIArgs reads a function's arguments: a JSON-encoded string per the
// API, or the JSON itself.
func openAIArgs(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		if s, ok := jsonscan.UnquoteShared(raw); ok {
			return argsFromString(s)
		}
	}
	return compactJSON(raw)
}

// openAIContent reads a message's content: null, a string, or an array of
// parts. Parts compact has no type for (audio, files) become a short text
// placeholder; the writer restores the original part from the source record
// while the placeholder is unchanged.
func openAIContent(raw json.RawMessage) ([]compact.Part, error) {
	return readContent(raw, "parts", func(e json.RawMessage) ([]compact.Part, error) {
		p, err := openAIPart(e)
		if p == nil || err != nil {
			return nil, err
		}
		return []compact.Part{*p}, nil
	})
}

// readContent reads message content that is null, a string or an array,
// decoding each element of an array with part; what names the elements in
// errors ("parts", "blocks"). The three API formats share this shape.
func readContent(raw json.RawMessage, what string, part func(json.RawMessage) ([]compact.Part, error)) ([]compact.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		// A record's bytes are never written again: text without escapes
		// shares them.
		s, ok := jsonscan.UnquoteShared(raw)
		if !ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, &recordError{msg: "content: invalid string", err: err}
			}
		}
		if s == "" {
			return nil, nil
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, nil
	case '[':
		// Slices of raw, not copies; the decoder says what is wrong with
		// an array that is not whole.
		spans, complete := jsonscan.Elements(raw)
		if !complete {
			var elems []jsonscan.Raw
			err := json.Unmarshal(raw, &elems)
			return nil, &recordError{msg: "content: invalid array", err: err}
		}
		var parts []compact.Part
		for i, sp := range spans {
			ps, err := part(json.RawMessage(raw[sp.Start:sp.End:sp.End]))
			if err != nil {
				return nil, &recordError{msg: fmt.Sprintf("content[%d]: %v", i, err)}
			}
			parts = append(parts, ps...)
		}
		return parts, nil
	}
	return nil, &recordError{msg: fmt.Sprintf("content: expected a string or an array of %s, got %s", what, jsonscan.Describe(raw))}
}

// openAIPart reads one content part; nil for an empty text part.
func openAIPart(raw json.RawMessage) (*compact.Part, error) {
	var p oaPart
	if i := jsonscan.SkipSpace(raw, 0); i >= len(raw) || raw[i] != '{' {
		return nil, fmt.Errorf("expected a content part object, got %s", jsonscan.Describe(raw))
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("expected a content part: %w", err)
	}
	switch p.Type {
	case "text", "input_text", "output_text":
		if p.Text == nil || *p.Text == "" {
			return nil, nil
		}
		return &compact.Part{Type: compact.PartText, Text: *p.Text}, nil
	case "image_url":
		u := imageRefURL(p.ImageURL)
		if u == "" {
			return nil, errors.New(`image_url part without a "url"`)
		}
		return &compact.Part{Type: compact.PartImage, Image: imageOfURL(u)}, nil
	case "refusal":
		if p.Refusal == "" {
			return nil, nil
		}
		return &compact.Part{Type: compact.PartText, Text: p.Refusal}, nil
	case "input_audio":
		format := "audio"
		if p.InputAudio != nil && p.InputAudio.Format != "" {
			format = p.InputAudio.Format + " audio"
		}
		return &compact.Part{Type: compact.PartText, Text: "[" + format + "]"}, nil
	case "file":
		label := "[file]"
		if p.File != nil && (p.File.Filename != "" || p.File.FileID != "") {
			label = "[file: " + firstNonEmpty(p.File.Filename, p.File.FileID) + "]"
		}
		return &compact.Part{Type: compact.PartText, Text: label}, nil
	case "":
		return nil, errors.New(`content part without a "type"`)
	}
	return &compact.Part{Type: compact.PartText, Text: "[" + p.Type + "]"}, nil
}

// imageRefURL reads an image_url value: {"url": ...} or a bare string.
func imageRefURL(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		URL string `json:"url"`
	}
	json.Unmarshal(raw, &o)
	return o.URL
}

// imageOfURL keeps a data: URL's bytes inline and any other URL as is.
func imageOfURL(u string) *compact.Image {
	if mt, data, ok := splitDataURL(u); ok {
		return &compact.Image{MediaType: mt, Data: data}
	}
	return &compact.Image{URL: u}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// decodeOpenAITools reads "tools" ({"type": "function", "function": {...}}
// or {"type": "custom", "custom": {...}}) or the deprecated "functions"
// (the function objects themselves).
func decodeOpenAITools(raw json.RawMessage) ([]compact.ToolDef, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var elems []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Function    *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
		Custom *struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"custom"`
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("expected an array of tool definitions: %w", err)
	}
	tools := make([]compact.ToolDef, 0, len(elems))
	for _, e := range elems {
		d := compact.ToolDef{Name: e.Name, Description: e.Description, Parameters: compactJSON(e.Parameters)}
		switch {
		case e.Function != nil:
			d = compact.ToolDef{Name: e.Function.Name, Description: e.Function.Description, Parameters: compactJSON(e.Function.Parameters)}
		case e.Custom != nil:
			d = compact.ToolDef{Name: e.Custom.Name, Description: e.Custom.Description}
		case d.Name == "":
			d.Name = e.Type // a built-in tool named by its type
		}
		tools = append(tools, d)
	}
	return tools, nil
}

// chatEvidence is what sniffed message records say about their dialect.
type chatEvidence struct {
	messages  int // objects with a string "role"
	others    int // records that are not
	openai    int // signs only OpenAI Chat has
	anthropic int // signs only Anthropic Messages has
	responses int // signs of Responses API items
	foreign   int // keys or roles neither API defines: an agent's own records
}

var (
	openaiOnlyRoles = map[string]bool{"system": true, "developer": true, "tool": true, "function": true}
	chatKeys        = map[string]bool{
		"role": true, "content": true, "name": true, "tool_calls": true, "tool_call_id": true,
		"function_call": true, "refusal": true, "reasoning_content": true, "reasoning": true,
		"audio": true, "annotations": true, "id": true,
		// Anthropic response objects kept as messages
		"type": true, "model": true, "stop_reason": true, "stop_sequence": true, "usage": true, "container": true,
	}
	openaiOnlyKeys  = map[string]bool{"tool_calls": true, "tool_call_id": true, "function_call": true, "refusal": true, "reasoning_content": true}
	openaiPartTypes = map[string]bool{"image_url": true, "input_audio": true, "file": true, "refusal": true}
	// Anthropic block types, beyond the generic "text" and the server tools'
	// "*_tool_result" family.
	anthropicPartTypes = map[string]bool{
		"tool_use": true, "tool_result": true, "thinking": true, "redacted_thinking": true, "image": true,
		"document": true, "search_result": true, "server_tool_use": true, "mcp_tool_use": true,
		"mcp_tool_result": true, "container_upload": true,
	}
	responsesPartTypes = map[string]bool{"input_text": true, "output_text": true, "input_image": true, "input_file": true}
)

// chatEvidenceOf weighs sniffed records as chat messages.
func chatEvidenceOf(items [][]byte) chatEvidence {
	var ev chatEvidence
	for _, it := range items {
		keys := recordKeys(it)
		_, cut := keys[cutKey]
		delete(keys, cutKey)
		var role string
		_, hasRole := keys["role"]
		// A message cut off by the head (closeCut) before its "role" (a
		// long "content" first) is a message as far as it goes.
		roleAhead := cut && !hasRole && keys["content"] != nil
		if !roleAhead && (keys == nil || json.Unmarshal(keys["role"], &role) != nil || role == "") {
			ev.others++
			continue
		}
		ev.messages++
		switch {
		case role == "":
		case openaiOnlyRoles[role]:
			ev.openai++
		case role != "user" && role != "assistant":
			ev.foreign++
		}
		if t, ok := keys["type"]; ok && string(t) != `"message"` {
			ev.foreign++
		}
		for k := range keys {
			switch {
			case !chatKeys[k]:
				ev.foreign++
			case openaiOnlyKeys[k]:
				ev.openai++
			}
		}
		var parts []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(keys["content"], &parts) != nil {
			continue
		}
		for _, p := range parts {
			switch {
			case openaiPartTypes[p.Type]:
				ev.openai++
			case anthropicPartTypes[p.Type] || strings.HasSuffix(p.Type, "_tool_result"):
				ev.anthropic++
			case responsesPartTypes[p.Type]:
				ev.responses++
			}
		}
	}
	return ev
}

// openaiRequestKeys are the fields of a Chat Completions request body; an
// object with others around "messages" is some agent's own file.
var openaiRequestKeys = map[string]bool{
	"messages": true, "model": true, "tools": true, "functions": true, "tool_choice": true,
	"function_call": true, "temperature": true, "top_p": true, "n": true, "stream": true,
	"stream_options": true, "stop": true, "max_tokens": true, "max_completion_tokens": true,
	"presence_penalty": true, "frequency_penalty": true, "logit_bias": true, "logprobs": true,
	"top_logprobs": true, "user": true, "seed": true, "response_format": true,
	"parallel_tool_calls": true, "reasoning_effort": true, "metadata": true, "store": true,
	"service_tier": true, "modalities": true, "audio": true, "prediction": true,
	"web_search_options": true, "verbosity": true, "prompt_cache_key": true, "safety_identifier": true,
}

// anthropicRequestKeys are the fields only an Anthropic Messages request has.
var anthropicRequestKeys = map[string]bool{
	"system": true, "stop_sequences": true, "top_k": true, "thinking": true,
	"anthropic_version": true, "mcp_servers": true, "container": true,
}

// chatScore turns evidence into a Sniff score for OpenAI Chat. Plain
// {role, content} messages are generic (30), so agent formats whose
// files are such arrays can outrank it by scoring their own markers higher.
func chatScore(ev chatEvidence, envelopeForeign bool) int {
	switch {
	case ev.messages == 0 || ev.others > 0 || ev.anthropic > 0 || ev.responses > 0:
		return 0
	case ev.foreign > 0 || envelopeForeign:
		return 8
	case ev.openai > 0:
		return 40
	}
	return 30
}

func sniffOpenAIChat(head []byte) int {
	sh := shapeOf(head)
	switch sh.kind {
	case '[':
		if len(sh.items) == 0 {
			if bytes.Equal(bytes.TrimSpace(bytes.TrimPrefix(head, utf8BOM)), []byte("[]")) {
				return 5 // an empty conversation
			}
			return 0
		}
		return chatScore(chatEvidenceOf(sh.items), false)
	case '{':
		msgs, ok := sh.field("messages")
		if !ok {
			return 0
		}
		foreign, anthropic := false, false
		for _, f := range sh.fields {
			switch {
			case anthropicRequestKeys[f.key]:
				anthropic = true
			case !openaiRequestKeys[f.key]:
				foreign = true
			}
		}
		items := headItems(msgs.value, sniffItems)
		if len(items) == 0 {
			return 0
		}
		ev := chatEvidenceOf(items)
		if anthropic && ev.openai == 0 {
			return 0
		}
		return chatScore(ev, foreign)
	}
	return 0
}

func sniffOpenAIChatJSONL(head []byte) int {
	sh := shapeOf(head)
	switch sh.kind {
	case 'l':
		return chatScore(chatEvidenceOf(sh.items), false)
	case '{': // a single line: one message
		role, ok := sh.field("role")
		if !ok {
			return 0
		}
		if last := sh.fields[len(sh.fields)-1]; !last.complete && role.complete && len(role.value) > 0 && role.value[0] == '"' {
			return 15 // a first line longer than the head: likely, not certain
		}
		if b := bytes.TrimSpace(bytes.TrimPrefix(head, utf8BOM)); jsonscan.Valid(b) && bytes.IndexByte(b, '\n') < 0 {
			if s := chatScore(chatEvidenceOf([][]byte{b}), false); s > 0 {
				return s - 10
			}
		}
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
