package checkpoint

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact"
)

// A transcript's raw JSON (source records, tool arguments, envelope) must
// come back byte for byte: writers reuse source records verbatim, and
// arguments feed message fingerprints. encoding/json compacts every
// json.RawMessage it writes, dropping whitespace a pretty-printed source
// had, so the stored body spells raw values through verbatim: as they are
// when they are already compact, and as {"$verbatim":"…"} (their exact text
// in a string) when they are not.
type verbatim struct {
	b []byte
	// wrap forces the wrapper: set for bytes that are not valid JSON, found
	// on the slow path (see marshalBody).
	wrap bool
}

const verbatimKey = `{"$verbatim":`

func raw(b []byte, strict bool) verbatim {
	return verbatim{b: b, wrap: strict && len(b) > 0 && !json.Valid(b)}
}

// MarshalJSON returns the raw value as is when it has no whitespace outside
// strings, so the encoder (which compacts) keeps it byte for byte, and the
// wrapper otherwise.
func (v verbatim) MarshalJSON() ([]byte, error) {
	if len(v.b) == 0 {
		return []byte("null"), nil
	}
	if !v.wrap && compactSpelling(v.b) && !bytes.HasPrefix(v.b, []byte(verbatimKey)) {
		return v.b, nil
	}
	var b bytes.Buffer
	b.WriteString(verbatimKey)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(v.b)); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// compactSpelling reports whether b has no insignificant whitespace: the
// one thing (with HTML escaping, which the body's encoder turns off)
// encoding/json changes in a raw value it writes. Validity is left to the
// encoder, whose compaction checks it.
func compactSpelling(b []byte) bool {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			inString = true
		}
	}
	return !inString
}

func (v *verbatim) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(b, []byte(verbatimKey)) {
		var w struct {
			V string `json:"$verbatim"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		v.b = []byte(w.V)
		return nil
	}
	if string(b) == "null" {
		v.b = nil
		return nil
	}
	v.b = bytes.Clone(b)
	return nil
}

// The stored* types shadow the raw fields of the domain types they embed;
// every other field, including any the domain adds later, is encoded as
// the domain type says.
type (
	storedTranscript struct {
		compact.Transcript
		Messages []storedMessage `json:"messages"`
		Tools    []storedTool    `json:"tools,omitempty"`
		Records  []storedRecord  `json:"records,omitempty"`
		Envelope verbatim        `json:"envelope,omitempty"`
	}
	storedMessage struct {
		compact.Message
		Parts  []storedPart `json:"parts,omitempty"`
		Source storedSource `json:"source,omitzero"`
	}
	storedSource struct {
		compact.Source
		Records []verbatim `json:"records,omitempty"`
	}
	storedPart struct {
		compact.Part
		ToolCall *storedToolCall `json:"tool_call,omitempty"`
	}
	storedToolCall struct {
		compact.ToolCall
		Arguments verbatim `json:"arguments,omitempty"`
	}
	storedTool struct {
		compact.ToolDef
		Parameters verbatim `json:"parameters,omitempty"`
	}
	storedRecord struct {
		compact.Record
		Raw verbatim `json:"raw"`
	}
)

func toStored(t *compact.Transcript, strict bool) *storedTranscript {
	if t == nil {
		return nil
	}
	s := &storedTranscript{Transcript: *t, Envelope: raw(t.Envelope, strict)}
	s.Transcript.Messages, s.Transcript.Tools, s.Transcript.Records, s.Transcript.Envelope = nil, nil, nil, nil
	s.Messages = make([]storedMessage, len(t.Messages))
	for i, m := range t.Messages {
		sm := storedMessage{Message: m}
		sm.Message.Parts, sm.Message.Source = nil, compact.Source{}
		if len(m.Parts) > 0 {
			sm.Parts = make([]storedPart, len(m.Parts))
			for j, p := range m.Parts {
				sp := storedPart{Part: p}
				sp.Part.ToolCall = nil
				if p.ToolCall != nil {
					tc := storedToolCall{ToolCall: *p.ToolCall, Arguments: raw(p.ToolCall.Arguments, strict)}
					tc.ToolCall.Arguments = nil
					sp.ToolCall = &tc
				}
				sm.Parts[j] = sp
			}
		}
		sm.Source = storedSource{Source: m.Source}
		sm.Source.Source.Records = nil
		for _, r := range m.Source.Records {
			sm.Source.Records = append(sm.Source.Records, raw(r, strict))
		}
		s.Messages[i] = sm
	}
	for _, d := range t.Tools {
		st := storedTool{ToolDef: d, Parameters: raw(d.Parameters, strict)}
		st.ToolDef.Parameters = nil
		s.Tools = append(s.Tools, st)
	}
	for _, r := range t.Records {
		sr := storedRecord{Record: r, Raw: raw(r.Raw, strict)}
		sr.Record.Raw = nil
		s.Records = append(s.Records, sr)
	}
	return s
}

func fromStored(s *storedTranscript) *compact.Transcript {
	if s == nil {
		return nil
	}
	t := s.Transcript
	t.Envelope = json.RawMessage(s.Envelope.b)
	t.Messages = make([]compact.Message, len(s.Messages))
	for i, sm := range s.Messages {
		m := sm.Message
		m.Parts = nil
		if len(sm.Parts) > 0 {
			m.Parts = make([]compact.Part, len(sm.Parts))
			for j, sp := range sm.Parts {
				p := sp.Part
				if sp.ToolCall != nil {
					tc := sp.ToolCall.ToolCall
					tc.Arguments = json.RawMessage(sp.ToolCall.Arguments.b)
					p.ToolCall = &tc
				}
				m.Parts[j] = p
			}
		}
		m.Source = sm.Source.Source
		m.Source.Records = nil
		for _, r := range sm.Source.Records {
			m.Source.Records = append(m.Source.Records, json.RawMessage(r.b))
		}
		t.Messages[i] = m
	}
	t.Tools = nil
	for _, st := range s.Tools {
		d := st.ToolDef
		d.Parameters = json.RawMessage(st.Parameters.b)
		t.Tools = append(t.Tools, d)
	}
	t.Records = nil
	for _, sr := range s.Records {
		r := sr.Record
		r.Raw = json.RawMessage(sr.Raw.b)
		t.Records = append(t.Records, r)
	}
	return &t
}

// storedBody is the JSON body of a stored checkpoint.
type storedBody struct {
	*Checkpoint
	Transcript *storedTranscript `json:"transcript,omitempty"`
}

// marshalBody encodes c. The fast path trusts raw values to be valid JSON
// (the encoder checks them anyway); if one is not, the slow path validates
// each and stores the invalid ones wrapped, byte for byte.
func marshalBody(c *Checkpoint) ([]byte, error) {
	b, err := encodeBody(c, false)
	if err != nil && c.Transcript != nil {
		b, err = encodeBody(c, true)
	}
	return b, err
}

func encodeBody(c *Checkpoint, strict bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(storedBody{Checkpoint: c, Transcript: toStored(c.Transcript, strict)}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func unmarshalBody(b []byte) (*Checkpoint, error) {
	body := storedBody{Checkpoint: &Checkpoint{}}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	body.Checkpoint.Transcript = fromStored(body.Transcript)
	return body.Checkpoint, nil
}
