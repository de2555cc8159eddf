package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// mini-swe-agent saves a run as <instance>.traj.json: {"info",
// "messages", "trajectory_format", "instance_id"}, where "messages" are
// OpenAI chat messages with mini-swe-agent's additions:
//
//   - "reasoning_content" (reasoning models) → a thinking part before the
//     text;
//   - assistant "tool_calls" and tool messages with "tool_call_id";
//   - "extra" (the raw model response, the parsed actions, the command's
//     raw output), kept in the record;
//   - user messages that are its own templates (a command's observation,
//     "<returncode>…</returncode><output>…</output>", a format error, a
//     timeout; see harnessMarkers) are Synthetic;
//   - a final message of role "exit", written after the run ends, whose
//     content is the submission or the error. The model never sees it, and
//     it answers no call. It is read as a Synthetic user message named
//     "exit" (Message.Name), so it never passes for the person's ask, and
//     a changed one is written back with role "exit".
//
// Older runs (and its test data) store the bare list of messages. Such a
// list is detected as mini-swe-agent only when something marks it as such
// (an "extra" field or an "exit" message); otherwise it is plain OpenAI
// chat and the OpenAI reader takes it.
//
// The rest of the document is the transcript's Envelope.

func init() {
	register(Format{
		Name:        MiniSWEAgent,
		Description: `mini-swe-agent trajectory (.traj.json: {"info", "messages"}, or its bare message list)`,
		Sniff:       sniffMiniSWE,
		read:        readMiniSWE,
		Write:       writeMiniSWE,
	})
}

const miniExitRole = "exit"

type miniMessage struct {
	Role             string       `json:"role"`
	Content          jsonscan.Raw `json:"content"`
	ReasoningContent string       `json:"reasoning_content"`
	ToolCalls        []chatCall   `json:"tool_calls"`
	ToolCallID       string       `json:"tool_call_id"`
	Name             string       `json:"name"`
}

func sniffMiniSWE(head []byte) int {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	if t[0] == '[' {
		// Only what tells it apart from a plain OpenAI list.
		for _, m := range headItems(t, 64) {
			if jsonscan.HasKeys(m, "role") && (jsonscan.HasKeys(m, "extra") || jsonscan.LookupString(m, "role") == miniExitRole) {
				return 70
			}
		}
		return 0
	}
	fields, _ := jsonscan.Members(t)
	has := func(k string) bool { return len(jsonscan.ValueOf(t, fields, k)) > 0 }
	if !has("messages") {
		return 0
	}
	var tf string
	_ = json.Unmarshal(jsonscan.ValueOf(t, fields, "trajectory_format"), &tf)
	switch {
	case bytes.HasPrefix([]byte(tf), []byte("mini-swe-agent")):
		return 95
	case has("info"):
		for _, m := range headItems(jsonscan.ValueOf(t, fields, "messages"), 2) {
			if jsonscan.HasKeys(m, "role") {
				return 85
			}
		}
	}
	return 0
}

func readMiniSWE(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	const expected = `a mini-swe-agent trajectory {"info", "messages": [...]} or a list of messages`
	doc, err := readWholeDoc(r, name, MiniSWEAgent, expected)
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.checkUTF8(doc, 0, 0); err != nil {
		return compact.Transcript{}, err
	}
	key := "messages"
	if doc[jsonscan.SkipSpace(doc, 0)] == '[' {
		key = ""
	}
	d, ok := splitList(doc, key)
	if !ok {
		return compact.Transcript{}, &Error{File: name, Format: MiniSWEAgent, Offset: -1, Msg: "expected " + expected}
	}
	t := compact.Transcript{Format: string(MiniSWEAgent), Envelope: d.env}
	for i, raw := range d.elems {
		m, why := miniRead(raw)
		if why != "" {
			rs.unreadRecord(0, "invalid", fmt.Sprintf("messages[%d]: %s", i, why))
			t.Records = append(t.Records, compact.Record{At: len(t.Messages), Type: "invalid", Raw: raw})
			continue
		}
		stampMessage(&m, MiniSWEAgent, "mini", i)
		t.Messages = append(t.Messages, m)
	}
	return t, nil
}

// miniContentFields are the fields of a message that carry what it says.
var miniContentFields = []string{"content", "reasoning_content", "tool_calls"}

// miniRead reads one message record; why says why a record is not read
// as a message.
func miniRead(raw []byte) (m compact.Message, why string) {
	var mm miniMessage
	if raw[0] != '{' {
		return m, "not a message object"
	}
	if err := json.Unmarshal(raw, &mm); err != nil {
		return m, err.Error()
	}
	if mm.Content == nil && mm.ToolCalls == nil && mm.ReasoningContent == "" {
		if other := unknownContent(raw, miniContentFields...); other != nil {
			// Read empty, its text would be lost without a word.
			return m, noContentWhy(other, miniContentFields...)
		}
	}
	parts, ok := chatParts(mm.Content)
	if !ok {
		return m, fmt.Sprintf("its content is %s, not a text or a list of parts", jsonscan.Describe(mm.Content))
	}
	if len(parts) == 0 && mm.ToolCalls == nil && mm.ReasoningContent == "" && mm.Content.First() == '[' {
		if elems, _ := jsonscan.Elements(mm.Content); len(elems) > 0 {
			// Another agent's blocks (tool_use, tool_result, ...): read
			// empty, what they say would be lost without a word.
			return m, fmt.Sprintf("none of its %d content parts is of a type this reader reads (text, image_url)", len(elems))
		}
	}
	if mm.ReasoningContent != "" {
		parts = append([]compact.Part{{Type: compact.PartThinking, Text: mm.ReasoningContent}}, parts...)
	}
	for k := range mm.ToolCalls {
		parts = append(parts, mm.ToolCalls[k].part())
	}
	m = compact.Message{Role: compact.Role(mm.Role), Name: mm.Name, Parts: parts,
		Source: compact.Source{Records: []json.RawMessage{raw}}}
	if mm.ToolCallID != "" {
		m.ToolCallIDs = []string{mm.ToolCallID}
	}
	switch {
	case mm.Role == miniExitRole:
		m.Role, m.Name, m.Synthetic = compact.RoleUser, miniExitRole, true
	case m.Role == compact.RoleUser && len(m.ToolCallIDs) == 0:
		// Observations and format errors ride in the user role.
		m.Synthetic = harnessOnly(parts)
	}
	markHandoff(&m)
	return m, ""
}

func writeMiniSWE(w io.Writer, t compact.Transcript) error {
	elems := listLayout(&t, nil, func(m *compact.Message) [][]byte {
		if !mustEncode(m, MiniSWEAgent) {
			return sourceRecords(m)
		}
		return [][]byte{miniEncode(m)}
	})
	env := t.Envelope
	key := "messages"
	switch {
	case t.Format != string(MiniSWEAgent) || len(env) == 0:
		// What mini-swe-agent writes around its messages, so the output
		// is detected as mini-swe-agent.
		env = []byte(`{"trajectory_format":"mini-swe-agent-1","info":{},"messages":[]}`)
	case env[jsonscan.SkipSpace(env, 0)] == '[':
		key = ""
	}
	return fillList(w, env, key, elems)
}

// miniEncode writes a changed or new message; a changed one keeps every
// field of its record ("extra" included) but the ones the parts define.
func miniEncode(m *compact.Message) []byte {
	role := string(m.Role)
	switch {
	case m.Name == miniExitRole && m.Synthetic:
		role = miniExitRole
	case m.Role == "":
		role = string(compact.RoleUser)
	}
	var rest []compact.Part
	reasoning := ""
	for _, p := range m.Parts {
		if p.Type == compact.PartThinking {
			if reasoning != "" {
				reasoning += "\n"
			}
			reasoning += p.Text
			continue
		}
		rest = append(rest, p)
	}
	calls := m.ToolCalls()
	set := map[string]json.RawMessage{"role": jsonOf(role)}
	order := []string{"role", "content", "reasoning_content", "tool_calls", "tool_call_id"}
	var drop []string
	rec := baseRecord(m, MiniSWEAgent)
	set["content"] = chatContentJSON(rest, jsonscan.Raw(jsonscan.Lookup(rec, "content")).First() == '[')
	if reasoning != "" {
		set["reasoning_content"] = jsonOf(reasoning)
	} else {
		drop = append(drop, "reasoning_content")
	}
	if len(calls) > 0 {
		set["tool_calls"] = chatToolCallsJSON(calls)
	} else if rec == nil || string(jsonscan.Lookup(rec, "tool_calls")) != "null" {
		drop = append(drop, "tool_calls")
	}
	if len(m.ToolCallIDs) > 0 {
		set["tool_call_id"] = jsonOf(m.ToolCallIDs[0])
	} else {
		drop = append(drop, "tool_call_id")
	}
	if m.Name != "" && m.Name != miniExitRole {
		set["name"] = jsonOf(m.Name)
		order = append(order, "name")
	}
	if rec == nil {
		rec = []byte("{}")
	}
	return jsonscan.SetMembers(rec, set, order, drop...)
}
