package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonscan"
)

// Gemini CLI records each chat in ~/.gemini/tmp/<project hash>/chats/
// session-<time>-<id>.json: {"sessionId", "projectHash", "startTime",
// "lastUpdated", "messages"}. A message has an id, a timestamp and a type:
//
//   - "user": the person's text → a user message;
//   - "gemini": the model's turn → an assistant message: "thoughts"
//     ({subject, description}) become thinking parts, "content" the text,
//     and each of "toolCalls" a tool call (id, name, args) followed by its
//     results: result[].functionResponse (id, response.output or
//     response.error; status "error" marks it failed). Call and result sit
//     in one message, which ToolGroups allows;
//   - "info", "error", "warning": notes the CLI showed, never sent to the
//     model: kept as records of that Type.
//
// Content may be a string or a list of parts ({"text"}); both are read. The
// rest of the document is the transcript's Envelope.

func init() {
	register(Format{
		Name:        GeminiCLI,
		Description: `Gemini CLI chat recording ({"sessionId", "projectHash", "messages": [...]}, or its JSON-lines layout)`,
		Sniff:       sniffGemini,
		read:        readGemini,
		Write:       writeGemini,
	})
}

// gemContentFields are the fields of a message that carry what it says;
// gemUnread is the Record.Type of a user or model turn with none of them
// but other fields.
var gemContentFields = []string{"content", "thoughts", "toolCalls"}

const gemUnread = "unread"

// gemWhy says what a record gemRecord did not read as a message is (the
// message's type, for a message it could not read) and why it is kept.
func gemWhy(raw []byte, typ string) (kind, why string) {
	if typ == gemUnread {
		return jsonscan.LookupString(raw, "type"), noContentWhy(unknownContent(raw, gemContentFields...), gemContentFields...)
	}
	return typ, "not a Gemini CLI message"
}

type gemMessage struct {
	ID        string        `json:"id"`
	Type      string        `json:"type"`
	Content   jsonscan.Raw  `json:"content"`
	Thoughts  []gemThought  `json:"thoughts"`
	ToolCalls []gemToolCall `json:"toolCalls"`
}

type gemThought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

type gemToolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
	Result []struct {
		FunctionResponse *struct {
			ID       string       `json:"id"`
			Response jsonscan.Raw `json:"response"`
		} `json:"functionResponse"`
	} `json:"result"`
	Status string `json:"status"`
}

func sniffGemini(head []byte) int {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	fields, _ := jsonscan.Members(t)
	has := func(k string) bool { return len(jsonscan.ValueOf(t, fields, k)) > 0 }
	if !has("messages") {
		// The JSON-lines layout: a header line, then messages and updates.
		recs := headRecords(head, 8)
		if len(recs) == 0 || !jsonscan.HasKeys(recs[0], "sessionId", "projectHash") || len(jsonscan.Lookup(recs[0], "messages")) > 0 {
			return 0
		}
		if len(recs) == 1 && jsonscan.HasKeys(recs[0], "startTime") {
			return 90 // a session just started: its header alone
		}
		for _, r := range recs[1:] {
			switch jsonscan.LookupString(r, "type") {
			case "user", "gemini", "info", "error", "warning":
				if jsonscan.HasKeys(r, "id", "timestamp") {
					return 95
				}
			}
			if jsonscan.HasKeys(r, gemSet) {
				return 95
			}
		}
		return 0
	}
	if has("sessionId") && has("projectHash") {
		return 95
	}
	if has("sessionId") {
		for _, m := range headItems(jsonscan.ValueOf(t, fields, "messages"), 3) {
			switch jsonscan.LookupString(m, "type") {
			case "user", "gemini":
				return 85
			}
		}
	}
	return 0
}

func readGemini(r io.Reader, rs *readState) (compact.Transcript, error) {
	name := rs.name
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	if gemIsJSONL(br) {
		return readGeminiJSONL(br, rs)
	}
	r = br
	const expected = `a Gemini CLI chat recording {"sessionId", "messages": [...]}`
	doc, err := readWholeDoc(r, name, GeminiCLI, expected)
	if err != nil {
		return compact.Transcript{}, err
	}
	if err := rs.checkUTF8(doc, 0, 0); err != nil {
		return compact.Transcript{}, err
	}
	d, ok := splitList(doc, "messages")
	if !ok {
		return compact.Transcript{}, &Error{File: name, Format: GeminiCLI, Offset: -1, Msg: "expected " + expected}
	}
	t := compact.Transcript{Format: string(GeminiCLI), Envelope: d.env}
	for i, raw := range d.elems {
		m, typ, err := gemRecord(raw)
		if err != nil {
			return compact.Transcript{}, &Error{File: name, Format: GeminiCLI, Offset: -1, Msg: fmt.Sprintf("messages[%d]", i), Err: err}
		}
		if m == nil {
			if typ == "invalid" || typ == "unknown" || typ == gemUnread {
				kind, why := gemWhy(raw, typ)
				rs.unreadRecord(0, kind, fmt.Sprintf("messages[%d]: %s", i, why))
			}
			t.Records = append(t.Records, compact.Record{At: len(t.Messages), Type: typ, Raw: raw})
			continue
		}
		stampMessage(m, GeminiCLI, "gem", i)
		t.Messages = append(t.Messages, *m)
	}
	return t, nil
}

// gemRecord reads one message record: a message for user and model turns,
// nil and the record's type for the CLI's notes (info, error, warning) and
// what is not a message ("invalid", "unknown"). A user or model turn whose
// fields have the wrong type is an error naming the field.
func gemRecord(raw []byte) (*compact.Message, string, error) {
	if raw[0] != '{' {
		return nil, "invalid", nil
	}
	var gm gemMessage
	if err := json.Unmarshal(raw, &gm); err != nil {
		var typ *json.UnmarshalTypeError
		if t := jsonscan.LookupString(raw, "type"); errors.As(err, &typ) && (t == "user" || t == "gemini" || t == "model") {
			return nil, "", err
		}
		return nil, "invalid", nil
	}
	var role compact.Role
	switch gm.Type {
	case "user":
		role = compact.RoleUser
	case "gemini", "model":
		role = compact.RoleAssistant
	case "":
		return nil, "unknown", nil
	default:
		return nil, gm.Type, nil
	}
	if err := gemContentType(gm.Content); err != nil {
		return nil, "", err
	}
	if gm.Content == nil && gm.Thoughts == nil && gm.ToolCalls == nil {
		if other := unknownContent(raw, gemContentFields...); other != nil {
			// Read empty, its text would be lost without a word.
			return nil, gemUnread, nil
		}
	}
	m := &compact.Message{ID: gm.ID, Role: role, Parts: gemParts(&gm), Source: compact.Source{Records: []json.RawMessage{raw}}}
	markHandoff(m)
	return m, gm.Type, nil
}

// Gemini CLI 0.40 and later record a session as JSON lines instead: a
// header line (the session fields), one line per message as it is
// recorded, and {"$set": {...}} lines updating the header's fields. A
// message recorded again (same id: a model turn whose tool calls finished)
// replaces the earlier version where it stood; each version's line, and
// the lines between two versions, stay in its Source.Records, so writing
// it back keeps the file as it was. A {"$rewindTo": id} line (/rewind)
// takes back the message of that id and every message recorded after it,
// as Gemini CLI's loader does (an id it never recorded takes back all):
// their lines are kept as Records of Type "rewound", with a WarnRewound
// warning, and a message recorded later under a taken-back id is new.

const (
	gemHeader  = "session"   // Record.Type of the header line
	gemSet     = "$set"      // Record.Type of an update line
	gemRewind  = "$rewindTo" // Record.Type of a rewind line
	gemRewound = "rewound"   // Record.Type of the lines of messages a rewind took back
)

// gemRewindTo takes back messages k and later of t (a rewind line at line
// n): their lines, and the records between them, become records before
// message k, in file order.
func gemRewindTo(t *compact.Transcript, k int) {
	j := len(t.Records)
	for j > 0 && t.Records[j-1].At > k {
		j--
	}
	tail := slices.Clone(t.Records[j:])
	t.Records = t.Records[:j]
	ti := 0
	for i := k; i < len(t.Messages); i++ {
		for ; ti < len(tail) && tail[ti].At <= i; ti++ {
			tail[ti].At = k
			t.Records = append(t.Records, tail[ti])
		}
		for _, raw := range t.Messages[i].Source.Records {
			rec := compact.Record{At: k, Type: gemRewound, Raw: raw}
			if len(jsonscan.Lookup(raw, gemSet)) > 0 {
				rec.Type, rec.State = gemSet, true
			}
			t.Records = append(t.Records, rec)
		}
	}
	for ; ti < len(tail); ti++ {
		tail[ti].At = k
		t.Records = append(t.Records, tail[ti])
	}
	t.Messages = t.Messages[:k]
}

// gemIsJSONL reports whether the input is the JSON-lines layout: a first
// line that is a whole object without "messages".
func gemIsJSONL(br *bufio.Reader) bool {
	head, _ := br.Peek(br.Size())
	head = bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	end := jsonscan.ValueEnd(head, 0)
	if end < 0 {
		return false
	}
	rest := head[end:]
	return len(jsonscan.Lookup(head[:end], "messages")) == 0 && bytes.IndexByte(rest, '\n') >= 0
}

func readGeminiJSONL(br *bufio.Reader, rs *readState) (compact.Transcript, error) {
	t := compact.Transcript{Format: string(GeminiCLI)}
	byID := map[string]int{} // message id -> index
	var lineOf []int         // message index -> its first line
	last := -1               // the message read last, while only records follow it
	var pending []compact.Record
	flush := func() {
		for _, r := range pending {
			r.At = len(t.Messages)
			t.Records = append(t.Records, r)
		}
		pending = pending[:0]
	}
	err := rs.lines(br, func(line []byte, n int) error {
		raw := bytes.Clone(line)
		if !jsonscan.Valid(raw) {
			var v any
			return jsonError(rs.name, GeminiCLI, n, json.Unmarshal(raw, &v), "a Gemini CLI session line")
		}
		members, _ := jsonscan.Members(raw)
		switch {
		case len(jsonscan.ValueOf(raw, members, gemSet)) > 0:
			pending = append(pending, compact.Record{Type: gemSet, Raw: raw, State: true})
			return nil
		case jsonscan.Raw(jsonscan.ValueOf(raw, members, gemRewind)).First() == '"':
			id := jsonscan.LookupString(raw, gemRewind)
			k, ok := byID[id]
			if !ok {
				k = 0
			}
			if k < len(t.Messages) {
				rs.warn(Warning{Line: n, Offset: -1, Kind: WarnRewound, Record: gemRewound,
					Msg: fmt.Sprintf("{\"$rewindTo\": %q} takes back %d message(s) from line %d on, as Gemini CLI's loader does; kept as %q records, not read",
						id, len(t.Messages)-k, lineOf[k], gemRewound)})
			}
			for _, m := range t.Messages[k:] {
				delete(byID, m.ID)
			}
			gemRewindTo(&t, k)
			lineOf = lineOf[:k]
			last = -1
			pending = append(pending, compact.Record{Type: gemRewind, Raw: raw})
			return nil
		case len(t.Messages) == 0 && len(t.Records) == 0 && len(pending) == 0 && len(jsonscan.ValueOf(raw, members, "sessionId")) > 0:
			t.Records = append(t.Records, compact.Record{Type: gemHeader, Raw: raw, State: true})
			return nil
		}
		m, typ, err := gemRecord(raw)
		if err != nil {
			return jsonError(rs.name, GeminiCLI, n, err, "a Gemini CLI session line")
		}
		if m == nil {
			if typ == "invalid" || typ == "unknown" || typ == gemUnread {
				kind, why := gemWhy(raw, typ)
				rs.unreadRecord(n, kind, why)
			}
			pending = append(pending, compact.Record{Type: typ, Raw: raw})
			return nil
		}
		if k, ok := byID[m.ID]; ok && m.ID != "" {
			// A new version of a message: its content replaces the old.
			old := &t.Messages[k]
			if k == last {
				for _, r := range pending {
					old.Source.Records = append(old.Source.Records, r.Raw)
				}
				pending = pending[:0]
			}
			old.Parts = m.Parts
			old.Source.Records = append(old.Source.Records, raw)
			return nil
		}
		flush()
		m.Source.Records[0] = raw
		stampMessage(m, GeminiCLI, "gem", n)
		byID[m.ID] = len(t.Messages)
		lineOf = append(lineOf, n)
		last = len(t.Messages)
		t.Messages = append(t.Messages, *m)
		return nil
	})
	if err != nil {
		return compact.Transcript{}, err
	}
	flush()
	if len(t.Messages) == 0 && len(t.Records) > 0 && t.Records[0].Type == gemHeader {
		return t, &Error{File: rs.name, Format: GeminiCLI, Offset: -1, Err: ErrNoMessages,
			Msg: fmt.Sprintf("no messages yet: the session's header and %d other records", len(t.Records)-1)}
	}
	for i := range t.Messages {
		// Versions were merged after the first stamp: stamp again.
		m := &t.Messages[i]
		m.Source.Fingerprint = m.Fingerprint()
	}
	return t, nil
}

func gemParts(gm *gemMessage) []compact.Part {
	var parts []compact.Part
	for _, th := range gm.Thoughts {
		parts = append(parts, compact.Part{Type: compact.PartThinking, Text: gemThoughtText(th)})
	}
	parts = append(parts, gemContent(gm.Content)...)
	for _, tc := range gm.ToolCalls {
		args := tc.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		parts = append(parts, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args}})
		for _, res := range tc.Result {
			fr := res.FunctionResponse
			if fr == nil {
				continue
			}
			id := fr.ID
			if id == "" {
				id = tc.ID
			}
			text, failed := gemResponse(fr.Response)
			parts = append(parts, compact.Part{Type: compact.PartToolResult, CallID: id, Text: text,
				IsError: failed || tc.Status == "error"})
		}
	}
	return parts
}

// gemThoughtText joins a thought's subject and description on one line
// break; gemThoughtJSON splits them again.
func gemThoughtText(th gemThought) string {
	if th.Subject == "" {
		return th.Description
	}
	return th.Subject + "\n" + th.Description
}

func gemThoughtJSON(s string) json.RawMessage {
	subject, desc, ok := strings.Cut(s, "\n")
	if !ok {
		subject, desc = "", s
	}
	var o jsonObject
	o.add("subject", subject).add("description", desc)
	return o.bytes()
}

// gemContentType checks that a message's content has the type Gemini CLI
// gives it (PartListUnion: a string, a part object, or a list of strings
// and part objects), so that no other value is read as an empty message.
func gemContentType(c jsonscan.Raw) error {
	bad := func(v jsonscan.Raw) error { return wrongType("content", v, reflect.TypeFor[string]()) }
	switch c.First() {
	case 0, 'n', '"', '{':
		return nil
	case '[':
		elems, _ := jsonscan.Elements(c)
		for _, e := range elems {
			if v := c[e.Start:e.End]; v.First() != '"' && v.First() != '{' {
				return bad(v)
			}
		}
		return nil
	}
	return bad(c)
}

// gemContent reads content given as a string or as parts with "text".
func gemContent(c jsonscan.Raw) []compact.Part {
	switch c.First() {
	case '"':
		var s string
		_ = json.Unmarshal(c, &s)
		if s == "" {
			return nil
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}
	case '{':
		return gemContent(jsonscan.Raw("[" + string(c) + "]"))
	case '[':
		var items []jsonscan.Raw
		if json.Unmarshal(c, &items) != nil {
			return nil
		}
		var parts []compact.Part
		for _, it := range items {
			if it.First() == '"' {
				parts = append(parts, gemContent(it)...)
				continue
			}
			if txt := jsonscan.Lookup(it, "text"); txt != nil {
				parts = append(parts, gemContent(jsonscan.Raw(txt))...)
			}
		}
		return parts
	}
	return nil
}

// gemResponse returns a function response's text: its "output" (or
// "error") string, or the response as JSON when it is neither.
func gemResponse(resp jsonscan.Raw) (string, bool) {
	if resp.First() != '{' {
		return string(resp), false
	}
	if out := jsonscan.Lookup(resp, "output"); jsonscan.Raw(out).First() == '"' {
		return jsonscan.LookupString(resp, "output"), false
	}
	if e := jsonscan.Lookup(resp, "error"); e != nil {
		if jsonscan.Raw(e).First() == '"' {
			return jsonscan.LookupString(resp, "error"), true
		}
		return string(e), true
	}
	return string(resp), false
}

func writeGemini(w io.Writer, t compact.Transcript) error {
	ts := gemNewest(&t)
	if t.Format == string(GeminiCLI) && slices.ContainsFunc(t.Records, func(r compact.Record) bool { return r.Type == gemHeader }) {
		// The JSON-lines layout, line for line, the header first wherever
		// a compaction left it among the records.
		ew := &stickyWriter{w: w}
		for _, r := range t.Records {
			if r.Type == gemHeader {
				ew.writeLine(r.Raw)
			}
		}
		isHeader := func(r *compact.Record) bool { return r.Type == gemHeader }
		for _, rec := range listLayout(&t, isHeader, func(m *compact.Message) [][]byte {
			if !mustEncode(m, GeminiCLI) {
				return sourceRecords(m)
			}
			return [][]byte{gemEncode(m, ts)}
		}) {
			ew.writeLine(rec)
		}
		return ew.err
	}
	elems := listLayout(&t, nil, func(m *compact.Message) [][]byte {
		if !mustEncode(m, GeminiCLI) {
			return sourceRecords(m)
		}
		return [][]byte{gemEncode(m, ts)}
	})
	env := t.Envelope
	if t.Format != string(GeminiCLI) || len(jsonscan.Lookup(env, "messages")) == 0 {
		// The session fields Gemini CLI writes (and detection keys on): an
		// id derived from the conversation, so the same input gives the
		// same bytes.
		var o jsonObject
		o.add("sessionId", ccUUID("gemini-session", t.Hash(), ts)).add("projectHash", "").
			add("startTime", ts).add("lastUpdated", ts).add("messages", json.RawMessage("[]"))
		env = o.bytes()
	}
	return fillList(w, env, "messages", elems)
}

// gemEncode writes a changed or new message. A changed one keeps its
// record's other fields (id, timestamp, model, tokens) and each tool call's
// own fields (status, display name, ...), replacing what the parts define.
func gemEncode(m *compact.Message, ts string) []byte {
	rec := baseRecord(m, GeminiCLI)
	if rec != nil {
		// The latest version of the message (the JSON-lines layout records
		// a message again as it changes), not an update line.
		for _, r := range m.Source.Records {
			if len(jsonscan.Lookup(r, "id")) > 0 {
				rec = r
			}
		}
	}
	oldCalls := map[string][]byte{}
	if rec != nil {
		for _, c := range headItems(jsonscan.Lookup(rec, "toolCalls"), 1<<20) {
			oldCalls[jsonscan.LookupString(c, "id")] = c
		}
	}
	var text []string
	thoughts := []json.RawMessage{}
	calls := []json.RawMessage{}
	results := map[string][]json.RawMessage{}
	for _, p := range m.Parts {
		switch p.Type {
		case compact.PartText:
			text = append(text, p.Text)
		case compact.PartThinking:
			thoughts = append(thoughts, gemThoughtJSON(p.Text))
		case compact.PartToolCall:
			if p.ToolCall != nil {
				calls = append(calls, nil) // filled below, once results are known
			}
		case compact.PartToolResult:
			key := "output"
			if p.IsError {
				key = "error"
			}
			var fr, resp jsonObject
			resp.add(key, p.Text)
			fr.add("id", p.CallID).add("name", gemCallName(m, p.CallID)).add("response", json.RawMessage(resp.bytes()))
			var res jsonObject
			res.add("functionResponse", json.RawMessage(fr.bytes()))
			results[p.CallID] = append(results[p.CallID], res.bytes())
		}
	}
	k := 0
	for _, tc := range m.ToolCalls() {
		res := results[tc.ID]
		if res == nil {
			res = []json.RawMessage{}
		}
		set := map[string]json.RawMessage{"id": jsonOf(tc.ID), "name": jsonOf(tc.Name), "args": tc.Arguments, "result": jsonOf(res)}
		base := oldCalls[tc.ID]
		if base == nil {
			base = []byte("{}")
			set["status"] = jsonOf("success")
		}
		calls[k] = jsonscan.SetMembers(base, set, []string{"id", "name", "args", "result", "status"})
		k++
	}
	set := map[string]json.RawMessage{"content": jsonOf(strings.Join(text, "\n"))}
	fieldOrder := []string{"id", "timestamp", "type", "content", "thoughts", "toolCalls"}
	var drop []string
	if len(thoughts) > 0 {
		set["thoughts"] = jsonOf(thoughts)
	} else {
		drop = append(drop, "thoughts")
	}
	if len(calls) > 0 {
		set["toolCalls"] = jsonOf(calls)
	} else {
		drop = append(drop, "toolCalls")
	}
	if rec == nil {
		typ := "user"
		if m.Role == compact.RoleAssistant {
			typ = "gemini"
		}
		set["id"] = jsonOf(ccUUID("gemini", m.Fingerprint(), ts))
		set["timestamp"] = jsonOf(ts)
		set["type"] = jsonOf(typ)
		rec = []byte("{}")
	}
	return jsonscan.SetMembers(rec, set, fieldOrder, drop...)
}

func gemCallName(m *compact.Message, id string) string {
	for _, tc := range m.ToolCalls() {
		if tc.ID == id {
			return tc.Name
		}
	}
	return ""
}

// gemNewest is the newest message timestamp, for new messages.
func gemNewest(t *compact.Transcript) string {
	newest := jsonscan.LookupString(t.Envelope, "lastUpdated")
	for i := range t.Messages {
		for _, rec := range t.Messages[i].Source.Records {
			if s := jsonscan.LookupString(rec, "timestamp"); s > newest {
				newest = s
			}
		}
	}
	return newest
}
