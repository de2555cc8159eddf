package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// OpenHands V1 (the software-agent-sdk) records a conversation as typed
// events, each with a "kind": one JSON file per event, gathered as JSON
// lines (a conversation's events.jsonl), or as the "history" of an
// evaluation-output instance. They map onto messages as the SDK's own
// LLM view of the events builds them:
//
//   - SystemPromptEvent is the system message; MessageEvent a user or agent
//     message (llm_message: role, content, reasoning_content);
//   - ActionEvent is an assistant tool call (tool_call: id, name, the
//     arguments string), its thought the text before the call and its
//     reasoning_content a thinking part; the actions of one model response
//     (llm_response_id) are one message;
//   - ObservationEvent (observation.content, or .output in older events),
//     AgentErrorEvent and UserRejectObservation answer a call by its
//     tool_call_id, as tool messages; an observation with is_error, a
//     non-zero exit_code or an agent error is Failed;
//   - Condensation (the SDK's own compaction) forgets the events it names:
//     their messages become records, and its summary (or a
//     CondensationSummaryEvent's) is a Summary message;
//   - the other events (state updates, pauses, condensation requests) are
//     records of their kind; an event of a kind the reader does not know is
//     kept as a record with a warning.

// ohV1Event is the part of a V1 event the reader looks at.
type ohV1Event struct {
	Kind          string          `json:"kind"`
	ID            string          `json:"id"`
	Source        string          `json:"source"`
	LLMMessage    *ohV1LLMMessage `json:"llm_message"`
	SystemPrompt  jsonscan.Raw    `json:"system_prompt"`
	Thought       jsonscan.Raw    `json:"thought"`
	Reasoning     string          `json:"reasoning_content"`
	Action        jsonscan.Raw    `json:"action"`
	ToolName      string          `json:"tool_name"`
	ToolCallID    string          `json:"tool_call_id"`
	ToolCall      *ohV1ToolCall   `json:"tool_call"`
	ResponseID    string          `json:"llm_response_id"`
	Observation   jsonscan.Raw    `json:"observation"`
	Error         string          `json:"error"`
	Rejection     string          `json:"rejection_reason"`
	Forgotten     []string        `json:"forgotten_event_ids"`
	Summary       *string         `json:"summary"`
	SummaryOffset *int            `json:"summary_offset"`
}

type ohV1LLMMessage struct {
	Role      string       `json:"role"`
	Content   jsonscan.Raw `json:"content"`
	Reasoning string       `json:"reasoning_content"`
}

type ohV1ToolCall struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Arguments jsonscan.Raw `json:"arguments"`
}

// ohV1Kinds are the event kinds read as messages or known bookkeeping.
var ohV1Kinds = map[string]bool{
	"SystemPromptEvent": true, "MessageEvent": true, "ActionEvent": true, "ObservationEvent": true,
	"AgentErrorEvent": true, "UserRejectObservation": true, "Condensation": true,
	"CondensationSummaryEvent": true, "CondensationRequest": true, "ConversationStateUpdateEvent": true,
	"PauseEvent": true, "ConversationErrorEvent": true, "TokenEvent": true, "LLMCompletionLogEvent": true,
}

// ohIsV1 reports whether an event is a V1 event: an object whose "kind"
// names an event class.
func ohIsV1(raw []byte) bool {
	k := jsonscan.LookupString(raw, "kind")
	return ohV1Kinds[k] || strings.HasSuffix(k, "Event") || strings.HasSuffix(k, "Observation")
}

// ohV1Reader turns V1 events into messages and records.
type ohV1Reader struct {
	rs   *readState
	t    compact.Transcript
	pfx  string
	open string         // llm_response_id of the assistant message still open
	ids  map[string]int // event id -> message index, for condensations
}

func ohV1Events(elems [][]byte, pfx string, rs *readState, line int) (compact.Transcript, error) {
	o := ohV1Reader{rs: rs, pfx: pfx, ids: map[string]int{}, t: compact.Transcript{Format: string(OpenHands)}}
	for i, raw := range elems {
		if err := o.add(raw, i, line); err != nil {
			return compact.Transcript{}, err
		}
	}
	return o.t, nil
}

func (o *ohV1Reader) record(kind string, raw []byte) {
	o.open = ""
	// The conversation's state updates are what it continues from.
	state := kind == "ConversationStateUpdateEvent"
	o.t.Records = append(o.t.Records, compact.Record{At: len(o.t.Messages), Type: kind, Raw: raw, State: state})
}

func (o *ohV1Reader) push(m compact.Message, raw []byte, idx int, id, openID string) {
	m.Source.Records = []json.RawMessage{raw}
	markHandoff(&m)
	stampMessage(&m, OpenHands, o.pfx, idx)
	if id != "" {
		o.ids[id] = len(o.t.Messages)
	}
	o.t.Messages = append(o.t.Messages, m)
	o.open = openID
}

// add reads one event. line is the line of the file the event is on (the
// instance's line for an evaluation output), for errors.
func (o *ohV1Reader) add(raw []byte, idx, line int) error {
	var e ohV1Event
	if len(raw) == 0 || raw[0] != '{' {
		o.rs.unreadRecord(line, "invalid", "an event that is not a JSON object")
		o.record("invalid", raw)
		return nil
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("event %d: %w", idx, err)
	}
	if err := ohV1Types(&e); err != nil {
		return fmt.Errorf("event %d: %w", idx, err)
	}
	switch e.Kind {
	case "SystemPromptEvent":
		text := ohV1Text(e.SystemPrompt)
		o.push(compact.Message{Role: compact.RoleSystem, Parts: []compact.Part{{Type: compact.PartText, Text: text}}}, raw, idx, e.ID, "")
	case "MessageEvent":
		if e.LLMMessage == nil {
			return fmt.Errorf("event %d: a MessageEvent without llm_message", idx)
		}
		role := compact.Role(e.LLMMessage.Role)
		if role == "" {
			role = compact.RoleUser
			if e.Source == "agent" {
				role = compact.RoleAssistant
			}
		}
		var parts []compact.Part
		if e.LLMMessage.Reasoning != "" {
			parts = append(parts, compact.Part{Type: compact.PartThinking, Text: e.LLMMessage.Reasoning})
		}
		if text := ohV1Text(e.LLMMessage.Content); text != "" {
			parts = append(parts, compact.Part{Type: compact.PartText, Text: text})
		}
		o.push(compact.Message{Role: role, Parts: parts}, raw, idx, e.ID, "")
	case "ActionEvent":
		o.action(&e, raw, idx)
	case "ObservationEvent", "AgentErrorEvent", "UserRejectObservation":
		text, failed := ohV1Result(&e)
		if e.ToolCallID == "" {
			// An error not tied to a call: the harness reports it.
			o.push(compact.Message{Role: compact.RoleUser, Synthetic: true,
				Parts: []compact.Part{{Type: compact.PartText, Text: text}}}, raw, idx, e.ID, "")
			return nil
		}
		o.push(compact.Message{Role: compact.RoleTool, ToolCallIDs: []string{e.ToolCallID},
			Parts: []compact.Part{{Type: compact.PartText, Text: text, Failed: failed}}}, raw, idx, e.ID, "")
	case "Condensation":
		o.condense(&e, raw, idx)
	case "CondensationSummaryEvent":
		if e.Summary == nil {
			o.record(e.Kind, raw)
			return nil
		}
		o.push(compact.Message{Role: compact.RoleUser, Summary: true,
			Parts: []compact.Part{{Type: compact.PartText, Text: *e.Summary}}}, raw, idx, e.ID, "")
	default:
		if !ohV1Kinds[e.Kind] {
			o.rs.unreadRecord(line, e.Kind, "an event kind this reader does not know")
		}
		o.record(cmpOr(e.Kind, "unknown"), raw)
	}
	return nil
}

// ohV1Types checks that the raw fields an event's kind is read from have
// the shapes the SDK writes (an observation or action object, text as a
// string or a list of text items), so that none is read as empty.
func ohV1Types(e *ohV1Event) error {
	check := func(field string, v jsonscan.Raw, shapes string, want reflect.Type) error {
		if c := v.First(); c == 0 || c == 'n' || strings.IndexByte(shapes, c) >= 0 {
			return nil
		}
		return wrongType(field, v, want)
	}
	object, text := reflect.TypeFor[map[string]any](), reflect.TypeFor[string]()
	switch e.Kind {
	case "ObservationEvent":
		return check("observation", e.Observation, "{", object)
	case "ActionEvent":
		return errors.Join(check("action", e.Action, "{", object), check("thought", e.Thought, `"[`, text))
	case "MessageEvent":
		if e.LLMMessage != nil {
			return check("llm_message.content", e.LLMMessage.Content, `"[`, text)
		}
	case "SystemPromptEvent":
		return check("system_prompt", e.SystemPrompt, `"[{`, text)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// action adds an agent's tool call, joining the open assistant message
// when it came from the same model response.
func (o *ohV1Reader) action(e *ohV1Event, raw []byte, idx int) {
	var parts []compact.Part
	if e.Reasoning != "" {
		parts = append(parts, compact.Part{Type: compact.PartThinking, Text: e.Reasoning})
	}
	if th := ohV1Text(e.Thought); th != "" {
		parts = append(parts, compact.Part{Type: compact.PartText, Text: th})
	}
	id, name, args := e.ToolCallID, e.ToolName, json.RawMessage(nil)
	if tc := e.ToolCall; tc != nil {
		id, name = cmpOr(tc.ID, id), cmpOr(tc.Name, name)
		if s, ok := tc.Arguments.Unquote(); ok {
			args = argsFromString(s)
		} else if !tc.Arguments.IsNull() {
			args = json.RawMessage(tc.Arguments)
		}
	}
	if args == nil {
		args = ohV1ActionArgs(e.Action)
	}
	parts = append(parts, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: args}})
	if e.ResponseID != "" && e.ResponseID == o.open && len(o.t.Messages) > 0 {
		last := &o.t.Messages[len(o.t.Messages)-1]
		last.Parts = append(last.Parts, parts...)
		last.Source.Records = append(last.Source.Records, raw)
		last.Source.Fingerprint = last.Fingerprint()
		o.ids[e.ID] = len(o.t.Messages) - 1
		return
	}
	o.push(compact.Message{Role: compact.RoleAssistant, Parts: parts}, raw, idx, e.ID, e.ResponseID)
}

// ohV1ActionArgs is an action's own fields (less its kind), for an event
// that carries no tool_call.
func ohV1ActionArgs(action jsonscan.Raw) json.RawMessage {
	if action.First() != '{' {
		return json.RawMessage("{}")
	}
	return jsonscan.SetMembers(action, nil, nil, "kind")
}

// condense applies a Condensation: the messages of the events it forgets
// become records, and its summary a Summary message.
func (o *ohV1Reader) condense(e *ohV1Event, raw []byte, idx int) {
	forget := map[int]bool{}
	for _, id := range e.Forgotten {
		if k, ok := o.ids[id]; ok {
			forget[k] = true
		}
	}
	if len(forget) > 0 {
		msgs, recs := o.t.Messages, o.t.Records
		o.t.Messages, o.t.Records = nil, nil
		o.ids = map[string]int{}
		r := 0
		for i := range msgs {
			for ; r < len(recs) && recs[r].At <= i; r++ {
				recs[r].At = len(o.t.Messages)
				o.t.Records = append(o.t.Records, recs[r])
			}
			if forget[i] {
				for _, src := range msgs[i].Source.Records {
					o.t.Records = append(o.t.Records, compact.Record{At: len(o.t.Messages), Type: jsonscan.LookupString(src, "kind"), Raw: src})
				}
				continue
			}
			for _, src := range msgs[i].Source.Records {
				if id := jsonscan.LookupString(src, "id"); id != "" {
					o.ids[id] = len(o.t.Messages)
				}
			}
			o.t.Messages = append(o.t.Messages, msgs[i])
		}
		for ; r < len(recs); r++ {
			recs[r].At = len(o.t.Messages)
			o.t.Records = append(o.t.Records, recs[r])
		}
	}
	if e.Summary == nil || *e.Summary == "" {
		o.t.Records = append(o.t.Records, compact.Record{At: len(o.t.Messages), Type: e.Kind, Raw: raw, Marker: true})
		o.open = ""
		return
	}
	o.push(compact.Message{Role: compact.RoleUser, Summary: true,
		Parts: []compact.Part{{Type: compact.PartText, Text: *e.Summary}}}, raw, idx, e.ID, "")
}

// ohV1Text reads text content: a string, a TextContent object, or a list
// of them (other content, images, is left out).
func ohV1Text(raw jsonscan.Raw) string {
	switch raw.First() {
	case '"':
		s, _ := raw.Unquote()
		return s
	case '{':
		return jsonscan.LookupString(raw, "text")
	case '[':
		var texts []string
		for _, e := range headItems(raw, 1<<30) {
			if s := ohV1Text(e); s != "" {
				texts = append(texts, s)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

// ohV1Result is the text of an observation, an agent error or a
// rejection, and whether it failed.
func ohV1Result(e *ohV1Event) (string, bool) {
	switch e.Kind {
	case "AgentErrorEvent":
		return e.Error, true
	case "UserRejectObservation":
		return cmpOr(e.Rejection, "the user rejected the action"), true
	}
	obs := e.Observation
	text := ohV1Text(jsonscan.Raw(jsonscan.Lookup(obs, "content")))
	if text == "" {
		text = jsonscan.LookupString(obs, "output")
	}
	if text == "" {
		text = jsonscan.LookupString(obs, "text")
	}
	if text == "" && obs.First() == '{' {
		text = string(obs)
	}
	failed := string(jsonscan.Lookup(obs, "is_error")) == "true" || jsonscan.LookupString(obs, "error") != "" ||
		strings.HasPrefix(text, ohErrorPrefix)
	code := jsonscan.Lookup(obs, "exit_code")
	if string(code) == "null" || len(code) == 0 {
		code = jsonscan.Lookup(jsonscan.Lookup(obs, "metadata"), "exit_code")
	}
	if n := strings.TrimSpace(string(code)); n != "" && n != "null" && n != "0" && n != "-1" {
		failed = true
	}
	return text, failed
}

// readOpenHandsV1Events reads a V1 conversation's events as JSON lines.
func readOpenHandsV1Events(br *bufio.Reader, rs *readState) (compact.Transcript, error) {
	o := ohV1Reader{rs: rs, pfx: "oh", ids: map[string]int{}, t: compact.Transcript{Format: string(OpenHands)}}
	n := 0
	err := rs.lines(br, func(line []byte, ln int) error {
		if !jsonscan.Valid(line) {
			var v any
			return jsonError(rs.name, OpenHands, ln, json.Unmarshal(line, &v), "an OpenHands V1 event")
		}
		if err := o.add(bytes.Clone(line), n, ln); err != nil {
			return jsonError(rs.name, OpenHands, ln, err, "an OpenHands V1 event")
		}
		n++
		return nil
	})
	if err != nil {
		return compact.Transcript{}, err
	}
	return o.t, nil
}

// ohIsV1Lines reports whether the input is V1 events as JSON lines: its
// first line is a V1 event, not an evaluation instance.
func ohIsV1Lines(br *bufio.Reader) bool {
	head, _ := br.Peek(br.Size())
	head = bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	end := jsonscan.ValueEnd(head, 0)
	if end < 0 {
		if nl := bytes.IndexByte(head, '\n'); nl > 0 {
			end = nl
		} else {
			return false
		}
	}
	first := head[:end]
	return len(jsonscan.Lookup(first, "history")) == 0 && ohIsV1(first)
}

// Writing V1 events: a changed or new message becomes the events the SDK
// would have recorded for it.

// ohV1Layout reports whether t was read from V1 events.
func ohV1Layout(t *compact.Transcript) bool {
	if t.Format != string(OpenHands) {
		return false
	}
	for i := range t.Messages {
		if m := &t.Messages[i]; m.Source.Format == string(OpenHands) && len(m.Source.Records) > 0 {
			return ohIsV1(m.Source.Records[0])
		}
	}
	for _, r := range t.Records {
		if r.Type != ohInstance {
			return ohIsV1(r.Raw)
		}
	}
	return false
}

// ohV1Encode returns the events of m: its own when unchanged.
func (e *ohEncoder) v1(m *compact.Message) [][]byte {
	if !mustEncode(m, OpenHands) {
		return sourceRecords(m)
	}
	var out [][]byte
	event := func(kind, source string, fields ...any) {
		var o jsonObject
		o.add("id", fmt.Sprintf("compact-%d", e.id())).add("timestamp", e.ts).add("source", source)
		for i := 0; i+1 < len(fields); i += 2 {
			o.add(fields[i].(string), fields[i+1])
		}
		o.add("kind", kind)
		out = append(out, o.bytes())
	}
	textContent := func(s string) json.RawMessage {
		var c jsonObject
		c.add("type", "text").add("text", s)
		return jsonOf([]json.RawMessage{c.bytes()})
	}
	switch {
	case m.Role == compact.RoleSystem:
		var c jsonObject
		c.add("type", "text").add("text", m.Text())
		event("SystemPromptEvent", "agent", "system_prompt", json.RawMessage(c.bytes()), "tools", json.RawMessage("[]"))
	case len(m.ResultIDs()) > 0:
		for _, id := range m.ResultIDs() {
			text, failed := "", false
			for _, p := range m.Parts {
				if p.Type == compact.PartToolResult && p.CallID == id || len(m.ToolCallIDs) > 0 && p.Type == compact.PartText {
					text += p.Text
					failed = failed || p.IsError || p.Failed
				}
			}
			var obs jsonObject
			obs.add("content", textContent(text)).add("is_error", failed).add("kind", "TextObservation")
			event("ObservationEvent", "environment", "tool_name", "", "tool_call_id", id, "observation", json.RawMessage(obs.bytes()))
		}
	case len(m.ToolCalls()) > 0:
		thought := m.Text()
		resp := fmt.Sprintf("compact-response-%d", e.id())
		for i, tc := range m.ToolCalls() {
			var call jsonObject
			call.add("id", tc.ID).add("name", tc.Name).add("arguments", argsToString(tc.Arguments))
			th := json.RawMessage("[]")
			if i == 0 && thought != "" {
				th = textContent(thought)
			}
			event("ActionEvent", "agent", "thought", th, "action", json.RawMessage(`{"kind":"ActionEvent"}`),
				"tool_name", tc.Name, "tool_call_id", tc.ID, "tool_call", json.RawMessage(call.bytes()), "llm_response_id", resp)
		}
	default:
		role, source := string(m.Role), "user"
		if m.Role == compact.RoleAssistant {
			source = "agent"
		}
		if role == "" || m.Role == compact.RoleTool {
			role = string(compact.RoleUser)
		}
		var msg jsonObject
		msg.add("role", role).add("content", textContent(m.Text()))
		event("MessageEvent", source, "llm_message", json.RawMessage(msg.bytes()), "activated_skills", json.RawMessage("[]"), "extended_content", json.RawMessage("[]"))
	}
	return out
}
