package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/compactkit/compact"
)

// A transcript's raw bytes (source records, tool arguments, tool schemas,
// non-message records, envelope) must come back byte for byte: writers
// reuse source records verbatim, and arguments feed message fingerprints.
// encoding/json would compact every json.RawMessage it writes (dropping the
// whitespace of a pretty-printed source) and re-scan each one, which is most
// of the cost of encoding a checkpoint. So the stored body is in two parts:
//
//	<JSON of the checkpoint, raw values replaced by [offset,length]>\n<raw section>
//
// The JSON is compact, so its first newline ends it; the raw section is the
// raw values, concatenated, exactly as they were. Both parts are covered by
// the body's sha256.

// rawRef locates one raw value in the raw section.
type rawRef struct{ off, n int }

func (r rawRef) MarshalJSON() ([]byte, error) {
	b := append([]byte{'['}, strconv.Itoa(r.off)...)
	b = append(append(b, ','), strconv.Itoa(r.n)...)
	return append(b, ']'), nil
}

func (r *rawRef) UnmarshalJSON(b []byte) error {
	var v [2]int
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("raw reference: %w", err)
	}
	r.off, r.n = v[0], v[1]
	return nil
}

// rawSection collects raw values while encoding and hands them out while
// decoding.
type rawSection struct{ buf []byte }

func (s *rawSection) put(b []byte) *rawRef {
	if b == nil {
		return nil
	}
	r := &rawRef{off: len(s.buf), n: len(b)}
	s.buf = append(s.buf, b...)
	return r
}

var errRawRef = errors.New("raw reference outside the raw section")

// get returns the value r refers to. The value shares the section's
// memory; raw values are never modified in place.
func (s *rawSection) get(r *rawRef) (json.RawMessage, error) {
	if r == nil {
		return nil, nil
	}
	if r.off < 0 || r.n < 0 || r.off > len(s.buf) || r.n > len(s.buf)-r.off {
		return nil, errRawRef
	}
	return json.RawMessage(s.buf[r.off : r.off+r.n : r.off+r.n]), nil
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
		Envelope *rawRef         `json:"envelope,omitempty"`
	}
	storedMessage struct {
		compact.Message
		Parts  []storedPart `json:"parts,omitempty"`
		Source storedSource `json:"source,omitzero"`
	}
	storedSource struct {
		compact.Source
		Records []*rawRef `json:"records,omitempty"`
	}
	storedPart struct {
		compact.Part
		ToolCall *storedToolCall `json:"tool_call,omitempty"`
	}
	storedToolCall struct {
		compact.ToolCall
		Arguments *rawRef `json:"arguments,omitempty"`
	}
	storedTool struct {
		compact.ToolDef
		Parameters *rawRef `json:"parameters,omitempty"`
	}
	storedRecord struct {
		compact.Record
		Raw *rawRef `json:"raw"`
	}
)

func toStored(t *compact.Transcript, raw *rawSection) *storedTranscript {
	if t == nil {
		return nil
	}
	s := &storedTranscript{Transcript: *t, Envelope: raw.put(t.Envelope)}
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
					tc := storedToolCall{ToolCall: *p.ToolCall, Arguments: raw.put(p.ToolCall.Arguments)}
					tc.ToolCall.Arguments = nil
					sp.ToolCall = &tc
				}
				sm.Parts[j] = sp
			}
		}
		sm.Source = storedSource{Source: m.Source}
		sm.Source.Source.Records = nil
		for _, r := range m.Source.Records {
			sm.Source.Records = append(sm.Source.Records, raw.put(r))
		}
		s.Messages[i] = sm
	}
	for _, d := range t.Tools {
		st := storedTool{ToolDef: d, Parameters: raw.put(d.Parameters)}
		st.ToolDef.Parameters = nil
		s.Tools = append(s.Tools, st)
	}
	for _, r := range t.Records {
		sr := storedRecord{Record: r, Raw: raw.put(r.Raw)}
		sr.Record.Raw = nil
		s.Records = append(s.Records, sr)
	}
	return s
}

func fromStored(s *storedTranscript, raw *rawSection) (*compact.Transcript, error) {
	if s == nil {
		return nil, nil
	}
	var err error
	get := func(r *rawRef) json.RawMessage {
		v, gerr := raw.get(r)
		if gerr != nil {
			err = gerr
		}
		return v
	}
	t := s.Transcript
	t.Envelope = get(s.Envelope)
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
					tc.Arguments = get(sp.ToolCall.Arguments)
					p.ToolCall = &tc
				}
				m.Parts[j] = p
			}
		}
		m.Source = sm.Source.Source
		m.Source.Records = nil
		for _, r := range sm.Source.Records {
			m.Source.Records = append(m.Source.Records, get(r))
		}
		t.Messages[i] = m
	}
	t.Tools = nil
	for _, st := range s.Tools {
		d := st.ToolDef
		d.Parameters = get(st.Parameters)
		t.Tools = append(t.Tools, d)
	}
	t.Records = nil
	for _, sr := range s.Records {
		r := sr.Record
		r.Raw = get(sr.Raw)
		t.Records = append(t.Records, r)
	}
	return &t, err
}

// storedBody is the JSON part of a stored checkpoint.
type storedBody struct {
	*Checkpoint
	Transcript *storedTranscript `json:"transcript,omitempty"`
}

// marshalBody encodes c as its JSON part, a newline and its raw section.
func marshalBody(c *Checkpoint) ([]byte, error) {
	var raw rawSection
	st := toStored(c.Transcript, &raw)
	var b bytes.Buffer
	b.Grow(len(raw.buf) + 4096)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(storedBody{Checkpoint: c, Transcript: st}); err != nil { // ends with '\n'
		return nil, err
	}
	b.Write(raw.buf)
	return b.Bytes(), nil
}

func unmarshalBody(b []byte) (*Checkpoint, error) {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		return nil, errors.New("no end to the JSON part")
	}
	raw := &rawSection{buf: b[n+1:]}
	body := storedBody{Checkpoint: &Checkpoint{}}
	if err := json.Unmarshal(b[:n], &body); err != nil {
		return nil, err
	}
	t, err := fromStored(body.Transcript, raw)
	if err != nil {
		return nil, err
	}
	body.Checkpoint.Transcript = t
	return body.Checkpoint, nil
}
