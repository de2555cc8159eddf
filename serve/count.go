package serve

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/format"
	"github.com/compactkit/compact/internal/jsonscan"
)

// A request the proxy has never seen (a new conversation, or any after a
// restart) cannot be bounded from cached counts, and its bytes bound its
// tokens only loosely: a 100 KB request to a 128K-token model is over the
// threshold by its bytes, though it holds some 25K tokens. Reading it with
// package format costs several times what counting it does, for what an
// unchanged request never needs: each message's source records,
// fingerprint and ID, kept for writing it back. So such a request is first
// counted by a pass that builds only what the token counter reads of a
// message (role, name, ToolCallIDs, the parts' text, tool calls' names and
// arguments), exactly as the API's reader builds it, for the shapes of
// Chat Completions and Responses requests whose reading it mirrors. On
// anything else it declines and the request is read in full: images,
// files, audio, a provider's compaction, server-run tools, a member it
// does not know (the reader may read it), a key given twice or in another
// case, invalid UTF-8, invalid JSON, or a model whose
// count is an estimate. TestCountUnreadMatchesReader holds it to the
// reader on every request shape of the corpus and of the generators.

// unreadCount is what the counting pass made of a request's list.
type unreadCount struct {
	// msgs are the messages of the list, with only the fields the token
	// counter reads; their strings point into the body or arena.
	msgs []compact.Message
	// groups[i] are the elements of message i, [from, to); turns[i] is
	// true when message i is an assistant turn of several items
	// (Responses).
	groups [][2]int
	turns  []bool
	arena  *[]byte
}

// arenas hold the text of escaped string literals for one pass. Nothing
// outlives the pass: the counter's cache keeps hashes, not strings.
var arenas = sync.Pool{New: func() any { return new([]byte) }}

func (uc *unreadCount) release() {
	if uc.arena != nil && cap(*uc.arena) <= maxPooledArena {
		*uc.arena = (*uc.arena)[:0]
		arenas.Put(uc.arena)
	}
	uc.arena, uc.msgs = nil, nil
}

// maxPooledArena bounds the arenas kept for reuse (a request's text).
const maxPooledArena = 4 << 20

// countMargin: once a request's bound is over the threshold, it is counted
// until it is under the threshold less 1/countMargin of it (about 11K
// tokens of gpt-4o's 89K, the next few turns of a conversation).
const countMargin = 8

// countUnread bounds the tokens of the request sh under trigger with as
// little counting as it takes, without reading it with package format: it
// builds the list's messages (see above) and bounds each by its elements'
// bounds (elemBound: a cached count, or bytes), then counts messages
// exactly, the largest bounds first, until the sum is under trigger (less
// a margin, see countMargin) or every message is counted. n is then an upper bound of what
// env.counter.Transcript would count of the reader's transcript, and
// exactly that count when exact (every message counted). A request that
// is under the threshold needs no more; one that is not was counted in
// full. ok is false when the pass declines (see above). It teaches the
// count cache what it counted, as learn does for a request read in full.
func (s *Server) countUnread(env *modelEnv, sh *shape, trigger int) (n int, exact, ok bool) {
	if !env.counter.Exact() || !countable(sh) {
		return 0, false, false
	}
	outside, ok := s.outsideCount(env, sh)
	if !ok {
		return 0, false, false
	}
	uc := unreadCount{arena: arenas.Get().(*[]byte)}
	defer uc.release()
	// Only the messages counted are built. A Chat Completions element is
	// one message; a Responses assistant turn spans the elements of its
	// items, found from their kinds.
	var message func(i int) (compact.Message, bool)
	if sh.api.format == format.OpenAIChat {
		uc.groups = make([][2]int, len(sh.elems))
		for k := range uc.groups {
			uc.groups[k] = [2]int{k, k + 1}
		}
		message = func(i int) (compact.Message, bool) { return uc.chatMessage(sh.elem(i)) }
	} else {
		if !uc.respGroups(sh) {
			return 0, false, false
		}
		message = func(i int) (compact.Message, bool) { return uc.respMessage(sh, i) }
	}
	bounds := make([]int, len(uc.groups))
	order := make([]int, len(uc.groups))
	n = outside
	for i, g := range uc.groups {
		for e := g[0]; e < g[1]; e++ {
			bounds[i] += s.elemBound(env, sh, e, 1)
		}
		n += bounds[i]
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bounds[b], bounds[a]) })
	groups := make([][2]int, 0, len(order))
	counts := make([]int, 0, len(order))
	// Counting stops with room for the conversation to grow, or each of
	// its next requests would be over by its bound and count a little.
	target := trigger - trigger/countMargin
	for _, i := range order {
		if n < target {
			break
		}
		m, ok := message(i)
		if !ok {
			return 0, false, false
		}
		c := env.counter.Message(m)
		n += c - bounds[i]
		groups, counts = append(groups, uc.groups[i]), append(counts, c)
	}
	s.remember(env, sh, groups, counts, outside)
	return n, len(counts) == len(order), true
}

// countable reports whether the pass may read sh: a request of an API it
// knows, valid JSON in valid UTF-8 (the readers replace invalid bytes with
// U+FFFD, which the pass does not). A lone surrogate escape is read as
// U+FFFD by both (jsonscan.AppendUnescaped, as Unquote).
func countable(sh *shape) bool {
	switch sh.api.format {
	case format.OpenAIChat, format.OpenAIResponses:
	default:
		return false
	}
	return sh.hasList && utf8.Valid(sh.body) && jsonscan.Valid(sh.body)
}

// build builds the messages of sh's list; false when it declines.
func (uc *unreadCount) build(sh *shape) bool {
	if sh.api.format == format.OpenAIChat {
		return uc.chat(sh)
	}
	return uc.responses(sh)
}

// outsideCount counts what lies beside the list (tool definitions, a
// system prompt outside it, the reply's priming): cached by the bytes of
// the members beside the list, or read with the API's reader from the
// request with its list emptied, which costs what those members cost.
func (s *Server) outsideCount(env *modelEnv, sh *shape) (int, bool) {
	key := s.counts.besideKey(env.salt, sh.body, sh.beside)
	if n, ok := s.counts.get(key); ok {
		return n, true
	}
	t, err := format.Read(bytes.NewReader(withList(sh.body, sh.list, nil)), "request", sh.api.format)
	if err != nil || len(t.Records) > 0 {
		return 0, false
	}
	n := env.counter.Transcript(t)
	s.counts.put(key, n)
	return n, true
}

// str returns the string the literal v stands for, as jsonscan.Unquote
// does (the body is valid UTF-8 without lone surrogates): sharing v's
// bytes when it has no escapes, in the arena otherwise.
func (uc *unreadCount) str(v []byte) (string, bool) {
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
	a := *uc.arena
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
	*uc.arena = a
	if len(a) == start {
		return "", true
	}
	return unsafe.String(&a[start], len(a)-start), true
}

// strOrNull reads a string, or null or nothing ("" then), as the
// readers' scans do.
func (uc *unreadCount) strOrNull(v []byte) (string, bool) {
	if isNull(v) {
		return "", true
	}
	return uc.str(v)
}

// fields reads the members of the object obj into vals by the position of
// their key in keys; false when obj is not an object, holds a key not in
// keys (one written with escapes included), or one twice. It allocates
// nothing: a request has a few members per element.
func fields(obj []byte, keys []string, vals [][]byte) bool {
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
		k := index(keys, obj[i+1:end-1])
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

func index[T string | []byte](keys []string, k T) int {
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
func (uc *unreadCount) args(v []byte) (json.RawMessage, bool) {
	if isNull(v) {
		return nil, true
	}
	s, ok := uc.str(v)
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
func (uc *unreadCount) textParts(v []byte, parts []compact.Part, types ...string) ([]compact.Part, bool) {
	switch {
	case isNull(v):
		return parts, true
	case v[0] == '"':
		s, ok := uc.str(v)
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
		if !fields(v[e.Start:e.End:e.End], []string{"type", "text"}, f[:]) || f[0] == nil {
			return parts, false
		}
		typ, ok := uc.str(f[0])
		if !ok || index(types, typ) < 0 {
			return parts, false
		}
		text, ok := uc.strOrNull(f[1])
		if !ok {
			return parts, false
		}
		if text != "" {
			parts = append(parts, compact.Part{Type: compact.PartText, Text: text})
		}
	}
	return parts, true
}

// chatKeys are the members of a Chat Completions message the pass reads
// (format's decodeOpenAIMessage); the last three only when null.
var chatKeys = []string{"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "id",
	"function_call", "reasoning_content", "reasoning"}

// chat builds the messages of a Chat Completions list: one per element.
func (uc *unreadCount) chat(sh *shape) bool {
	uc.msgs = make([]compact.Message, 0, len(sh.elems))
	uc.groups = make([][2]int, 0, len(sh.elems))
	for k := range sh.elems {
		m, ok := uc.chatMessage(sh.elem(k))
		if !ok {
			return false
		}
		uc.msgs = append(uc.msgs, m)
		uc.groups = append(uc.groups, [2]int{k, k + 1})
	}
	return true
}

// chatMessage builds the message of one Chat Completions element.
func (uc *unreadCount) chatMessage(elem []byte) (compact.Message, bool) {
	var m compact.Message
	var f [10][]byte
	if !fields(elem, chatKeys, f[:]) || !isNull(f[7]) || !isNull(f[8]) || !isNull(f[9]) {
		return m, false
	}
	role, ok := uc.strOrNull(f[0])
	if !ok || role == "" || role == "function" {
		return m, false
	}
	m.Role = compact.Role(role)
	if m.Name, ok = uc.strOrNull(f[2]); !ok {
		return m, false
	}
	id, ok := uc.strOrNull(f[4]) // a string whatever the role, or the reader refuses it
	if !ok {
		return m, false
	}
	if role == "tool" {
		m.ToolCallIDs = []string{id}
	}
	if m.Parts, ok = uc.textParts(f[1], nil, "text", "input_text", "output_text"); !ok {
		return m, false
	}
	refusal, ok := uc.strOrNull(f[5])
	if !ok {
		return m, false
	}
	if refusal != "" && !hasText(m.Parts, refusal) {
		m.Parts = append(m.Parts, compact.Part{Type: compact.PartText, Text: refusal})
	}
	m.Parts, ok = uc.chatCalls(f[3], m.Parts)
	return m, ok
}

// chatCalls reads a message's tool_calls: function calls only.
func (uc *unreadCount) chatCalls(v []byte, parts []compact.Part) ([]compact.Part, bool) {
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
		if !fields(v[e.Start:e.End:e.End], []string{"id", "type", "function"}, c[:]) {
			return parts, false
		}
		tc := &compact.ToolCall{}
		if tc.ID, ok = uc.strOrNull(c[0]); !ok {
			return parts, false
		}
		if _, ok = uc.strOrNull(c[1]); !ok {
			return parts, false
		}
		if !isNull(c[2]) {
			if !fields(c[2], []string{"name", "arguments"}, fn[:]) {
				return parts, false
			}
			if tc.Name, ok = uc.strOrNull(fn[0]); !ok {
				return parts, false
			}
			if tc.Arguments, ok = uc.args(fn[1]); !ok {
				return parts, false
			}
		}
		parts = append(parts, compact.Part{Type: compact.PartToolCall, ToolCall: tc})
	}
	return parts, true
}

func hasText(parts []compact.Part, s string) bool {
	for _, p := range parts {
		if p.Type == compact.PartText && p.Text == s {
			return true
		}
	}
	return false
}

// respKeys are the members of a Responses item the pass reads (format's
// respBuilder.add, for messages, function calls and their outputs, and
// reasoning).
var respKeys = []string{"type", "id", "role", "content", "call_id", "name", "arguments", "output", "status",
	"summary", "encrypted_content", "input"}

// responses builds the messages of a Responses input list: an assistant
// turn's items (its messages, reasoning and function calls) make one
// message, as the reader makes them.
func (uc *unreadCount) responses(sh *shape) bool {
	if !uc.respGroups(sh) {
		return false
	}
	uc.msgs = make([]compact.Message, len(uc.groups))
	for i := range uc.groups {
		var ok bool
		if uc.msgs[i], ok = uc.respMessage(sh, i); !ok {
			return false
		}
	}
	return true
}

// respGroups finds the elements of each message of a Responses input
// list, reading of each item only its kind.
func (uc *unreadCount) respGroups(sh *shape) bool {
	uc.groups = make([][2]int, 0, len(sh.elems))
	uc.turns = make([]bool, 0, len(sh.elems))
	open := false
	for k := range sh.elems {
		turn, ok := uc.respItem(sh.elem(k), nil)
		switch {
		case !ok:
			return false
		case turn && open:
			uc.groups[len(uc.groups)-1][1] = k + 1
			continue
		}
		open = turn
		uc.groups = append(uc.groups, [2]int{k, k + 1})
		uc.turns = append(uc.turns, turn)
	}
	return true
}

// respMessage builds message i of a Responses list whose groups are known.
func (uc *unreadCount) respMessage(sh *shape, i int) (compact.Message, bool) {
	var m compact.Message
	if uc.turns[i] {
		m.Role = compact.RoleAssistant
	}
	for k := uc.groups[i][0]; k < uc.groups[i][1]; k++ {
		if _, ok := uc.respItem(sh.elem(k), &m); !ok {
			return m, false
		}
	}
	return m, true
}

// respItem reads the Responses item elem: turn is true for an item of an
// assistant turn (its messages, reasoning, calls the client runs), false
// for one that is a message of its own; ok is false when the pass does
// not read it. With m not nil it also builds: a turn item's parts are
// added to m, an item of its own becomes *m.
func (uc *unreadCount) respItem(elem []byte, m *compact.Message) (turn, ok bool) {
	var f [12][]byte
	var str [6]string // type, id, role, call_id, name, status
	if !fields(elem, respKeys, f[:]) {
		return false, false
	}
	for i, at := range [6]int{0, 1, 2, 4, 5, 8} {
		if f[at] == nil {
			str[i] = ""
		} else if str[i], ok = uc.str(f[at]); !ok {
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
		parts, ok := uc.textParts(f[3], nil, "input_text", "output_text", "text")
		if !ok {
			return false, false
		}
		if role == "assistant" {
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
			if args, ok = uc.args(f[6]); !ok {
				return false, false
			}
		}
		if name == "" {
			name = strings.TrimSuffix(typ, "_call")
		}
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
		parts, ok := uc.textParts(f[7], nil, "input_text", "output_text", "text")
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
		// Its summary, then its content when that is a list (the reader
		// passes over any other content).
		content := f[3]
		if content != nil && content[0] != '[' {
			content = nil
		}
		for _, v := range [2][]byte{f[9], content} {
			if m.Parts, ok = uc.thinking(v, m.Parts); !ok {
				return false, false
			}
		}
		return true, true
	}
	return false, false
}

// thinking reads a reasoning item's summary or content: an array of
// {"type", "text"} objects, each text a thinking part.
func (uc *unreadCount) thinking(v []byte, parts []compact.Part) ([]compact.Part, bool) {
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
		if !fields(v[e.Start:e.End:e.End], []string{"type", "text"}, f[:]) || f[1] == nil || f[1][0] != '"' {
			return parts, false
		}
		if f[0] != nil && f[0][0] != '"' {
			return parts, false
		}
		text, ok := uc.str(f[1])
		if !ok {
			return parts, false
		}
		if text != "" {
			parts = append(parts, compact.Part{Type: compact.PartThinking, Text: text})
		}
	}
	return parts, true
}
