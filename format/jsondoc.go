package format

// Helpers shared by the agent-session readers and writers (Claude Code,
// Codex, SWE-agent, mini-swe-agent, OpenHands, Gemini CLI): whole JSON
// documents split around their message list and filled again, the ids and
// fingerprints of messages read, and the OpenAI-style pieces several agents
// store. The JSON itself is scanned by internal/jsonscan, so a reader keeps
// each record's bytes as read (for byte-for-byte write-back) and a writer
// splices new values into a record without disturbing the rest of it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// readWholeDoc reads a whole JSON document, checking that it is one valid
// JSON value. A malformed document gives an *Error with the byte offset.
func readWholeDoc(r io.Reader, file string, f Name, expected string) ([]byte, error) {
	doc, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	doc = bytes.TrimPrefix(doc, utf8BOM)
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, &Error{File: file, Format: f, Offset: -1, Msg: "empty input, expected " + expected}
	}
	if !jsonscan.Valid(doc) {
		// Only the error path pays for a full decode: it yields the offset.
		var v any
		derr := json.Unmarshal(doc, &v)
		if derr == nil {
			derr = errors.New("invalid JSON")
		}
		return nil, jsonError(file, f, 0, derr, expected)
	}
	return doc, nil
}

// splitDoc is a JSON document whose message list has been taken out: the
// envelope is the document with the list replaced by a placeholder array
// that keeps the list's leading and trailing whitespace, so writing the
// elements back reproduces the original layout.
type splitDoc struct {
	elems [][]byte // the list's elements, as read
	env   []byte   // the envelope (nil when the document is the list itself)
}

// splitList finds the array at key (or the document itself when key is
// "") and returns its elements and the envelope around it.
func splitList(doc []byte, key string) (splitDoc, bool) {
	start, end := 0, len(doc)
	if key != "" {
		members, ok := jsonscan.Members(doc)
		if !ok {
			return splitDoc{}, false
		}
		found := false
		for _, m := range members {
			if m.Key == key && m.Value.End >= 0 {
				start, end, found = m.Value.Start, m.Value.End, true
			}
		}
		if !found {
			return splitDoc{}, false
		}
	} else {
		start = jsonscan.SkipSpace(doc, 0)
		end = len(bytes.TrimRight(doc, " \t\r\n"))
	}
	arr := doc[start:end]
	spans, ok := jsonscan.Elements(arr)
	if !ok {
		return splitDoc{}, false
	}
	d := splitDoc{elems: make([][]byte, len(spans))}
	for i, s := range spans {
		d.elems[i] = arr[s.Start:s.End:s.End]
	}
	lead, trail := []byte{}, []byte{}
	if len(spans) > 0 {
		lead = arr[1:spans[0].Start]
		trail = arr[spans[len(spans)-1].End : len(arr)-1]
	}
	env := make([]byte, 0, len(doc)-len(arr)+len(lead)+len(trail)+2)
	env = append(env, doc[:start]...)
	env = append(env, '[')
	env = append(env, lead...)
	env = append(env, trail...)
	env = append(env, ']')
	env = append(env, doc[end:]...)
	d.env = env
	return d, true
}

// fillList writes env with the placeholder array at key (or env itself
// when key is "") filled with elems, separated the way the original list
// was.
func fillList(w io.Writer, env []byte, key string, elems [][]byte) error {
	if len(env) == 0 {
		env = []byte("[]")
	}
	start, end := jsonscan.SkipSpace(env, 0), len(bytes.TrimRight(env, " \t\r\n"))
	if key != "" {
		members, _ := jsonscan.Members(env)
		found := false
		for _, m := range members {
			if m.Key == key && m.Value.End >= 0 {
				start, end, found = m.Value.Start, m.Value.End, true
			}
		}
		if !found {
			return fmt.Errorf("envelope has no %q list", key)
		}
	}
	ph := env[start:end]
	if len(ph) < 2 || ph[0] != '[' {
		return fmt.Errorf("envelope %q is not a list", key)
	}
	inner := ph[1 : len(ph)-1]
	lead, trail := inner, []byte(nil)
	if k := bytes.LastIndexByte(inner, '\n'); k > 0 {
		lead, trail = inner[:k], inner[k:]
	}
	bw := &stickyWriter{w: w}
	bw.Write(env[:start])
	bw.Write([]byte{'['})
	for i, e := range elems {
		if i > 0 {
			bw.Write([]byte{','})
		}
		bw.Write(lead)
		bw.Write(e)
	}
	if len(elems) > 0 {
		bw.Write(trail)
	}
	bw.Write([]byte{']'})
	bw.Write(env[end:])
	return bw.err
}

// stickyWriter remembers the first write error so a writer can emit many
// pieces and check once.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (e *stickyWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// writeLine writes one JSONL record and its newline.
func (e *stickyWriter) writeLine(rec []byte) {
	e.Write(rec)
	e.Write([]byte{'\n'})
}

// argsFromString turns a call's arguments carried as a string (OpenAI
// style) into ToolCall.Arguments: the JSON the string holds, its bytes as
// they are, or the string itself as a JSON string when it holds no JSON (a
// custom tool's free-form input).
func argsFromString(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t != "" && jsonscan.Valid(t) {
		return json.RawMessage(t)
	}
	return jsonOf(s)
}

// argsToString is the inverse of argsFromString, for writers whose format
// carries arguments as a string.
func argsToString(a json.RawMessage) string {
	t := bytes.TrimSpace(a)
	if len(t) == 0 {
		return "{}"
	}
	if t[0] == '"' {
		if s, ok := jsonscan.Unquote(t); ok && !jsonscan.Valid([]byte(strings.TrimSpace(s))) {
			return s
		}
	}
	return string(t)
}

// jsonOf encodes one of the writers' own values: strings, numbers, maps
// and slices of them, the writers' structs, and raw JSON (Write checks a
// transcript's raw JSON before any writer runs, see checkRawJSON). It leaves
// <, > and & alone, as the agents themselves do, and writes a list of raw
// JSON values byte for byte (encoding/json would compact them). Encoding
// such a value cannot fail; should it ever, the value is written as null
// rather than the writer stopping half way.
func jsonOf(v any) json.RawMessage {
	if list, ok := v.([]json.RawMessage); ok {
		return jsonscan.JoinArray(list)
	}
	b, err := jsonscan.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// stampMessage stamps a message read from f: its source format and
// fingerprint, and an ID derived from its position and content when the
// source has none. pos is the message's position in the source (a line
// number, an array index).
func stampMessage(m *compact.Message, f Name, prefix string, pos int) {
	m.Source.Format = string(f)
	fp := m.Fingerprint()
	m.Source.Fingerprint = fp
	if m.ID == "" {
		m.ID = fmt.Sprintf("%s%d-%s", prefix, pos, fp[:8])
	}
}

// mustEncode reports whether a writer must encode m itself rather than
// copy its source records.
func mustEncode(m *compact.Message, f Name) bool {
	return !m.Unchanged() || (m.Source.Format != "" && m.Source.Format != string(f))
}

// isNewSummary reports whether m is a summary the writer must add itself (a
// compact handoff, as opposed to a summary read from the file).
func isNewSummary(m *compact.Message, f Name) bool {
	return m.Summary && mustEncode(m, f)
}

// markHandoff applies the rule every reader shares: a user message whose
// text is a compact handoff is a summary, never a harness note.
func markHandoff(m *compact.Message) {
	if IsHandoff(m) {
		m.Summary = true
		m.Synthetic = false
	}
}

// IsHandoff reports whether m is a handoff compact wrote: a user message
// of text alone (no call, no result) whose whole text is one handoff, from
// compact.HandoffBegin and the preamble to the end marker
// (compact.IsHandoffMessage). A tool output or a message that merely opens
// with the marker (a fetched page, pasted text) is not one, so it is never
// folded as compact's own summary. The signature is the compactor's to
// check (compact.VerifyHandoff): a reader has no key.
func IsHandoff(m *compact.Message) bool {
	return compact.IsHandoffMessage(m)
}

// splitDataURL splits a data: URL into media type and base64 data.
func splitDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mt, isB64 := strings.CutSuffix(meta, ";base64")
	if !isB64 {
		return "", "", false
	}
	return mt, payload, true
}

// imageAsURL renders an image as a URL where only URLs fit: its own, or a
// data: URL of its inline bytes.
func imageAsURL(img *compact.Image) string {
	if img == nil {
		return ""
	}
	if img.Data != "" {
		return "data:" + img.MediaType + ";base64," + img.Data
	}
	return img.URL
}

// imageFromURL makes an image part from a URL, splitting data: URLs.
func imageFromURL(u string) *compact.Image {
	if mt, data, ok := splitDataURL(u); ok {
		return &compact.Image{MediaType: mt, Data: data}
	}
	return &compact.Image{URL: u}
}

// headRecords returns up to max complete, non-blank lines at the start of
// head that are whole JSON values, for detecting JSONL formats (head may
// end mid-record; a damaged line is passed over).
func headRecords(head []byte, max int) [][]byte {
	var out [][]byte
	rest := bytes.TrimPrefix(head, utf8BOM)
	for len(out) < max && len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && jsonscan.Valid(t) {
			out = append(out, t)
		}
	}
	return out
}

// headItems returns up to max complete elements of the JSON array that
// starts v, which may be cut short.
func headItems(v []byte, max int) [][]byte {
	spans, _ := jsonscan.Elements(v)
	if len(spans) > max {
		spans = spans[:max]
	}
	out := make([][]byte, len(spans))
	for i, s := range spans {
		out[i] = v[s.Start:s.End]
	}
	return out
}

// listLayout lists a transcript's records and messages in source order:
// records where they stood (by At), and each message as encode returns it
// (usually its source records when unchanged, new elements otherwise).
// Records for which skip returns true are left out.
func listLayout(t *compact.Transcript, skip func(*compact.Record) bool, encode func(*compact.Message) [][]byte) [][]byte {
	records := make([]*compact.Record, 0, len(t.Records))
	for i := range t.Records {
		if skip == nil || !skip(&t.Records[i]) {
			records = append(records, &t.Records[i])
		}
	}
	sortByAt(records)
	out := make([][]byte, 0, len(t.Messages)+len(records))
	r := 0
	for i := range t.Messages {
		for ; r < len(records) && records[r].At <= i; r++ {
			out = append(out, records[r].Raw)
		}
		out = append(out, encode(&t.Messages[i])...)
	}
	for ; r < len(records); r++ {
		out = append(out, records[r].Raw)
	}
	return out
}

func sortByAt(records []*compact.Record) {
	// Insertion sort: stable, and records arrive nearly sorted.
	for i := 1; i < len(records); i++ {
		for j := i; j > 0 && records[j].At < records[j-1].At; j-- {
			records[j], records[j-1] = records[j-1], records[j]
		}
	}
}

// sourceRecords returns m's records as they were read.
func sourceRecords(m *compact.Message) [][]byte {
	out := make([][]byte, len(m.Source.Records))
	for i, r := range m.Source.Records {
		out[i] = r
	}
	return out
}

// baseRecord returns m's first source record when m was read from f, to
// build a changed message on.
func baseRecord(m *compact.Message, f Name) []byte {
	if m.Source.Format != string(f) || len(m.Source.Records) == 0 {
		return nil
	}
	return m.Source.Records[0]
}

// chatToolCallsJSON encodes calls the way OpenAI chat messages carry them
// (SWE-agent and mini-swe-agent store them so).
func chatToolCallsJSON(calls []compact.ToolCall) json.RawMessage {
	out := make([]json.RawMessage, 0, len(calls))
	for _, c := range calls {
		var fn, o jsonObject
		fn.add("name", c.Name).add("arguments", argsToString(c.Arguments))
		o.add("id", c.ID).add("type", "function").add("function", json.RawMessage(fn.bytes()))
		out = append(out, o.bytes())
	}
	return jsonOf(out)
}

// chatCall is a tool call as OpenAI chat messages carry it.
type chatCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string       `json:"name"`
		Arguments jsonscan.Raw `json:"arguments"`
	} `json:"function"`
}

// part returns the call as a tool-call part; arguments given as a string
// are decoded (see argsFromString).
func (c *chatCall) part() compact.Part {
	args := json.RawMessage("{}")
	switch c.Function.Arguments.First() {
	case '"':
		if s, ok := c.Function.Arguments.Unquote(); ok {
			args = argsFromString(s)
		}
	case 0, 'n':
	default:
		args = json.RawMessage(c.Function.Arguments)
	}
	return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args}}
}

// chatParts reads OpenAI-style content: a string, or a list of parts
// ({"type":"text","text"} and {"type":"image_url","image_url":{"url"}}).
func chatParts(content jsonscan.Raw) ([]compact.Part, bool) {
	switch content.First() {
	case '"':
		s, ok := content.Unquote()
		if !ok {
			return nil, false
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, true
	case 0, 'n':
		return nil, true
	case '[':
	default:
		return nil, false
	}
	var items []struct {
		Type     string       `json:"type"`
		Text     string       `json:"text"`
		ImageURL jsonscan.Raw `json:"image_url"`
	}
	if json.Unmarshal(content, &items) != nil {
		return nil, false
	}
	var parts []compact.Part
	for _, it := range items {
		switch it.Type {
		case "text", "input_text", "output_text":
			parts = append(parts, compact.Part{Type: compact.PartText, Text: it.Text})
		case "image_url", "input_image":
			u := ""
			if it.ImageURL.First() == '"' {
				u, _ = it.ImageURL.Unquote()
			} else {
				u = jsonscan.LookupString(it.ImageURL, "url")
			}
			parts = append(parts, compact.Part{Type: compact.PartImage, Image: imageFromURL(u)})
		}
	}
	return parts, true
}

// chatContentJSON encodes text and image parts as OpenAI-style content: a
// string when wantList is false and the parts are one text, a list
// otherwise.
func chatContentJSON(parts []compact.Part, wantList bool) json.RawMessage {
	var texts []compact.Part
	images := false
	for _, p := range parts {
		switch p.Type {
		case compact.PartText:
			texts = append(texts, p)
		case compact.PartImage:
			images = true
		}
	}
	if !wantList && !images && len(texts) <= 1 {
		if len(texts) == 0 {
			return jsonOf("")
		}
		return jsonOf(texts[0].Text)
	}
	out := []json.RawMessage{}
	for _, p := range parts {
		switch p.Type {
		case compact.PartText:
			out = append(out, jsonOf(map[string]string{"type": "text", "text": p.Text}))
		case compact.PartImage:
			out = append(out, jsonOf(map[string]any{"type": "image_url", "image_url": map[string]string{"url": imageAsURL(p.Image)}}))
		}
	}
	return jsonOf(out)
}

// jsonText is a JSON value read as text: a string's contents, or the JSON
// of anything else. encoding/json validates a whole input before decoding
// any of it, so a string is unquoted here by jsonscan in one pass: for tool
// outputs and arguments, most of a transcript's bytes, that saves the
// reflection and the copies of decoding into a string field.
type jsonText struct {
	s        string
	raw      jsonscan.Raw // when not a string
	isString bool
}

// UnmarshalJSON unquotes a string and keeps anything else as it is.
func (t *jsonText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		t.s, t.isString = jsonscan.Unquote(b)
		return nil
	}
	t.raw = b
	return nil
}

// text is the string, or "" when the value is not one.
func (t jsonText) text() string { return t.s }

// wrongType is the decoder's error for a field whose value v has another
// type than want: readers that keep a field raw and read it by its shape
// report a value of no shape they read this way, naming the field, rather
// than read it as empty.
func wrongType(field string, v []byte, want reflect.Type) error {
	kind := strings.TrimPrefix(strings.TrimPrefix(jsonscan.Describe(v), "an "), "a ")
	return &json.UnmarshalTypeError{Value: kind, Type: want, Field: field}
}
