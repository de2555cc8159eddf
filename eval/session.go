package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact/format"
)

// session is a transcript as the reference scorer sees it: converted to
// OpenAI Chat messages (what `compact convert --to openai` prints), each
// with its role, its text and the facts of that text.
type session struct {
	name string
	msgs []chatMsg
	// facts interns the session's facts: a message holds indices into it.
	facts []string
	ids   map[string]int32
}

// chatMsg is one converted message.
type chatMsg struct {
	raw  json.RawMessage
	role string
	// text is the reference's msg_text: the content's text and the string
	// values (not the keys) of the tool calls' arguments, one per line.
	text string
	// runes is text's length in characters, as Python counts it.
	runes int
	// facts are the message's facts, each once; argFacts those found in
	// its tool calls' arguments (a subset).
	facts    []int32
	argFacts []int32
}

// chatRecord is what the reference reads of a converted message.
type chatRecord struct {
	Role      json.RawMessage `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls json.RawMessage `json:"tool_calls"`
}

// readSession reads a transcript in any format and converts it.
func readSession(name string, r io.Reader, o format.ReadOptions) (*session, error) {
	t, err := format.ReadWith(r, name, "", o)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := format.Write(&buf, t, format.OpenAIChat); err != nil {
		return nil, fmt.Errorf("%s: converting to %s: %w", name, format.OpenAIChat, err)
	}
	records, err := chatRecords(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: reading its %s conversion: %w", name, format.OpenAIChat, err)
	}
	s := &session{name: name, ids: map[string]int32{}}
	s.msgs = make([]chatMsg, len(records))
	for i, raw := range records {
		m, err := s.message(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: converted message %d: %w", name, i, err)
		}
		s.msgs[i] = m
	}
	return s, nil
}

// chatRecords splits an OpenAI Chat document (an array of messages or an
// object with "messages") into its message records.
func chatRecords(doc []byte) ([]json.RawMessage, error) {
	doc = bytes.TrimSpace(doc)
	var list []json.RawMessage
	if len(doc) > 0 && doc[0] == '{' {
		var obj struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		return obj.Messages, nil
	}
	if err := json.Unmarshal(doc, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// message decodes one record and finds its facts.
func (s *session) message(raw json.RawMessage) (chatMsg, error) {
	var rec chatRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return chatMsg{}, err
	}
	m := chatMsg{raw: raw}
	_ = json.Unmarshal(rec.Role, &m.role) // a role that is no string equals no role the scorer names
	content := contentTexts(rec.Content)
	args := argumentTexts(rec.ToolCalls)
	m.text = strings.Join(append(append([]string(nil), content...), args...), "\n")
	m.runes = utf8.RuneCountInString(m.text)
	seen := map[int32]bool{}
	for i, t := range append(content, args...) {
		fromArgs := i >= len(content)
		eachFact(t, func(f string) {
			f = strings.TrimRight(f, ".,:;")
			if utf8.RuneCountInString(f) < 5 {
				return
			}
			id := s.intern(f)
			if !seen[id] {
				seen[id] = true
				m.facts = append(m.facts, id)
			}
			if fromArgs && !containsID(m.argFacts, id) {
				m.argFacts = append(m.argFacts, id)
			}
		})
	}
	return m, nil
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (s *session) intern(f string) int32 {
	if id, ok := s.ids[f]; ok {
		return id
	}
	id := int32(len(s.facts))
	s.facts = append(s.facts, f)
	s.ids[f] = id
	return id
}

// contentTexts returns the content's text: the string itself, or the
// "text" strings of a list of parts.
func contentTexts(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []string{s}
		}
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) != nil {
			return nil
		}
		var out []string
		for _, p := range parts {
			var part map[string]json.RawMessage
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			var text string
			if t, ok := part["text"]; ok && json.Unmarshal(t, &text) == nil && isJSONString(t) {
				out = append(out, text)
			}
		}
		return out
	}
	return nil
}

func isJSONString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// argumentTexts returns the string values of each tool call's arguments,
// decoded from the JSON string OpenAI carries them in; arguments that are
// not JSON count as one string.
func argumentTexts(raw json.RawMessage) []string {
	var calls []json.RawMessage
	if json.Unmarshal(raw, &calls) != nil {
		return nil
	}
	var out []string
	for _, c := range calls {
		var call struct {
			Function struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		if json.Unmarshal(c, &call) != nil {
			continue
		}
		a := bytes.TrimSpace(call.Function.Arguments)
		if len(a) == 0 {
			out = append(out, "") // no arguments: Python's default ""
			continue
		}
		var s string
		switch {
		case string(a) == "null":
			out = append(out, "None") // str(None), as the reference appends it
			continue
		case a[0] != '"' || json.Unmarshal(a, &s) != nil:
			out = append(out, string(a)) // not a string: the reference appends str(args)
			continue
		}
		if vals, ok := stringValues([]byte(s)); ok {
			out = append(out, vals...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// stringValues returns the string values (not the keys) of the JSON value
// in data, in document order (Python keeps an object's keys in order), and
// false when data is not one JSON value.
func stringValues(data []byte) ([]string, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []string
	if err := walkStrings(dec, &out); err != nil {
		return nil, false
	}
	return out, true
}

func walkStrings(dec *json.Decoder, out *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case string:
		*out = append(*out, v)
	case json.Delim:
		for dec.More() {
			if v == '{' {
				if _, err := dec.Token(); err != nil { // the key
					return err
				}
			}
			if err := walkStrings(dec, out); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return nil
}
