package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// This file holds what the writers share: which source records a writer may
// reuse, ids for calls that have none, the encoding of arguments, and the
// layout of the JSON they emit.

// family groups formats whose message records are interchangeable: OpenAI
// Chat JSON and JSONL hold the same message objects.
func family(name string) string {
	switch Name(name) {
	case OpenAIChat, OpenAIChatJSONL:
		return string(OpenAIChat)
	}
	return name
}

// sameFamily reports whether a message read in format from can be written
// in format to from its source records.
func sameFamily(from string, to Name) bool {
	return from != "" && family(from) == family(string(to))
}

// keepSource sets m's Source and, when the source gave none, a stable ID
// derived from the message's position and content.
func keepSource(m *compact.Message, f Name, index int, id string, records ...json.RawMessage) {
	fp := m.Fingerprint()
	m.Source = compact.Source{Format: string(f), Records: records, Fingerprint: fp}
	if id == "" {
		id = string(f) + "-" + strconv.Itoa(index) + "-" + fp[:12]
	}
	m.ID = id
}

// fillCallIDs returns msgs with an id for every tool call that has none,
// and the same id on the result that answers it. Results are matched to
// id-less calls as Transcript.ToolGroups matches them: the next id-less
// result after the call. With legacy set, a message making a single id-less
// call keeps it id-less (OpenAI's function_call needs no id). Messages are
// copied before they are changed; unchanged ones are shared. names maps the
// index of each message answering an id-less call to the call's name.
func fillCallIDs(msgs []compact.Message, legacy bool) (out []compact.Message, names map[int]string) {
	taken := map[string]bool{}
	anyless := false
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Type == compact.PartToolCall && p.ToolCall != nil {
				taken[p.ToolCall.ID] = true
				anyless = anyless || p.ToolCall.ID == ""
			}
		}
	}
	if !anyless {
		return msgs, nil
	}
	type pending struct{ id, name string }
	var queue []pending
	out = msgs
	cloned := map[int]bool{}
	own := func(i int) *compact.Message {
		if len(cloned) == 0 {
			out = append([]compact.Message(nil), msgs...)
		}
		if !cloned[i] {
			out[i] = msgs[i].Clone()
			cloned[i] = true
		}
		return &out[i]
	}
	names = map[int]string{}
	for i := range msgs {
		m := &msgs[i]
		calls := m.ToolCalls()
		for k, p := range m.Parts {
			if p.Type != compact.PartToolCall || p.ToolCall == nil || p.ToolCall.ID != "" {
				continue
			}
			id := ""
			if !legacy || len(calls) > 1 {
				for n := 0; ; n++ {
					id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(k)
					if n > 0 {
						id += "_" + strconv.Itoa(n)
					}
					if !taken[id] {
						break
					}
				}
				taken[id] = true
				own(i).Parts[k].ToolCall.ID = id
			}
			queue = append(queue, pending{id, p.ToolCall.Name})
		}
		// The id-less results of one message are one answer (ResultIDs lists
		// an id once): they all take the id of the oldest waiting call.
		idless := slices.Contains(m.ToolCallIDs, "")
		for _, p := range m.Parts {
			idless = idless || p.Type == compact.PartToolResult && p.CallID == ""
		}
		if !idless || len(queue) == 0 {
			continue
		}
		q := queue[0]
		queue = queue[1:]
		names[i] = q.name
		if q.id == "" {
			continue
		}
		mm := own(i)
		for k, id := range mm.ToolCallIDs {
			if id == "" {
				mm.ToolCallIDs[k] = q.id
			}
		}
		for k, p := range mm.Parts {
			if p.Type == compact.PartToolResult && p.CallID == "" {
				mm.Parts[k].CallID = q.id
			}
		}
	}
	return out, names
}

// uniqueIDs returns ids without repeats, in order: a result answering the
// same call twice is one answer.
func uniqueIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// compactJSON returns raw without insignificant spaces, or raw itself when it
// is not valid JSON.
func compactJSON(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if !spaceOutsideStrings(raw) {
		// Already compact (or invalid, which is kept as it is too).
		return append(json.RawMessage(nil), raw...)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// spaceOutsideStrings reports whether raw may hold whitespace that
// json.Compact removes: outside string literals, or after a literal that
// does not close.
func spaceOutsideStrings(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			return true
		case '"':
			end := jsonscan.StringEnd(raw, i)
			if end < 0 {
				return true
			}
			i = end - 1
		}
	}
	return false
}

// argsObject returns the arguments as the JSON object Anthropic's tool_use
// input must be: the arguments themselves when they are an object, {} when
// there are none, and {"input": value} for anything else (a free-form
// string from a custom tool).
func argsObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return json.RawMessage("{}")
	case raw[0] == '{' && jsonscan.Valid(raw):
		return raw
	}
	if !jsonscan.Valid(raw) {
		raw = jsonOf(string(raw))
	}
	return json.RawMessage(`{"input":` + string(raw) + `}`)
}

// unit is one piece of a message as a writer emits it: a single part, or a
// run of tool-result parts answering the same call (one result block).
type unit struct {
	parts []compact.Part
}

func (u unit) isResult() bool { return u.parts[0].Type == compact.PartToolResult }

// units groups parts into units.
func units(parts []compact.Part) []unit {
	var out []unit
	for i := 0; i < len(parts); {
		j := i + 1
		if parts[i].Type == compact.PartToolResult {
			for j < len(parts) && parts[j].Type == compact.PartToolResult && parts[j].CallID == parts[i].CallID {
				j++
			}
		}
		out = append(out, unit{parts: parts[i:j]})
		i = j
	}
	return out
}

// partsKey identifies a list of parts by content, to find the source block
// a part was read from.
func partsKey(parts []compact.Part) string {
	return compact.Message{Parts: parts}.Fingerprint()
}

// rawPool holds a message's source blocks by the parts they decode to, so
// an encoder can emit a block as read (keeping fields compact does not model:
// signatures, cache_control, citations, audio data) when its part is
// unchanged.
type rawPool map[string][]json.RawMessage

func (p rawPool) add(parts []compact.Part, raw json.RawMessage) {
	if len(parts) > 0 {
		k := partsKey(parts)
		p[k] = append(p[k], raw)
	}
}

// take returns and removes a source block that decodes to parts.
func (p rawPool) take(parts []compact.Part) (json.RawMessage, bool) {
	if len(p) == 0 {
		return nil, false
	}
	k := partsKey(parts)
	if q := p[k]; len(q) > 0 {
		p[k] = q[1:]
		return q[0], true
	}
	return nil, false
}

// outField is one top-level field of a document a writer emits.
type outField struct {
	key   string
	value json.RawMessage   // a ready value, or
	list  []json.RawMessage // a list written one record per line
}

// writeObject writes fields as a JSON object, one field per line and the
// records of a list one per line, so that records (reused byte for byte)
// stand on their own lines.
func writeObject(w io.Writer, fields []outField) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n")
	for i, f := range fields {
		bw.Write(jsonOf(f.key))
		bw.WriteString(": ")
		if f.value != nil {
			bw.Write(f.value)
		} else {
			writeList(bw, f.list)
		}
		if i < len(fields)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// writeArray writes records as a JSON array, one record per line.
func writeArray(w io.Writer, records []json.RawMessage) error {
	bw := bufio.NewWriter(w)
	writeList(bw, records)
	bw.WriteByte('\n')
	return bw.Flush()
}

func writeList(bw *bufio.Writer, records []json.RawMessage) {
	if len(records) == 0 {
		bw.WriteString("[]")
		return
	}
	bw.WriteString("[\n")
	for i, r := range records {
		bw.Write(r)
		if i < len(records)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteByte(']')
}

// envelopeFields returns the fields of a transcript's Envelope in order, or
// nil when it is not a JSON object.
func envelopeFields(env json.RawMessage) []outField {
	if len(env) == 0 {
		return nil
	}
	var out []outField
	for _, f := range fieldsOf(env) {
		if !f.complete {
			return nil
		}
		out = append(out, outField{key: f.key, value: json.RawMessage(f.value)})
	}
	return out
}

// buildEnvelope returns the document's fields as a JSON object, each list
// key's value replaced by placeholder (its records are the messages).
func buildEnvelope(fields []docField, placeholder map[string]string) json.RawMessage {
	if len(fields) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonOf(f.key))
		b.WriteByte(':')
		if p, ok := placeholder[f.key]; ok {
			b.WriteString(p)
		} else {
			b.Write(f.value)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// keepThinking reports whether thinking read in format from may be written
// in format to: only back into its own format, since no API accepts another's
// reasoning (Anthropic requires its signatures; OpenAI's reasoning_content
// is an extension of OpenAI-compatible servers).
func keepThinking(t *compact.Transcript, m *compact.Message, to Name) bool {
	return sameFamily(m.Source.Format, to) || m.Source.Format == "" && sameFamily(t.Format, to)
}

// segKind says what a segment of a planned message is.
type segKind int

const (
	segOwn    segKind = iota // the message's own text and images, in its role
	segCalls                 // an assistant turn: calls (and, in an assistant message, its text and thinking)
	segResult                // one tool result
)

// segment is a piece of a message as the writers emit it: formats that give
// each result its own message (OpenAI) or put results in a user message
// (Anthropic) split a message holding calls and results into segments.
type segment struct {
	kind  segKind
	units []unit // segOwn, segCalls
	// segResult: the call answered, the answer's text and image parts, and
	// the result unit it came from (nil for a message answering by
	// ToolCallIDs, whose content is the message's own).
	id      string
	content []compact.Part
	isError bool
	from    *unit
}

// plan splits m into segments in an order that keeps every pair: results of
// earlier calls first, then the message's own content, then its calls, then
// the results answering those calls. An assistant message keeps its order
// (Gemini CLI and Anthropic's server tools put each call's result right
// after it), except that a result never precedes its call.
func plan(m *compact.Message) []segment {
	all := units(m.Parts)
	callAt := map[string]int{} // call id -> unit index, for calls in m
	for i, u := range all {
		if p := u.parts[0]; p.Type == compact.PartToolCall && p.ToolCall != nil {
			if _, dup := callAt[p.ToolCall.ID]; !dup {
				callAt[p.ToolCall.ID] = i
			}
		}
	}
	result := func(u *unit) segment {
		s := segment{kind: segResult, id: u.parts[0].CallID, isError: u.parts[0].IsError, from: u}
		for _, p := range u.parts {
			switch {
			case p.Image != nil:
				s.content = append(s.content, compact.Part{Type: compact.PartImage, Image: p.Image})
			case p.Text != "":
				s.content = append(s.content, compact.Part{Type: compact.PartText, Text: p.Text})
			}
		}
		return s
	}
	var own, calls []unit
	var before, after []segment
	for i := range all {
		u := &all[i]
		switch p := u.parts[0]; {
		case u.isResult():
			if _, ok := callAt[p.CallID]; ok {
				after = append(after, result(u))
			} else {
				before = append(before, result(u))
			}
		case p.Type == compact.PartToolCall:
			calls = append(calls, *u)
		default:
			own = append(own, *u)
		}
	}
	if len(m.ToolCallIDs) > 0 {
		// A tool's answer by id: the message's text and images are the answer.
		var content []compact.Part
		for _, u := range own {
			if p := u.parts[0]; p.Type == compact.PartText || p.Type == compact.PartImage {
				content = append(content, p)
			}
		}
		ids := uniqueIDs(m.ToolCallIDs)
		var byID []segment
		for k, id := range ids {
			s := segment{kind: segResult, id: id, content: content}
			if k > 0 {
				s.content = []compact.Part{{Type: compact.PartText, Text: "(the result is given above, with call " + ids[0] + ")"}}
			}
			if _, ok := callAt[id]; ok {
				after = append(after, s)
			} else {
				byID = append(byID, s)
			}
		}
		var out []segment
		out = append(out, byID...)
		out = append(out, before...)
		if thinking := thinkingUnits(own); len(calls) > 0 || len(thinking) > 0 {
			out = append(out, segment{kind: segCalls, units: append(thinking, calls...)})
		}
		return append(out, after...)
	}
	if m.Role != compact.RoleAssistant {
		out := before
		if len(own) > 0 {
			out = append(out, segment{kind: segOwn, units: own})
		}
		if len(calls) > 0 {
			out = append(out, segment{kind: segCalls, units: calls})
		}
		return append(out, after...)
	}
	// An assistant message, in order.
	var out []segment
	var chunk []unit
	var pending []segment // results whose call comes later in the message
	emitted := map[string]bool{}
	flush := func() {
		if len(chunk) == 0 {
			return
		}
		out = append(out, segment{kind: segCalls, units: chunk})
		for _, u := range chunk {
			if p := u.parts[0]; p.Type == compact.PartToolCall && p.ToolCall != nil {
				emitted[p.ToolCall.ID] = true
			}
		}
		chunk = nil
		rest := pending[:0:0]
		for _, s := range pending {
			if emitted[s.id] {
				out = append(out, s)
			} else {
				rest = append(rest, s)
			}
		}
		pending = rest
	}
	for i := range all {
		u := &all[i]
		if !u.isResult() {
			chunk = append(chunk, *u)
			continue
		}
		s := result(u)
		if at, ok := callAt[s.id]; ok && at > i && !emitted[s.id] {
			pending = append(pending, s)
			continue
		}
		flush() // the result follows the calls gathered so far
		out = append(out, s)
	}
	flush()
	return append(out, pending...)
}

// thinkingUnits returns the thinking units of us.
func thinkingUnits(us []unit) []unit {
	var out []unit
	for _, u := range us {
		if u.parts[0].Type == compact.PartThinking {
			out = append(out, u)
		}
	}
	return out
}
