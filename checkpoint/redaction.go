package checkpoint

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/redact"
)

// The redact* functions mask every string of a checkpoint's elements that
// could carry a secret (the task, step outputs, errors and args, the
// transcript including the raw source records kept for byte-exact
// rewriting, which the redactor's Transcript does not touch, compaction
// notes, cached results, receipts, pending params, State), one element at
// a time, as a store saves them (logsave.go).

func redactTranscript(r *redact.Redactor, t compact.Transcript) compact.Transcript {
	out, _ := r.Transcript(t)
	for i := range out.Messages {
		m := &out.Messages[i]
		m.Name = r.String(m.Name)
		for j := range m.Parts {
			p := &m.Parts[j]
			p.Text = r.String(p.Text)
			if p.ToolCall != nil {
				p.ToolCall.Arguments = redactJSON(r, p.ToolCall.Arguments)
				// The reader's tag quotes the arguments (a shell
				// command, a path): masked as they are (QA-20).
				p.ToolCall.Target = r.String(p.ToolCall.Target)
			}
			if p.Image != nil {
				p.Image.URL = r.String(p.Image.URL)
			}
		}
		// Records are the source bytes of the message: masked in place so a
		// writer that reuses them (the message is otherwise unchanged) emits
		// no secret either.
		recs := make([]json.RawMessage, len(m.Source.Records))
		for j, rec := range m.Source.Records {
			recs[j] = redactJSON(r, rec)
		}
		m.Source.Records = recs
	}
	out.Tools = append([]compact.ToolDef(nil), out.Tools...)
	for i := range out.Tools {
		out.Tools[i].Description = r.String(out.Tools[i].Description)
		out.Tools[i].Parameters = redactJSON(r, out.Tools[i].Parameters)
	}
	out.Records = append([]compact.Record(nil), out.Records...)
	for i := range out.Records {
		out.Records[i].Raw = redactJSON(r, out.Records[i].Raw)
	}
	out.Envelope = redactJSON(r, out.Envelope)
	return out
}

// redactJSON masks every string (keys included) inside a JSON value,
// decoding it first so a secret is found in its decoded form, not only in
// its escaped spelling. A value without secrets keeps its exact bytes (raw
// source records must stay byte-identical); one with secrets is masked in
// place, or, where that leaves one, re-encoded.
// Bytes that are not JSON are masked as text and kept as a JSON string.
func redactJSON(r *redact.Redactor, v json.RawMessage) json.RawMessage {
	if len(v) == 0 || cleanJSON(r, v) {
		return v
	}
	// Masked in place where that masks everything: every byte outside the
	// masks kept, so a record keeps its layout and key order (QA-39.5: a
	// re-encoded record came back with its keys sorted).
	if out, _ := r.RedactBytes(v); json.Valid(out) && cleanJSON(r, out) {
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		if s := r.String(string(v)); s != string(v) {
			b, _ := json.Marshal(s)
			return b
		}
		return v
	}
	y, changed := redactValue(r, x)
	if !changed {
		return v
	}
	out, err := json.Marshal(y)
	if err != nil { // cannot happen for decoded JSON; fail closed
		b, _ := json.Marshal(r.String(string(v)))
		return b
	}
	return out
}

func redactValue(r *redact.Redactor, x any) (any, bool) {
	switch v := x.(type) {
	case string:
		s := r.String(v)
		return s, s != v
	case []any:
		changed := false
		for i := range v {
			var c bool
			v[i], c = redactValue(r, v[i])
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		m := make(map[string]any, len(v))
		changed := false
		for k, e := range v {
			k2 := r.String(k)
			e2, c := redactValue(r, e)
			changed = changed || c || k2 != k
			m[k2] = e2
		}
		return m, changed
	}
	return x, false
}

// cleanJSON reports whether the redactor finds nothing in a JSON value
// read as a whole: its string literals decoded, each in its context (see
// redact.Redactor.Redact), which is what the per-string pass of
// redactJSON looks at too. Almost every value is clean, and keeps its
// bytes without being decoded into Go values.
func cleanJSON(r *redact.Redactor, v json.RawMessage) bool {
	_, found := r.Redact(string(v))
	return len(found) == 0
}

// redactMessage masks one message as redactTranscript masks each of a
// transcript's messages.
func redactMessage(r *redact.Redactor, m compact.Message) compact.Message {
	t := redactTranscript(r, compact.Transcript{Messages: []compact.Message{m}})
	return t.Messages[0]
}

// redactMessages returns msgs masked as redactMessage masks each, with
// one pass of the redactor over all of them (redact.Redactor.MaskMessages:
// texts, arguments, targets, image URLs and source records, JSON read
// with its literals decoded) instead of several passes per message. The
// messages that pass leaves as they are hold no secret and are returned
// as they are (shared, not copied); the few it masks, and those whose
// name holds a secret, are masked by redactMessage, so that their stored
// form is the one it gives.
func redactMessages(r *redact.Redactor, msgs []compact.Message) []compact.Message {
	out := slices.Clone(msgs)
	r.MaskMessages(out)
	for i := range out {
		m := &msgs[i]
		if !sameMessage(&out[i], m) || (m.Name != "" && r.String(m.Name) != m.Name) {
			out[i] = redactMessage(r, *m)
		}
	}
	return out
}

// redactShell masks a transcript's fields other than its messages and
// records: tool definitions and the envelope.
func redactShell(r *redact.Redactor, t compact.Transcript) compact.Transcript {
	t.Messages, t.Records = nil, nil
	return redactTranscript(r, t)
}
