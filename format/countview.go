package format

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"unsafe"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// CountView builds, from the raw elements of an OpenAI Chat Completions
// or Responses request's list, only what a token counter reads of the
// messages the reader (Read with OpenAIChat or OpenAIResponses) makes of
// them: role, name, ToolCallIDs, the parts' text, tool calls' IDs, names
// and arguments. It skips what the reader keeps for writing a transcript
// back (source records, fingerprints, IDs), so counting a request through
// it costs a fraction of reading it. It mirrors the reader exactly on the
// shapes it reads and declines everything else, which the caller then
// reads in full: images, files, audio, a provider's compaction, server-run
// tools, a member it does not know, a key given twice or in another case,
// invalid JSON.
//
// The elements must be valid JSON in valid UTF-8, as the caller checks
// once for the whole request: the reader replaces invalid bytes with
// U+FFFD, which the view does not. The strings of the messages it builds
// share the elements' bytes, or the view's scratch for those with escapes;
// they are valid until Release and while the elements are unchanged.
type CountView struct {
	arena []byte // the text of escaped string literals
}

// countViews hold views for reuse: a request's text is unescaped into
// one, and nothing outlives the count (a counter's cache keeps hashes,
// not strings).
var countViews = sync.Pool{New: func() any { return new(CountView) }}

// maxPooledArena bounds the scratch kept for reuse (a request's text).
const maxPooledArena = 4 << 20

// NewCountView returns a view, reusing the scratch of a released one.
func NewCountView() *CountView { return countViews.Get().(*CountView) }

// Release returns cv for reuse; the messages it built are invalid after.
func (cv *CountView) Release() {
	if cap(cv.arena) <= maxPooledArena {
		cv.arena = cv.arena[:0]
		countViews.Put(cv)
	}
}

// str returns the string the literal v stands for, as jsonscan.Unquote
// does (the body is valid UTF-8 without lone surrogates): sharing v's
// bytes when it has no escapes, in the arena otherwise.
func (cv *CountView) str(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		// The body is valid JSON in valid UTF-8 (countable): a literal
		// without escapes is its bytes.
		if len(body) == 0 {
			return "", true
		}
		return unsafe.String(&body[0], len(body)), true
	}
	a := cv.arena
	start := len(a)
	for i := 0; i < len(body); {
		switch c := body[i]; {
		case c == '\\':
			var ok bool
			if a, i, ok = jsonscan.AppendUnescaped(a, body, i); !ok {
				return "", false
			}
		case c < 0x20 || c == '"':
			return "", false
		default:
			j := i + 1
			for j < len(body) && body[j] != '\\' && body[j] >= 0x20 && body[j] != '"' {
				j++
			}
			a = append(a, body[i:j]...)
			i = j
		}
	}
	cv.arena = a
	if len(a) == start {
		return "", true
	}
	return unsafe.String(&a[start], len(a)-start), true
}

// strOrNull reads a string, or null or nothing ("" then), as the
// readers' scans do.
func (cv *CountView) strOrNull(v []byte) (string, bool) {
	if isNull(v) {
		return "", true
	}
	return cv.str(v)
}

// objectMembers reads the members of the object obj into vals by the position of
// their key in keys; false when obj is not an object, holds a key not in
// keys (one written with escapes included), or one twice. It allocates
// nothing: a request has a few members per element.
func objectMembers(obj []byte, keys []string, vals [][]byte) bool {
	clear(vals)
	i := jsonscan.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	if i = jsonscan.SkipSpace(obj, i+1); i < len(obj) && obj[i] == '}' {
		return true
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false
		}
		end := jsonscan.StringEnd(obj, i)
		if end < 0 {
			return false
		}
		k := keyAt(keys, obj[i+1:end-1])
		if k < 0 || vals[k] != nil {
			return false
		}
		if i = jsonscan.SkipSpace(obj, end); i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := jsonscan.SkipSpace(obj, i+1)
		vend := jsonscan.ValueEnd(obj, start)
		if vend < 0 {
			return false
		}
		vals[k] = obj[start:vend:vend]
		if i = jsonscan.SkipSpace(obj, vend); i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = jsonscan.SkipSpace(obj, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
}

func keyAt[T string | []byte](keys []string, k T) int {
	for i, s := range keys {
		if s == string(k) {
			return i
		}
	}
	return -1
}

func isNull(v []byte) bool { return v == nil || string(v) == "null" }

// args reads a function's arguments given as a string, as the readers do
// (format's argsFromString): the trimmed string when it is JSON, the
// string encoded as JSON when it is not. Arguments that are not a string
// decline.
func (cv *CountView) args(v []byte) (json.RawMessage, bool) {
	if isNull(v) {
		return nil, true
	}
	s, ok := cv.str(v)
	if !ok {
		return nil, false
	}
	t := strings.TrimSpace(s)
	if t == "" || !jsonscan.Valid(t) {
		b, err := jsonscan.Marshal(s)
		return b, err == nil
	}
	return unsafe.Slice(unsafe.StringData(t), len(t)), true
}

// textParts reads content that is null, a string or an array of text
// parts ({"type", "text"} of the given types), as the readers'
// readContent does; extra are keys a part may hold that the reader
// ignores.
func (cv *CountView) textParts(v []byte, parts []compact.Part, types ...string) ([]compact.Part, bool) {
	switch {
	case isNull(v):
		return parts, true
	case v[0] == '"':
		s, ok := cv.str(v)
		if ok && s != "" {
			parts = append(parts, compact.Part{Type: compact.PartText, Text: s})
		}
		return parts, ok
	case v[0] != '[':
		return parts, false
	}
	elems, ok := jsonscan.Elements(v)
	if !ok {
		return parts, false
	}
	var f [2][]byte
	for _, e := range elems {
		if !objectMembers(v[e.Start:e.End:e.End], []string{"type", "text"}, f[:]) || f[0] == nil {
			return parts, false
		}
		typ, ok := cv.str(f[0])
		if !ok || keyAt(types, typ) < 0 {
			return parts, false
		}
		text, ok := cv.strOrNull(f[1])
		if !ok {
			return parts, false
		}
		if text != "" {
			parts = append(parts, compact.Part{Type: compact.PartText, Text: text})
		}
	}
	return parts, true
}

// chatCountKeys are the members of a Chat Completions message the view reads
// (format's decodeOpenAIMessage); the last three only when null.
var chatCountKeys = []string{"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "id",
	"function_call", "reasoning_content", "reasoning"}

// ChatMessage builds, from elem, one element of a Chat Completions
// request's messages, what the token counter reads of the message the
// reader makes of it; ok is false when the view declines it (see
// CountView).
func (cv *CountView) ChatMessage(elem []byte) (compact.Message, bool) {
	var m compact.Message
	var f [10][]byte
	if !objectMembers(elem, chatCountKeys, f[:]) || !isNull(f[7]) || !isNull(f[8]) || !isNull(f[9]) {
		return m, false
	}
	role, ok := cv.strOrNull(f[0])
	if !ok || role == "" || role == "function" {
		return m, false
	}
	m.Role = compact.Role(role)
	if m.Name, ok = cv.strOrNull(f[2]); !ok {
		return m, false
	}
	id, ok := cv.strOrNull(f[4]) // a string whatever the role, or the reader refuses it
	if !ok {
		return m, false
	}
	if role == "tool" {
		m.ToolCallIDs = []string{id}
	}
	if m.Parts, ok = cv.textParts(f[1], nil, "text", "input_text", "output_text"); !ok {
		return m, false
	}
	refusal, ok := cv.strOrNull(f[5])
	if !ok {
		return m, false
	}
	if refusal != "" && !hasText(m.Parts, refusal) {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: refusal})
	}
	m.Parts, ok = cv.chatCalls(f[3], m.Parts)
	return m, ok
}

// chatCalls reads a message's tool_calls: function calls only.
func (cv *CountView) chatCalls(v []byte, parts []compact.Part) ([]compact.Part, bool) {
	if isNull(v) {
		return parts, true
	}
	if v[0] != '[' {
		return parts, false
	}
	elems, ok := jsonscan.Elements(v)
	if !ok {
		return parts, false
	}
	var c [3][]byte
	var fn [2][]byte
	for _, e := range elems {
		if !objectMembers(v[e.Start:e.End:e.End], []string{"id", "type", "function"}, c[:]) {
			return parts, false
		}
		tc := &compact.ToolCall{}
		if tc.ID, ok = cv.strOrNull(c[0]); !ok {
			return parts, false
		}
		if _, ok = cv.strOrNull(c[1]); !ok {
			return parts, false
		}
		if !isNull(c[2]) {
			if !objectMembers(c[2], []string{"name", "arguments"}, fn[:]) {
				return parts, false
			}
			if tc.Name, ok = cv.strOrNull(fn[0]); !ok {
				return parts, false
			}
			if tc.Arguments, ok = cv.args(fn[1]); !ok {
				return parts, false
			}
		}
		parts = append(parts, compact.Part{Type: compact.PartToolCall, ToolCall: tc})
	}
	return parts, true
}

// respCountKeys are the members of a Responses item the view reads (format's
// respBuilder.add, for messages, function calls and their outputs, and
// reasoning).
var respCountKeys = []string{"type", "id", "role", "content", "call_id", "name", "arguments", "output", "status",
	"summary", "encrypted_content", "input"}

// ResponsesItem reads elem, one item of a Responses request's input:
// turn is true for an item of an assistant turn (its messages, reasoning,
// calls the client runs), which the reader joins with the turn's other
// items into one assistant message, false for an item that is a message
// of its own; ok is false when the view declines it (see CountView).
// With m nil it only classifies elem, cheaply. With m not nil it also
// builds: a turn item's parts are added to m (an assistant message), an
// item of its own becomes *m.
func (cv *CountView) ResponsesItem(elem []byte, m *compact.Message) (turn, ok bool) {
	var f [12][]byte
	var str [6]string // type, id, role, call_id, name, status
	if !objectMembers(elem, respCountKeys, f[:]) {
		return false, false
	}
	for i, at := range [6]int{0, 1, 2, 4, 5, 8} {
		if f[at] == nil {
			str[i] = ""
		} else if str[i], ok = cv.str(f[at]); !ok {
			return false, false // null or another type: the decoder's business
		}
	}
	typ, role, callID, name := str[0], str[2], str[3], str[4]
	if typ == "" && role != "" {
		typ = "message"
	}
	switch {
	case typ == "message" && f[4] == nil && f[5] == nil && f[6] == nil && f[7] == nil && f[9] == nil && f[10] == nil && f[11] == nil:
		if role == "" {
			return false, false
		}
		if m == nil {
			return role == "assistant", true
		}
		parts, ok := cv.textParts(f[3], nil, "input_text", "output_text", "text")
		if !ok {
			return false, false
		}
		if role == "assistant" {
			m.Role = compact.RoleAssistant
			m.Parts = append(m.Parts, parts...)
			return true, true
		}
		*m = compact.Message{Role: compact.Role(role), Parts: parts}
		return false, true
	case (typ == "function_call" || typ == "custom_tool_call") && callID != "" &&
		f[2] == nil && f[3] == nil && f[7] == nil && f[9] == nil && f[10] == nil && (f[6] == nil) != (f[11] == nil):
		// Run by the client: a function's arguments are a string (of
		// JSON, mostly); a custom tool's input is free-form text, kept
		// as its JSON literal (format's compactJSON of a string).
		if f[11] != nil && f[11][0] != '"' {
			return false, false
		}
		if m == nil {
			return true, true
		}
		args := json.RawMessage(f[11])
		if f[6] != nil {
			if args, ok = cv.args(f[6]); !ok {
				return false, false
			}
		}
		if name == "" {
			name = strings.TrimSuffix(typ, "_call")
		}
		m.Role = compact.RoleAssistant
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: callID, Name: name, Arguments: args}})
		return true, true
	case strings.HasSuffix(typ, "_call_output") && f[2] == nil && f[3] == nil && f[5] == nil && f[6] == nil &&
		f[9] == nil && f[10] == nil && f[11] == nil:
		if m == nil {
			return false, true
		}
		id := callID
		if id == "" {
			id = str[1]
		}
		parts, ok := cv.textParts(f[7], nil, "input_text", "output_text", "text")
		if !ok {
			return false, false
		}
		*m = compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{id}, Parts: parts}
		return false, true
	case typ == "reasoning" && f[2] == nil && f[4] == nil && f[5] == nil && f[6] == nil && f[7] == nil &&
		f[11] == nil && (isNull(f[10]) || f[10][0] == '"'):
		if m == nil {
			return true, true
		}
		m.Role = compact.RoleAssistant
		// Its summary, then its content when that is a list (the reader
		// passes over any other content).
		content := f[3]
		if content != nil && content[0] != '[' {
			content = nil
		}
		for _, v := range [2][]byte{f[9], content} {
			if m.Parts, ok = cv.thinking(v, m.Parts); !ok {
				return false, false
			}
		}
		return true, true
	}
	return false, false
}

// thinking reads a reasoning item's summary or content: an array of
// {"type", "text"} objects, each text a thinking part.
func (cv *CountView) thinking(v []byte, parts []compact.Part) ([]compact.Part, bool) {
	if v == nil {
		return parts, true
	}
	if v[0] != '[' {
		return parts, false
	}
	elems, ok := jsonscan.Elements(v)
	if !ok {
		return parts, false
	}
	var f [2][]byte
	for _, e := range elems {
		if !objectMembers(v[e.Start:e.End:e.End], []string{"type", "text"}, f[:]) || f[1] == nil || f[1][0] != '"' {
			return parts, false
		}
		if f[0] != nil && f[0][0] != '"' {
			return parts, false
		}
		text, ok := cv.str(f[1])
		if !ok {
			return parts, false
		}
		if text != "" {
			parts = append(parts, compact.Part{Type: compact.PartThinking, Text: text})
		}
	}
	return parts, true
}
