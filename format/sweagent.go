package format

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// SWE-agent saves each run as a .traj JSON document: "trajectory" (one step
// per action: action, observation, response, thought, state), "history"
// (the messages the model was sent and answered, OpenAI style), "info" and
// "environment" (and "replay_config" in newer versions). The messages are
// "history":
//
//   - role system/user/assistant/tool; content a string or a list of text
//     and image parts;
//   - function-calling runs: assistant "tool_calls" (OpenAI shape) and tool
//     messages that answer with "tool_call_ids" (a list) → ToolCallIDs;
//   - older runs carry the action in the assistant's text (no tool calls);
//     "thought", "action", "agent" and "message_type" stay in the record.
//
// The first user message that is not a demonstration is the task (the
// issue); later user-role messages are the environment's observations and
// demonstrations ("is_demo") are the harness's, so both are Synthetic.
//
// Everything else in the document (trajectory, info, environment,
// replay_config) is the transcript's Envelope, kept as read, so writing
// puts the (possibly compacted) history back into the same document.

func init() {
	register(Format{
		Name:        SWEAgent,
		Description: `SWE-agent trajectory (.traj: {"trajectory", "history", "info", ...})`,
		Sniff:       sniffSWEAgent,
		read:        readSWEAgent,
		Write:       writeSWEAgent,
	})
}

type sweMessage struct {
	Role        string       `json:"role"`
	Content     jsonscan.Raw `json:"content"`
	ToolCalls   []chatCall   `json:"tool_calls"`
	ToolCallIDs []string     `json:"tool_call_ids"`
	IsDemo      jsonscan.Raw `json:"is_demo"`
}

func sniffSWEAgent(head []byte) int {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	fields, _ := jsonscan.Members(t)
	has := func(k string) bool { return len(jsonscan.ValueOf(t, fields, k)) > 0 }
	switch {
	case has("trajectory") && has("history"):
		return 90
	case has("trajectory") && (has("environment") || has("info")):
		// history may lie beyond the head, after a long trajectory
		for _, step := range headItems(jsonscan.ValueOf(t, fields, "trajectory"), 2) {
			if jsonscan.HasKeys(step, "action", "observation") {
				return 85
			}
		}
	case has("history") && !has("trajectory"):
		// trajectory may lie beyond the head, after a long first message
		// (keys in sorted order): a history of chat messages in an object
		// of SWE-agent's keys only.
		for _, m := range fields {
			if !sweAgentKeys[m.Key] && m.Key != cutKey {
				return 0
			}
		}
		ev := chatEvidenceOf(headItems(jsonscan.ValueOf(t, fields, "history"), sniffItems))
		if ev.messages > 0 && ev.others == 0 {
			return 60
		}
	}
	return 0
}

// sweAgentKeys are the top-level fields of a SWE-agent trajectory.
var sweAgentKeys = map[string]bool{
	"trajectory": true, "history": true, "info": true, "environment": true, "replay_config": true,
}

func readSWEAgent(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	const expected = `a SWE-agent trajectory {"history": [messages], ...}`
	doc, err := readWholeDoc(r, name, SWEAgent, expected)
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.checkUTF8(doc, 0, 0); err != nil {
		return compact.Transcript{}, err
	}
	d, ok := splitList(doc, "history")
	if !ok {
		return compact.Transcript{}, &Error{File: name, Format: SWEAgent, Offset: -1, Msg: "expected " + expected}
	}
	t := compact.Transcript{Format: string(SWEAgent), Envelope: d.env}
	askSeen := false
	for i, raw := range d.elems {
		var sm sweMessage
		if raw[0] != '{' || json.Unmarshal(raw, &sm) != nil {
			t.Records = append(t.Records, compact.Record{At: len(t.Messages), Type: "invalid", Raw: raw})
			continue
		}
		parts, ok := chatParts(sm.Content)
		if !ok {
			t.Records = append(t.Records, compact.Record{At: len(t.Messages), Type: "invalid", Raw: raw})
			continue
		}
		for k := range sm.ToolCalls {
			parts = append(parts, sm.ToolCalls[k].part())
		}
		m := compact.Message{Role: compact.Role(sm.Role), Parts: parts, ToolCallIDs: sm.ToolCallIDs,
			Source: compact.Source{Records: []json.RawMessage{raw}}}
		if m.Role == compact.RoleUser {
			demo := truthy(sm.IsDemo)
			m.Synthetic = demo || askSeen
			askSeen = askSeen || !demo
			markHandoff(&m)
		}
		stampMessage(&m, SWEAgent, "swe", i)
		t.Messages = append(t.Messages, m)
	}
	return t, nil
}

// truthy reads a flag SWE-agent writes as a boolean or as a string.
func truthy(v jsonscan.Raw) bool {
	s := string(v)
	return s == "true" || s == `"true"` || s == `"True"`
}

func writeSWEAgent(w io.Writer, t compact.Transcript) error {
	ctx := sweContext(&t)
	elems := listLayout(&t, nil, func(m *compact.Message) [][]byte {
		if !mustEncode(m, SWEAgent) {
			return sourceRecords(m)
		}
		return [][]byte{ctx.encode(m)}
	})
	env := t.Envelope
	if t.Format != string(SWEAgent) || len(jsonscan.Lookup(env, "history")) == 0 {
		// What SWE-agent's own files hold around the history, so the
		// output is detected as SWE-agent.
		env = []byte(`{"trajectory":[],"history":[],"info":{}}`)
	}
	return fillList(w, env, "history", elems)
}

// sweCtx holds the fields new history entries copy from their neighbours.
type sweCtx struct {
	agent       json.RawMessage // the "agent" the entries belong to
	messageType bool            // the run labels entries with message_type
}

func sweContext(t *compact.Transcript) sweCtx {
	var c sweCtx
	for i := range t.Messages {
		if rec := baseRecord(&t.Messages[i], SWEAgent); rec != nil {
			if a := jsonscan.Lookup(rec, "agent"); a != nil && c.agent == nil {
				c.agent = json.RawMessage(a)
			}
			if len(jsonscan.Lookup(rec, "message_type")) > 0 {
				c.messageType = true
			}
		}
	}
	return c
}

// encode writes a changed or new message as a history entry. A changed
// entry keeps every field of its record but the ones the parts define.
func (c sweCtx) encode(m *compact.Message) []byte {
	calls := m.ToolCalls()
	set := map[string]json.RawMessage{}
	order := []string{"role", "content", "tool_calls", "tool_call_ids"}
	var drop []string
	if rec := baseRecord(m, SWEAgent); rec != nil {
		set["content"] = chatContentJSON(m.Parts, jsonscan.Raw(jsonscan.Lookup(rec, "content")).First() == '[')
		if len(calls) > 0 {
			set["tool_calls"] = chatToolCallsJSON(calls)
		} else {
			drop = append(drop, "tool_calls")
		}
		if len(m.ToolCallIDs) > 0 {
			set["tool_call_ids"] = jsonOf(m.ToolCallIDs)
		} else {
			drop = append(drop, "tool_call_ids")
		}
		return jsonscan.SetMembers(rec, set, order, drop...)
	}
	var o jsonObject
	o.add("role", sweRole(m.Role)).add("content", chatContentJSON(m.Parts, false))
	if c.agent != nil {
		o.add("agent", c.agent)
	}
	if c.messageType {
		o.add("message_type", sweMessageType(m))
	}
	if len(calls) > 0 {
		o.add("tool_calls", chatToolCallsJSON(calls))
	}
	if len(m.ToolCallIDs) > 0 {
		o.add("tool_call_ids", m.ToolCallIDs)
	}
	return o.bytes()
}

func sweRole(r compact.Role) string {
	switch r {
	case compact.RoleDeveloper:
		return string(compact.RoleSystem)
	case "":
		return string(compact.RoleUser)
	}
	return string(r)
}

// sweMessageType labels a new entry the way SWE-agent labels its own.
func sweMessageType(m *compact.Message) string {
	switch m.Role {
	case compact.RoleSystem, compact.RoleDeveloper:
		return "system_prompt"
	case compact.RoleAssistant:
		return "action"
	}
	return "observation"
}
