package format

// Helpers shared by the agent-session readers and writers (Claude Code,
// Codex, SWE-agent, mini-swe-agent, OpenHands, Gemini CLI): a small byte
// scanner that finds the spans of JSON values without decoding them, so a
// reader can keep each record's bytes as read (for byte-for-byte write-back)
// and a writer can splice new values into a record without disturbing the
// rest of it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/compactkit/compact"
)

// rawSpan captures a JSON value during json.Unmarshal without copying it:
// encoding/json hands UnmarshalJSON a slice of the input, and the readers
// only decode inputs they keep (a cloned line, or the whole document), so
// the alias stays valid for as long as the record does.
type rawSpan []byte

// UnmarshalJSON keeps a reference to b.
func (r *rawSpan) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// isNull reports whether the value is absent or JSON null.
func (r rawSpan) isNull() bool {
	return len(r) == 0 || string(r) == "null"
}

// first returns the first byte of the value ('{', '[', '"', ...), or 0.
func (r rawSpan) first() byte {
	if len(r) == 0 {
		return 0
	}
	return r[0]
}

// field is one member of a JSON object: its key and the span of its value.
type spanField struct {
	Key        string
	Start, End int // value bytes are doc[Start:End]
}

// skipSpace returns the index of the first non-whitespace byte at or after i.
func scanSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the index just past the JSON string whose opening quote
// is at b[i], or -1 when b ends first.
func scanString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// scanValue returns the index just past the JSON value that starts at b[i]
// (after optional whitespace), or -1 when b ends before the value does or
// the value is malformed. It checks structure only as far as it needs to
// find the end; callers that need validity check it with encoding/json.
func scanValue(b []byte, i int) int {
	i = scanSpace(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := scanString(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return -1
				}
				return j
			}
			j++
		}
		// A scalar running to the end of b is complete only if b is the
		// whole value; callers scanning a prefix treat it as cut short.
		return -1
	}
}

// scanObject lists the members of the JSON object at the start of b
// (after optional whitespace). complete is false when b ends before the
// object closes; the members read so far are still returned, which is what
// detection wants from a document's first bytes.
func scanObject(b []byte) (fields []spanField, complete bool) {
	i := scanSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = scanSpace(b, i)
		if i >= len(b) {
			return fields, false
		}
		if b[i] == '}' {
			return fields, true
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '"' {
			return fields, false
		}
		end := scanString(b, i)
		if end < 0 {
			return fields, false
		}
		key := scanKey(b[i:end])
		i = scanSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return fields, false
		}
		start := scanSpace(b, i+1)
		vend := scanValue(b, start)
		if vend < 0 {
			// The value is cut short: keep it open-ended (End -1) so
			// detection can still look into the start of a long list.
			fields = append(fields, spanField{Key: key, Start: start, End: -1})
			return fields, false
		}
		fields = append(fields, spanField{Key: key, Start: start, End: vend})
		i = vend
	}
}

// arrayElems returns the spans of the elements of the JSON array at the
// start of b. complete is false when b ends before the array closes.
func scanArray(b []byte) (elems [][2]int, complete bool) {
	i := scanSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	i++
	for {
		i = scanSpace(b, i)
		if i >= len(b) {
			return elems, false
		}
		switch b[i] {
		case ']':
			return elems, true
		case ',':
			i++
			continue
		}
		end := scanValue(b, i)
		if end < 0 {
			return elems, false
		}
		elems = append(elems, [2]int{i, end})
		i = end
	}
}

// decodeKey returns the string a quoted JSON key stands for.
func scanKey(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(q[1 : len(q)-1])
	}
	return s
}

// spanOf returns the value of key in fields, or nil.
//
// Keys match as encoding/json matches them to struct fields, so that the
// scanner and the decoder agree on odd input: case-insensitively, the last
// occurrence winning.
func spanOf(doc []byte, fields []spanField, key string) []byte {
	for i := len(fields) - 1; i >= 0; i-- {
		if f := fields[i]; strings.EqualFold(f.Key, key) {
			if f.End < 0 {
				return doc[f.Start:]
			}
			return doc[f.Start:f.End]
		}
	}
	return nil
}

// memberOf returns the raw value of key in the JSON object obj, or nil.
func memberOf(obj []byte, key string) []byte {
	fields, _ := scanObject(obj)
	return spanOf(obj, fields, key)
}

// memberString returns the string value of key in the JSON object obj, or ""
// when it is missing or not a string.
func memberString(obj []byte, key string) string {
	v := memberOf(obj, key)
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// withMembers returns a copy of the JSON object obj with the members in set
// replaced (or appended, in the order of order, when absent) and the
// members in drop removed. Members it does not touch keep their bytes;
// whitespace between members is normalised away, so the result is one line.
func withMembers(obj []byte, set map[string]json.RawMessage, order []string, drop ...string) []byte {
	fields, _ := scanObject(obj)
	var b bytes.Buffer
	b.Grow(len(obj) + 64)
	b.WriteByte('{')
	done := map[string]bool{}
	n := 0
	put := func(key string, val []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	for _, f := range fields {
		if slices.Contains(drop, f.Key) {
			continue
		}
		if v, ok := set[f.Key]; ok {
			put(f.Key, v)
			done[f.Key] = true
			continue
		}
		put(f.Key, obj[f.Start:f.End])
	}
	for _, k := range order {
		if v, ok := set[k]; ok && !done[k] {
			put(k, v)
			done[k] = true
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// readDocument reads a whole JSON document, checking that it is one valid
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
	if !json.Valid(doc) {
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

// splitDocument finds the array at key (or the document itself when key is
// "") and returns its elements and the envelope around it.
func splitList(doc []byte, key string) (splitDoc, bool) {
	start, end := 0, len(doc)
	if key != "" {
		fields, ok := scanObject(doc)
		if !ok {
			return splitDoc{}, false
		}
		found := false
		for _, f := range fields {
			if f.Key == key && f.End >= 0 {
				start, end, found = f.Start, f.End, true
			}
		}
		if !found {
			return splitDoc{}, false
		}
	} else {
		start = scanSpace(doc, 0)
		end = len(bytes.TrimRight(doc, " \t\r\n"))
	}
	arr := doc[start:end]
	spans, ok := scanArray(arr)
	if !ok {
		return splitDoc{}, false
	}
	d := splitDoc{elems: make([][]byte, len(spans))}
	for i, s := range spans {
		d.elems[i] = arr[s[0]:s[1]:s[1]]
	}
	lead, trail := []byte{}, []byte{}
	if len(spans) > 0 {
		lead = arr[1:spans[0][0]]
		trail = arr[spans[len(spans)-1][1] : len(arr)-1]
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

// writeDocument writes env with the placeholder array at key (or env itself
// when key is "") filled with elems, separated the way the original list
// was.
func fillList(w io.Writer, env []byte, key string, elems [][]byte) error {
	if len(env) == 0 {
		env = []byte("[]")
	}
	start, end := scanSpace(env, 0), len(bytes.TrimRight(env, " \t\r\n"))
	if key != "" {
		fields, _ := scanObject(env)
		found := false
		for _, f := range fields {
			if f.Key == key {
				start, end, found = f.Start, f.End, true
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

// argsJSON turns a call's arguments carried as a string (OpenAI style) into
// JSON: the string itself when it is valid JSON, otherwise a JSON string.
func argsFromString(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return jsonOf(s)
}

// argsString is the inverse of argsJSON, for writers whose format carries
// arguments as a string.
func argsToString(a json.RawMessage) string {
	t := bytes.TrimSpace(a)
	if len(t) == 0 {
		return "{}"
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil && !json.Valid([]byte(strings.TrimSpace(s))) {
			return s
		}
	}
	return string(t)
}

// jsonOf marshals values that cannot fail to marshal (strings, slices and
// maps of them, plain structs; it gives null if one does). It leaves <, > and & alone, as the agents
// themselves do, and writes a list of raw JSON values byte for byte
// (encoding/json would re-compact them).
func jsonOf(v any) json.RawMessage {
	if list, ok := v.([]json.RawMessage); ok {
		return rawList(list)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return json.RawMessage("null") // unreachable for the types used
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// rawList joins raw JSON values into a JSON list, keeping their bytes.
func rawList(items []json.RawMessage) json.RawMessage {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
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

// isNewOrChanged reports whether a writer must encode m itself rather than
// copy its source records.
func mustEncode(m *compact.Message, f Name) bool {
	return !m.Unchanged() || (m.Source.Format != "" && m.Source.Format != string(f))
}

// newHandoff reports whether m is a summary the writer must add itself (a
// compact handoff, as opposed to a summary read from the file).
func isNewSummary(m *compact.Message, f Name) bool {
	return m.Summary && mustEncode(m, f)
}

// markHandoff applies the rule every reader shares: a user message whose
// text is a compact handoff is a summary, never a harness note.
func markHandoff(m *compact.Message) {
	if m.Role == compact.RoleUser && compact.IsHandoffText(m.Text()) {
		m.Summary = true
		m.Synthetic = false
	}
}

// dataURL splits a data: URL into media type and base64 data.
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

// imageURL renders an image part as a URL (a data: URL for inline bytes).
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

// headLines returns up to max complete, non-blank lines at the start of
// head, for detecting JSONL formats. A last line without a newline counts
// only when it is a whole JSON value (head may end mid-record).
func headRecords(head []byte, max int) [][]byte {
	var out [][]byte
	rest := bytes.TrimPrefix(head, utf8BOM)
	for len(out) < max && len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if t := bytes.TrimSpace(rest); len(t) > 0 && json.Valid(t) {
				out = append(out, t)
			}
			break
		}
		if t := bytes.TrimSpace(rest[:i]); len(t) > 0 {
			out = append(out, t)
		}
		rest = rest[i+1:]
	}
	return out
}

// headElems returns up to max complete elements of the JSON array that
// starts v, which may be cut short.
func headItems(v []byte, max int) [][]byte {
	spans, _ := scanArray(v)
	if len(spans) > max {
		spans = spans[:max]
	}
	out := make([][]byte, len(spans))
	for i, s := range spans {
		out[i] = v[s[0]:s[1]]
	}
	return out
}

// hasKeys reports whether the JSON object obj has every key.
func hasMembers(obj []byte, keys ...string) bool {
	fields, _ := scanObject(obj)
	for _, k := range keys {
		found := false
		for _, f := range fields {
			if f.Key == k {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// layout lists a transcript's records and messages in source order:
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

// template returns m's first source record when m was read from f, to
// build a changed message on.
func baseRecord(m *compact.Message, f Name) []byte {
	if m.Source.Format != string(f) || len(m.Source.Records) == 0 {
		return nil
	}
	return m.Source.Records[0]
}

// openAIToolCalls encodes calls the way OpenAI chat messages carry them
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
		Name      string  `json:"name"`
		Arguments rawSpan `json:"arguments"`
	} `json:"function"`
}

// part returns the call as a tool-call part; arguments given as a string
// are decoded (see argsJSON).
func (c *chatCall) part() compact.Part {
	args := json.RawMessage("{}")
	switch c.Function.Arguments.first() {
	case '"':
		var s string
		if json.Unmarshal(c.Function.Arguments, &s) == nil {
			args = argsFromString(s)
		}
	case 0, 'n':
	default:
		args = json.RawMessage(c.Function.Arguments)
	}
	return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args}}
}

// chatContent reads OpenAI-style content: a string, or a list of parts
// ({"type":"text","text"} and {"type":"image_url","image_url":{"url"}}).
func chatParts(content rawSpan) ([]compact.Part, bool) {
	switch content.first() {
	case '"':
		var s string
		if json.Unmarshal(content, &s) != nil {
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
		Type     string  `json:"type"`
		Text     string  `json:"text"`
		ImageURL rawSpan `json:"image_url"`
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
			if it.ImageURL.first() == '"' {
				_ = json.Unmarshal(it.ImageURL, &u)
			} else {
				u = memberString(it.ImageURL, "url")
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
// any of it, so a string is unquoted here without being validated again:
// for tool outputs and arguments, most of a transcript's bytes, that saves
// a pass.
type jsonText struct {
	s        string
	raw      rawSpan // when not a string
	isString bool
}

// UnmarshalJSON keeps b (already validated by the caller's decoder).
func (t *jsonText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		t.s, t.isString = unquoteJSON(b), true
		return nil
	}
	t.raw = b
	return nil
}

// text is the string, or "" when the value is not one.
func (t jsonText) text() string { return t.s }

// unquoteJSON decodes a valid JSON string literal (quotes included) the way
// encoding/json does, replacing invalid UTF-8 and lone surrogates with
// U+FFFD.
func unquoteJSON(q []byte) string {
	b := q[1 : len(q)-1]
	if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b):
			i++
			switch b[i] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b[i+1:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						r2 = hex4(b[i+3:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default: // '"', '\\', '/'
				out = append(out, b[i])
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

// hex4 reads the four hex digits of a \u escape (-1 if b is short or bad).
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
