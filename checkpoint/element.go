package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/compactkit/compact"
)

// A checkpoint is stored as elements: each message, non-message record,
// step, cached result, side effect and compaction record is one element,
// and so are the checkpoint's remaining fields ("head"), the transcript's
// remaining fields and the loop's State. An element is stored once per
// session, under the hash of its encoding (its address), and every
// checkpoint that holds it refers to it by address. A save therefore
// writes only the elements that are new, and a checkpoint's record says
// how its lists differ from its parent's.

// Element lists, in the order records list them.
const (
	listMessages = iota
	listRecords
	listSteps
	listCache
	listEffects
	listCompactions
	numLists
)

// Element kinds, the first byte hashed into an address.
const (
	kindMessage    byte = 'm'
	kindRecord     byte = 'r'
	kindStep       byte = 's'
	kindCache      byte = 'c'
	kindEffect     byte = 'e'
	kindCompaction byte = 'x'
	kindHead       byte = 'h'
	kindTranscript byte = 't'
	kindState      byte = 'a'
)

// headElem is the head element: the checkpoint's fields that are neither
// identity (kept in the record's meta), nor lists, nor State.
type headElem struct {
	Task        string         `json:"task,omitempty"`
	PlanVersion int            `json:"plan_version,omitempty"`
	CurrentStep string         `json:"current_step,omitempty"`
	Pending     *PendingAction `json:"pending,omitempty"`
	Permissions []Permission   `json:"permissions,omitempty"`
	RetryCount  int            `json:"retry_count,omitempty"`
	LastError   string         `json:"last_error,omitempty"`
	// UsedNonces are the resume tokens' nonces Approve has accepted.
	UsedNonces []string `json:"used_nonces,omitempty"`
}

// cacheEntry is one element of the tool cache.
type cacheEntry struct {
	Key   string          `json:"k"`
	Value json.RawMessage `json:"v"`
}

// elemEncoder encodes elements into one reused buffer.
type elemEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
	msg []byte // encodeMessage's
}

func newElemEncoder() *elemEncoder {
	e := &elemEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// json encodes v, followed by a newline and raw when raw is not nil. The
// result is valid until the next call.
func (e *elemEncoder) json(v any, raw []byte) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	if raw != nil {
		e.buf.Write(raw)
	} else {
		e.buf.Truncate(e.buf.Len() - 1)
	}
	return e.buf.Bytes(), nil
}

// encodeMessage encodes m (see appendMessage). The result is valid until
// the encoder's next call.
func encodeMessage(e *elemEncoder, m *compact.Message) []byte {
	e.msg = appendMessage(e.msg[:0], m)
	return e.msg
}

func rawOrEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// splitRaw splits an element with a raw section into its JSON and raw parts.
func splitRaw(b []byte) ([]byte, *rawSection, error) {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		return nil, nil, errors.New("no end to the JSON part")
	}
	return b[:n], &rawSection{buf: b[n+1:]}, nil
}

func decodeMessage(b []byte) (compact.Message, error) {
	j, raw, err := splitRaw(b)
	if err != nil {
		return compact.Message{}, err
	}
	var sm storedMessage
	if err := json.Unmarshal(j, &sm); err != nil {
		return compact.Message{}, err
	}
	t, err := fromStored(&storedTranscript{Messages: []storedMessage{sm}}, raw)
	if err != nil {
		return compact.Message{}, err
	}
	return t.Messages[0], nil
}

func encodeRecord(e *elemEncoder, r *compact.Record) ([]byte, error) {
	var raw rawSection
	sr := storedRecord{Record: *r, Raw: raw.put(r.Raw)}
	sr.Record.Raw = nil
	return e.json(&sr, rawOrEmpty(raw.buf))
}

func decodeRecord(b []byte) (compact.Record, error) {
	j, raw, err := splitRaw(b)
	if err != nil {
		return compact.Record{}, err
	}
	var sr storedRecord
	if err := json.Unmarshal(j, &sr); err != nil {
		return compact.Record{}, err
	}
	r := sr.Record
	r.Raw, err = raw.get(sr.Raw)
	return r, err
}

// transcriptElem holds a transcript's fields other than its messages and
// records.
func encodeTranscript(e *elemEncoder, t *compact.Transcript) ([]byte, error) {
	var raw rawSection
	shell := *t
	shell.Messages, shell.Records = nil, nil
	st := toStored(&shell, &raw)
	st.Messages = nil
	return e.json(st, rawOrEmpty(raw.buf))
}

func decodeTranscript(b []byte) (*compact.Transcript, error) {
	j, raw, err := splitRaw(b)
	if err != nil {
		return nil, err
	}
	var st storedTranscript
	if err := json.Unmarshal(j, &st); err != nil {
		return nil, err
	}
	t, err := fromStored(&st, raw)
	if err != nil {
		return nil, err
	}
	t.Messages, t.Records = nil, nil
	return t, nil
}

// decodeElem decodes an element of the given kind.
func decodeElem(kind byte, b []byte) (any, error) {
	switch kind {
	case kindMessage:
		return decodeMessage(b)
	case kindRecord:
		return decodeRecord(b)
	case kindTranscript:
		return decodeTranscript(b)
	case kindState:
		return json.RawMessage(b), nil
	case kindStep:
		var s Step
		return s, json.Unmarshal(b, &s)
	case kindCache:
		var c cacheEntry
		return c, json.Unmarshal(b, &c)
	case kindEffect:
		var s SideEffect
		return s, json.Unmarshal(b, &s)
	case kindCompaction:
		var c compact.Compaction
		return c, json.Unmarshal(b, &c)
	case kindHead:
		var h headElem
		return h, json.Unmarshal(b, &h)
	}
	return nil, fmt.Errorf("unknown element kind %q", kind)
}

// The same* functions tell whether an element is unchanged since it was
// last stored, so that its address is reused without encoding it again.
// Strings and raw values shared with the stored copy compare in constant
// time (equal pointers), so checking an unchanged transcript costs a few
// comparisons per message however long its text. Raw values are never
// modified in place (see compact.Transcript.Clone), so equal pointers mean
// equal bytes. TestSameCoversEveryField fails when a domain type gains a
// field these functions do not compare.

func sameRaw(a, b json.RawMessage) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

func sameMessage(a, b *compact.Message) bool {
	if a.ID != b.ID || a.Role != b.Role || a.Name != b.Name || a.Synthetic != b.Synthetic || a.Summary != b.Summary ||
		!slices.Equal(a.ToolCallIDs, b.ToolCallIDs) || len(a.Parts) != len(b.Parts) ||
		a.Source.Format != b.Source.Format || a.Source.Fingerprint != b.Source.Fingerprint ||
		len(a.Source.Records) != len(b.Source.Records) || (a.ToolCallIDs == nil) != (b.ToolCallIDs == nil) ||
		!slices.Equal(a.Source.Spans, b.Source.Spans) {
		return false
	}
	for i := range a.Source.Records {
		if !sameRaw(a.Source.Records[i], b.Source.Records[i]) {
			return false
		}
	}
	for i := range a.Parts {
		p, q := &a.Parts[i], &b.Parts[i]
		if p.Type != q.Type || p.Text != q.Text || p.CallID != q.CallID || p.IsError != q.IsError ||
			p.Failed != q.Failed || p.Harness != q.Harness ||
			(p.Image == nil) != (q.Image == nil) || (p.ToolCall == nil) != (q.ToolCall == nil) {
			return false
		}
		if p.Image != nil && *p.Image != *q.Image {
			return false
		}
		if x, y := p.ToolCall, q.ToolCall; x != nil && (x.ID != y.ID || x.Name != y.Name || x.Kind != y.Kind ||
			x.Target != y.Target || !sameRaw(x.Arguments, y.Arguments)) {
			return false
		}
	}
	return true
}

func sameRecord(a, b *compact.Record) bool {
	return a.At == b.At && a.Type == b.Type && a.Marker == b.Marker && a.State == b.State && sameRaw(a.Raw, b.Raw)
}

func sameStep(a, b *Step) bool {
	return a.ID == b.ID && a.Status == b.Status && a.InputHash == b.InputHash && a.Output == b.Output &&
		a.Tool == b.Tool && a.Duration == b.Duration && a.Error == b.Error && sameRaw(a.Args, b.Args)
}

func sameEffect(a, b *SideEffect) bool {
	return a.Tool == b.Tool && a.Key == b.Key && a.At.Equal(b.At) && a.At.Location() == b.At.Location() && sameRaw(a.Receipt, b.Receipt)
}

func sameCompaction(a, b *compact.Compaction) bool {
	return a.SourceHash == b.SourceHash && a.DroppedFrom == b.DroppedFrom && a.DroppedTo == b.DroppedTo &&
		slices.Equal(a.DroppedIDs, b.DroppedIDs) && a.Method == b.Method && a.Reason == b.Reason &&
		a.TokensBefore == b.TokensBefore && a.TokensAfter == b.TokensAfter && a.Model == b.Model &&
		a.LLMAttempts == b.LLMAttempts && a.At.Equal(b.At) && a.At.Location() == b.At.Location() &&
		a.Duration == b.Duration && slices.Equal(a.Warnings, b.Warnings) &&
		(a.DroppedIDs == nil) == (b.DroppedIDs == nil) && (a.Warnings == nil) == (b.Warnings == nil)
}

// sameTranscriptShell compares what the transcript element holds.
func sameTranscriptShell(a, b *compact.Transcript) bool {
	if a.Format != b.Format || !sameRaw(a.Envelope, b.Envelope) || len(a.Tools) != len(b.Tools) || (a.Tools == nil) != (b.Tools == nil) {
		return false
	}
	for i := range a.Tools {
		x, y := &a.Tools[i], &b.Tools[i]
		if x.Name != y.Name || x.Description != y.Description || !sameRaw(x.Parameters, y.Parameters) {
			return false
		}
	}
	return true
}
