package format

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Writing OpenHands files. Unchanged messages go back as their events, and
// records (bookkeeping events, the other instances of an evaluation file)
// where they stood. A changed message keeps its events and gets the text
// the parts now hold: an observation's content, a message's content, an
// action's thought (a call's arguments are not rewritten). A new message
// (the compact handoff is a user message) becomes new events shaped like
// OpenHands' own: a "message" action from the user, an agent action with
// tool_call_metadata (including a model_response carrying the call, so
// reading it back recovers the arguments), an observation with the
// tool_call_id. New events are numbered after the highest id in the file
// and stamped with its newest timestamp, so the same input gives the same
// bytes.

func writeOpenHands(w io.Writer, t compact.Transcript) error {
	enc := ohNewEncoder(&t)
	encode := enc.encode
	v1 := ohV1Layout(&t)
	if v1 {
		encode = enc.v1
	}
	elems := listLayout(&t, func(r *compact.Record) bool { return r.Type == ohInstance }, encode)
	env := t.Envelope
	if v1 && len(bytes.TrimSpace(env)) == 0 {
		// A conversation's events, as JSON lines.
		sw := &stickyWriter{w: w}
		for _, ev := range elems {
			sw.writeLine(ev)
		}
		return sw.err
	}
	if t.Format != string(OpenHands) || len(bytes.TrimSpace(env)) == 0 {
		env = []byte("[]")
	}
	if env[jsonscan.SkipSpace(env, 0)] == '[' {
		return fillList(w, env, "", elems)
	}
	var line bytes.Buffer
	if err := fillList(&line, env, "history", elems); err != nil {
		return err
	}
	sw := &stickyWriter{w: w}
	// Instances read before the selected one sit at At 0; the rest after it.
	// (With no messages left the two cannot be told apart: all go after.)
	for _, r := range t.Records {
		if r.Type == ohInstance && r.At <= 0 && len(t.Messages) > 0 {
			sw.writeLine(r.Raw)
		}
	}
	sw.writeLine(line.Bytes())
	for _, r := range t.Records {
		if r.Type == ohInstance && !(r.At <= 0 && len(t.Messages) > 0) {
			sw.writeLine(r.Raw)
		}
	}
	return sw.err
}

type ohEncoder struct {
	nextID int
	ts     string
	seq    int
}

func ohNewEncoder(t *compact.Transcript) *ohEncoder {
	e := &ohEncoder{}
	check := func(rec []byte) {
		fields, _ := jsonscan.Members(rec)
		if id, err := strconv.Atoi(ohScalar(jsonscan.Raw(jsonscan.ValueOf(rec, fields, "id")))); err == nil && id >= e.nextID {
			e.nextID = id + 1
		}
		var ts string
		if json.Unmarshal(jsonscan.ValueOf(rec, fields, "timestamp"), &ts) == nil && ts > e.ts {
			e.ts = ts
		}
	}
	for i := range t.Messages {
		if t.Messages[i].Source.Format == string(OpenHands) {
			for _, rec := range t.Messages[i].Source.Records {
				check(rec)
			}
		}
	}
	for _, r := range t.Records {
		if r.Type != ohInstance {
			check(r.Raw)
		}
	}
	return e
}

func (e *ohEncoder) encode(m *compact.Message) [][]byte {
	if !mustEncode(m, OpenHands) {
		return sourceRecords(m)
	}
	if out, ok := e.changed(m); ok {
		return out
	}
	return e.fresh(m)
}

// changed rewrites the text of m's own events; false when m no longer fits
// them (then it is written as new events).
func (e *ohEncoder) changed(m *compact.Message) ([][]byte, bool) {
	if m.Source.Format != string(OpenHands) || len(m.Source.Records) == 0 {
		return nil, false
	}
	recs := m.Source.Records
	calls := m.ToolCalls()
	if len(calls) == 0 {
		if len(recs) != 1 || len(m.Parts) != 1 || m.Parts[0].Type != compact.PartText {
			return nil, false
		}
		return [][]byte{ohSetText(recs[0], m.Parts[0].Text)}, true
	}
	if len(calls) != len(recs) {
		return nil, false
	}
	out := make([][]byte, 0, len(recs))
	var thought []string
	k := 0
	for _, p := range m.Parts {
		switch p.Type {
		case compact.PartText:
			thought = append(thought, p.Text)
		case compact.PartToolCall:
			rec := recs[k]
			if id := jsonscan.LookupString(jsonscan.Lookup(rec, "tool_call_metadata"), "tool_call_id"); id != "" && id != p.ToolCall.ID {
				return nil, false
			}
			out = append(out, ohSetThought(rec, joinLines(thought)))
			thought = nil
			k++
		default:
			return nil, false
		}
	}
	if len(thought) > 0 {
		return nil, false
	}
	return out, true
}

func joinLines(s []string) string { return strings.Join(s, "\n") }

// ohSetText puts text where ohText reads it from: args.content, content or
// message (a message action's "message" follows its content).
func ohSetText(rec []byte, text string) []byte {
	args := jsonscan.Lookup(rec, "args")
	switch {
	case jsonscan.LookupString(args, "content") != "":
		set := map[string]json.RawMessage{"args": jsonscan.SetMembers(args, map[string]json.RawMessage{"content": jsonOf(text)}, nil)}
		if len(jsonscan.Lookup(rec, "message")) > 0 {
			set["message"] = jsonOf(text)
		}
		return jsonscan.SetMembers(rec, set, nil)
	case jsonscan.LookupString(rec, "content") != "":
		return jsonscan.SetMembers(rec, map[string]json.RawMessage{"content": jsonOf(text)}, nil)
	}
	return jsonscan.SetMembers(rec, map[string]json.RawMessage{"message": jsonOf(text)}, []string{"message"})
}

// ohSetThought sets an action's thought (in args, or top-level in old events).
func ohSetThought(rec []byte, thought string) []byte {
	if args := jsonscan.Lookup(rec, "args"); jsonscan.Raw(args).First() == '{' {
		return jsonscan.SetMembers(rec, map[string]json.RawMessage{
			"args": jsonscan.SetMembers(args, map[string]json.RawMessage{"thought": jsonOf(thought)}, []string{"thought"}),
		}, nil)
	}
	return jsonscan.SetMembers(rec, map[string]json.RawMessage{"thought": jsonOf(thought)}, []string{"thought"})
}

// fresh encodes m as new events.
func (e *ohEncoder) fresh(m *compact.Message) [][]byte {
	var out [][]byte
	text := func(parts []compact.Part) string {
		var s []string
		for _, p := range parts {
			if p.Type == compact.PartText {
				s = append(s, p.Text)
			}
		}
		return joinLines(s)
	}
	switch m.Role {
	case compact.RoleSystem, compact.RoleDeveloper:
		out = append(out, e.event("agent", "action", "system", text(m.Parts), nil, nil))
	case compact.RoleTool:
		id := ""
		if len(m.ToolCallIDs) > 0 {
			id = m.ToolCallIDs[0]
		}
		obs := e.observation(id, m.Text())
		if slices.ContainsFunc(m.Parts, func(p compact.Part) bool { return p.Failed || p.IsError }) {
			// What failed comes back as OpenHands' error observation.
			obs = jsonscan.SetMembers(obs, map[string]json.RawMessage{"observation": json.RawMessage(`"error"`)}, nil)
		}
		out = append(out, obs)
	case compact.RoleAssistant:
		e.seq++
		resp := "compact-" + strconv.Itoa(e.seq) + "-" + m.Fingerprint()[:8]
		var pending []compact.Part
		for _, p := range m.Parts {
			if p.Type != compact.PartToolCall || p.ToolCall == nil {
				if p.Type == compact.PartText {
					pending = append(pending, p)
				}
				continue
			}
			out = append(out, e.call(p.ToolCall, text(pending), resp))
			pending = nil
		}
		if len(pending) > 0 || len(out) == 0 {
			out = append(out, e.message("agent", pending))
		}
	default:
		var rest []compact.Part
		for _, p := range m.Parts {
			if p.Type == compact.PartToolResult {
				out = append(out, e.observation(p.CallID, p.Text))
			} else {
				rest = append(rest, p)
			}
		}
		if len(rest) > 0 || len(out) == 0 {
			out = append(out, e.message("user", rest))
		}
	}
	return out
}

func (e *ohEncoder) id() int {
	id := e.nextID
	e.nextID++
	return id
}

// event starts a new event: id, timestamp, source, message, then kind.
func (e *ohEncoder) event(source, kindKey, kind, message string, args json.RawMessage, meta json.RawMessage) []byte {
	var o jsonObject
	o.add("id", e.id())
	if e.ts != "" {
		o.add("timestamp", e.ts)
	}
	o.add("source", source).add("message", message).add(kindKey, kind)
	if meta != nil {
		o.add("tool_call_metadata", meta)
	}
	if args == nil {
		var a jsonObject
		a.add("content", message)
		args = a.bytes()
	}
	if kindKey == "action" {
		o.add("args", args)
	} else {
		o.add("content", message).add("extras", json.RawMessage("{}"))
	}
	return o.bytes()
}

func (e *ohEncoder) message(source string, parts []compact.Part) []byte {
	var texts []string
	var images []string
	for _, p := range parts {
		switch p.Type {
		case compact.PartText:
			texts = append(texts, p.Text)
		case compact.PartImage:
			images = append(images, imageAsURL(p.Image))
		}
	}
	text := joinLines(texts)
	var a jsonObject
	a.add("content", text)
	if images != nil {
		a.add("image_urls", images)
	} else {
		a.add("image_urls", nil)
	}
	a.add("wait_for_response", false)
	return e.event(source, "action", "message", text, a.bytes(), nil)
}

func (e *ohEncoder) call(tc *compact.ToolCall, thought, resp string) []byte {
	args := tc.Arguments
	if jsonscan.Raw(args).First() != '{' {
		args = json.RawMessage("{}")
	}
	args = jsonscan.SetMembers(args, map[string]json.RawMessage{"thought": jsonOf(thought)}, []string{"thought"})
	var fn, call, msg, choice, mr, meta jsonObject
	fn.add("name", tc.Name).add("arguments", argsToString(tc.Arguments))
	call.add("id", tc.ID).add("type", "function").add("function", json.RawMessage(fn.bytes()))
	msg.add("role", "assistant").add("content", thought).add("tool_calls", []json.RawMessage{call.bytes()})
	choice.add("index", 0).add("message", json.RawMessage(msg.bytes()))
	mr.add("id", resp).add("choices", []json.RawMessage{choice.bytes()})
	meta.add("function_name", tc.Name).add("tool_call_id", tc.ID).add("model_response", json.RawMessage(mr.bytes()))
	return e.event("agent", "action", tc.Name, "", args, meta.bytes())
}

func (e *ohEncoder) observation(callID, text string) []byte {
	var meta jsonObject
	meta.add("tool_call_id", callID)
	return e.event("agent", "observation", "tool", text, nil, meta.bytes())
}
