package redact

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact"
)

// Masked is Transcript without the copy: messages, parts, records and tools
// in which nothing was masked are shared with t, and t's slices themselves
// are returned when nothing in them changed. t is not modified; the result
// must be treated as read-only, as t's bytes are. A compaction redacts a
// window it only reads this way, with no second copy of every message.
func (r *Redactor) Masked(t compact.Transcript) (compact.Transcript, []Finding) {
	sc := r.NewScope()
	sc.m.reserveTranscript(t)
	return r.mask(t, sc.m, true)
}

func (r *Redactor) transcript(t compact.Transcript, mk *masker) (compact.Transcript, []Finding) {
	return r.mask(t, mk, false)
}

// mask masks t's strings; with share, only what changed is copied.
func (r *Redactor) mask(t compact.Transcript, mk *masker, share bool) (compact.Transcript, []Finding) {
	c := t
	if !share {
		c = t.Clone()
	}
	var all []Finding
	note := func(found []Finding, msg, part int, field string) {
		for _, f := range found {
			f.Message, f.Part, f.Field = msg, part, field
			all = append(all, f)
		}
	}
	// own reports whether c's slices are copies yet (always, without share).
	own := [3]bool{!share, !share, !share}
	for i := range t.Messages {
		m, changed := r.maskMessage(c.Messages[i], i, mk, share, note)
		if !changed {
			continue
		}
		if !own[0] {
			c.Messages, own[0] = append([]compact.Message(nil), t.Messages...), true
		}
		c.Messages[i] = m
	}
	for i := range t.Records {
		masked, found := r.redactRaw(c.Records[i].Raw, mk)
		note(found, c.Records[i].At, i, "record")
		if len(found) == 0 {
			continue
		}
		if !own[1] {
			c.Records, own[1] = append([]compact.Record(nil), t.Records...), true
		}
		c.Records[i].Raw = masked
	}
	if len(c.Envelope) > 0 {
		var found []Finding
		c.Envelope, found = r.redactRaw(c.Envelope, mk)
		note(found, 0, 0, "envelope")
	}
	for i := range t.Tools {
		desc, found := r.redactDoc(c.Tools[i].Description, mk)
		note(found, 0, i, "tool")
		if desc == c.Tools[i].Description {
			continue
		}
		if !own[2] {
			c.Tools, own[2] = append([]compact.ToolDef(nil), t.Tools...), true
		}
		c.Tools[i].Description = desc
	}
	return c, all
}

// maskMessage masks m's texts, tool-call arguments, image URLs and source
// records. Unless m is a copy already (share is false), it is cloned
// before its first change; changed reports whether anything was masked.
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
	return m, changed || !share
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
	for _, msg := range t.Messages {
		for _, p := range msg.Parts {
			m.reserve(p.Text)
			if p.ToolCall != nil {
				m.reserveBytes(p.ToolCall.Arguments)
			}
		}
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
