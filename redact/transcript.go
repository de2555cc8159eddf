package redact

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact"
)

// MaskMessages masks the secrets of msgs in place, as Transcript masks a
// transcript's messages, without copying the others: each message holding
// a secret is replaced in msgs by a masked copy, and the parts, tool calls
// and records it shared with other slices are never written. Messages
// without a secret stay as they are. A compaction masks the window it only
// reads this way, in a slice of its own, with no copy of every message.
func (r *Redactor) MaskMessages(msgs []compact.Message) []Finding {
	sc := r.NewScope()
	sc.m.reserveTranscript(compact.Transcript{Messages: msgs})
	var all []Finding
	note := func(found []Finding, msg, part int, field string) {
		for _, f := range found {
			f.Message, f.Part, f.Field = msg, part, field
			all = append(all, f)
		}
	}
	for i := range msgs {
		if m, changed := r.maskMessage(msgs[i], i, sc.m, true, note); changed {
			msgs[i] = m
		}
	}
	return all
}

// MaskedCopies masks the secrets of msgs as MaskMessages masks them, but
// writes nothing into msgs and leaves their source records aside (neither
// scanned nor carried): it returns a masked copy, without source records,
// of each message that holds a secret, by its index in msgs, and the
// findings. Reading masked[i] where there is one and msgs[i] otherwise is
// reading the masked messages, with no slice of the window copied; it is
// how a compaction hands its window to the deterministic summarizer.
func (r *Redactor) MaskedCopies(msgs []compact.Message) (map[int]compact.Message, []Finding) {
	sc := r.NewScope()
	for i := range msgs {
		sc.m.reserveParts(&msgs[i])
	}
	var all []Finding
	note := func(found []Finding, msg, part int, field string) {
		for _, f := range found {
			f.Message, f.Part, f.Field = msg, part, field
			all = append(all, f)
		}
	}
	var masked map[int]compact.Message
	for i := range msgs {
		m := msgs[i]
		m.Source = compact.Source{Format: m.Source.Format}
		if m, changed := r.maskMessage(m, i, sc.m, true, note); changed {
			if masked == nil {
				masked = map[int]compact.Message{}
			}
			masked[i] = m
		}
	}
	return masked, all
}

func (r *Redactor) transcript(t compact.Transcript, mk *masker) (compact.Transcript, []Finding) {
	c := t.Clone()
	var all []Finding
	note := func(found []Finding, msg, part int, field string) {
		for _, f := range found {
			f.Message, f.Part, f.Field = msg, part, field
			all = append(all, f)
		}
	}
	for i := range c.Messages {
		c.Messages[i], _ = r.maskMessage(c.Messages[i], i, mk, false, note)
	}
	for i := range c.Records {
		masked, found := r.redactRaw(c.Records[i].Raw, mk)
		c.Records[i].Raw = masked
		note(found, c.Records[i].At, i, "record")
	}
	if len(c.Envelope) > 0 {
		var found []Finding
		c.Envelope, found = r.redactRaw(c.Envelope, mk)
		note(found, 0, 0, "envelope")
	}
	for i := range c.Tools {
		var found []Finding
		c.Tools[i].Description, found = r.redactDoc(c.Tools[i].Description, mk)
		note(found, 0, i, "tool")
		// A schema's descriptions, defaults and enums are written by
		// people, examples and now and then a real key among them.
		if len(c.Tools[i].Parameters) > 0 {
			c.Tools[i].Parameters, found = r.redactRaw(c.Tools[i].Parameters, mk)
			note(found, 0, i, "tool-parameters")
		}
	}
	return c, all
}

// maskMessage masks m's texts, tool-call arguments, image URLs and source
// records. With share, m's parts and records are shared with others: it
// is cloned before its first change. changed reports whether anything was
// masked.
func (r *Redactor) maskMessage(m compact.Message, i int, mk *masker, share bool, note func([]Finding, int, int, string)) (compact.Message, bool) {
	changed, cloned := false, !share
	edit := func() *compact.Message {
		if !cloned {
			m, cloned = m.Clone(), true
		}
		changed = true
		return &m
	}
	for j := range m.Parts {
		p := &m.Parts[j]
		if p.Text != "" {
			text, found := r.redactDoc(p.Text, mk)
			note(found, i, j, partField(p.Type))
			if text != p.Text {
				edit().Parts[j].Text = text
			}
		}
		if p := &m.Parts[j]; p.ToolCall != nil && len(p.ToolCall.Arguments) > 0 {
			args, found := r.redactRaw(p.ToolCall.Arguments, mk)
			note(found, i, j, "arguments")
			if len(found) > 0 {
				edit().Parts[j].ToolCall.Arguments = args
			}
		}
		// The reader's tag repeats what the arguments hold (a command, a
		// path, a URL): masked alike, it gets the same masks.
		if p := &m.Parts[j]; p.ToolCall != nil && p.ToolCall.Target != "" {
			target, found := r.redactDoc(p.ToolCall.Target, mk)
			note(found, i, j, "target")
			if target != p.ToolCall.Target {
				edit().Parts[j].ToolCall.Target = target
			}
		}
		if p := &m.Parts[j]; p.Image != nil && p.Image.URL != "" {
			url, found := r.redactDoc(p.Image.URL, mk)
			note(found, i, j, "image")
			if url != p.Image.URL {
				edit().Parts[j].Image.URL = url
			}
		}
	}
	// The source records hold the same content as read: mask them too,
	// so a writer that reuses them, or a checkpoint that stores them,
	// never carries the secret. A record that is not JSON and had to be
	// masked cannot stay a record without breaking its file: it is
	// dropped (the message is then written from its parts).
	var recs []json.RawMessage
	for j, rec := range m.Source.Records {
		masked, found := r.redactRaw(rec, mk)
		if len(found) == 0 {
			if recs != nil {
				recs = append(recs, rec)
			}
			continue
		}
		if recs == nil {
			recs = append(make([]json.RawMessage, 0, len(m.Source.Records)), m.Source.Records[:j]...)
		}
		if !json.Valid(masked) {
			continue
		}
		note(found, i, j, "source")
		recs = append(recs, masked)
	}
	if recs != nil {
		if len(recs) == 0 {
			recs = nil
		}
		edit().Source.Records = recs
	}
	return m, changed
}

func partField(t compact.PartType) string {
	switch t {
	case compact.PartThinking:
		return "thinking"
	case compact.PartToolResult:
		return "result"
	}
	return "text"
}

// redactRaw masks a raw JSON value, keeping it valid JSON. Raw values come
// from parsed documents and almost never hold a secret: the view that
// reads them validates them on the way, and the check of the output (a
// full parse) runs only for a value where something was found.
func (r *Redactor) redactRaw(raw json.RawMessage, m *masker) (json.RawMessage, []Finding) {
	doc := string(raw)
	v, kind := newJSONView(doc)
	defer v.release()
	spans := r.findInView(doc, v, m)
	if len(spans) == 0 {
		return raw, nil
	}
	if kind != docJSON {
		out, found := r.redactDoc(doc, m) // not JSON after all: mask it as text
		return json.RawMessage(out), found
	}
	out, found := r.apply(doc, spans, m)
	if !validJSON(out) {
		out, found = r.redactLiterals(doc, spans, stringLiterals(doc), m)
	}
	return json.RawMessage(out), found
}

// reserveTranscript notes the masks every string of t already holds.
func (m *masker) reserveTranscript(t compact.Transcript) {
	for i := range t.Messages {
		msg := &t.Messages[i]
		m.reserveParts(msg)
		for _, rec := range msg.Source.Records {
			m.reserveBytes(rec)
		}
	}
	for _, rec := range t.Records {
		m.reserveBytes(rec.Raw)
	}
	m.reserveBytes(t.Envelope)
	for _, tool := range t.Tools {
		m.reserve(tool.Description)
		m.reserveBytes(tool.Parameters)
	}
}

// reserveParts notes the masks the parts of msg already hold.
func (m *masker) reserveParts(msg *compact.Message) {
	for _, p := range msg.Parts {
		m.reserve(p.Text)
		if p.ToolCall != nil {
			m.reserveBytes(p.ToolCall.Arguments)
			m.reserve(p.ToolCall.Target)
		}
	}
}

// reserveBytes is reserve for raw bytes: only those holding a mask are
// converted, so that looking over a transcript's records does not copy
// them all.
func (m *masker) reserveBytes(b []byte) {
	if bytes.Contains(b, []byte(maskKeyword)) {
		m.reserve(string(b))
	}
}
